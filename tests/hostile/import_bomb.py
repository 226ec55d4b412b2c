"""A module that fails at import, as an agent with a missing dependency or key does (SYNTHETIC)."""

raise RuntimeError("model key not configured")
