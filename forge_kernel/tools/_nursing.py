"""Nursing rules: dwell limits of devices and intervals of nursing services (synthetic table; not clinical advice)."""

from __future__ import annotations

from functools import cache

from pydantic import Field

from .base import Args, ToolContext, ToolError, tool
from .knowledge import table


def normalized(name: str) -> str:
    """A name for look-ups: trimmed, lower-cased, full-width brackets as ASCII ones."""
    return name.strip().lower().replace("（", "(").replace("）", ")")


@cache
def rule_names() -> dict[str, dict]:
    """Normalized type or alias -> its row of ``tables/device_rules.yaml``."""
    return {normalized(alias): row for row in table("device_rules") for alias in [row["type"], *row.get("aliases", [])]}


class DeviceRuleArgs(Args):
    type: str = Field(
        description="Device or nursing item, as device_list names it, e.g. 留置导尿管, 鼻胃管（硅胶）, 术后伤口."
    )


@tool("device_rules", kind="compute")
def device_rules(ctx: ToolContext, args: DeviceRuleArgs) -> dict:
    """The nursing rule of a device or nursing item: when the action is due, what it is, and the signs that
    make it due earlier, defer it, or need a physician (synthetic table)."""
    row = rule_names().get(normalized(args.type))
    if row is None:
        known = ", ".join(r["type"] for r in table("device_rules"))
        raise ToolError("not_found", f"no nursing rule for {args.type!r}; known: {known}")
    return {key: value for key, value in row.items() if key != "aliases"}
