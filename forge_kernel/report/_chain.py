"""What signing, verifying and the report's sign-off section share: digests, a reviewer's public key, and the links
and head of the chain of signatures (``signoff.py``)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..spec import SpecError, canonical_json

KEY_KIND = "forge-ed25519"


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def digest(value) -> str:
    return sha256(canonical_json(value).encode())


@dataclass(frozen=True)
class PublicKey:
    """A reviewer's public key, as one line ``forge-ed25519 <base64> <reviewer>``."""

    reviewer: str
    key: str
    """The raw key, base64."""

    @property
    def line(self) -> str:
        return f"{KEY_KIND} {self.key} {self.reviewer}"

    @property
    def fingerprint(self) -> str:
        return sha256(base64.b64decode(self.key))[:23]

    @classmethod
    def parse(cls, line: str, file: object) -> PublicKey:
        kind, _, rest = line.strip().partition(" ")
        key, _, reviewer = rest.partition(" ")
        if kind != KEY_KIND or not key or not reviewer.strip():
            raise SpecError(file, "(line)", f"not a reviewer key: expected '{KEY_KIND} <key> <reviewer>'")
        return cls(reviewer.strip(), key)

    def verifies(self, signature: str, message: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(base64.b64decode(self.key)).verify(base64.b64decode(signature), message)
        except (InvalidSignature, ValueError):
            return False
        return True


def link(signatures: list[dict]) -> str | None:
    """What the next signature follows: the digest of the last entry, or None (the genesis) when there is none."""
    return digest(signatures[-1]) if signatures else None


def chain_head(signatures: list[dict]) -> str:
    """The chain's length and the digest of its last entry, as ``forge signoff`` and ``forge verify`` print it."""
    return f"{len(signatures)} signature{'s' * (len(signatures) != 1)}, head {link(signatures)}"


def decision_text(statement: dict) -> str:
    return statement["decision"] + (f" #{statement['withdraws']}" if "withdraws" in statement else "")


def standing(signed: dict[int, dict]) -> dict[int, dict]:
    """The approvals and rejections among ``signed`` (by number) that no withdrawal among them withdraws."""
    withdrawn = {entry["statement"].get("withdraws") for entry in signed.values()}
    return {
        n: entry for n, entry in signed.items() if entry["statement"]["decision"] != "withdraw" and n not in withdrawn
    }
