"""The controllers' pod naming and template hashing (see workloads.py's docstring for what is
followed from kubernetes and where ksched departs: the name suffix is drawn from a hash, not at random)."""

from __future__ import annotations

import json

_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_MAX_GENERATED_PREFIX = 63 - 5


# -- the controllers' naming -----------------------------------------------------------------------


def safe_encode(s: str) -> str:
    """rand.SafeEncodeString: each character mapped onto the alphabet without vowels."""
    return "".join(_ALPHANUMS[ord(ch) % len(_ALPHANUMS)] for ch in s)


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def template_hash(template: dict, collision_count: int | None = None) -> str:
    """controller.ComputeHash's form: FNV-32a of the template, then the collision count as 8
    little-endian bytes (its low 4 written), the decimal sum written with SafeEncodeString. The
    template is read as canonical JSON (see the module's docstring)."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    raw = data.encode("utf-8")
    if collision_count is not None:
        raw += (collision_count & 0xFFFFFFFF).to_bytes(4, "little") + b"\0\0\0\0"
    return safe_encode(str(fnv32a(raw)))


def generated_name(prefix: str, identity: str, index: int, taken: set[str] | None = None, namespace: str = "") -> str:
    """names.SimpleNameGenerator: the prefix cut to 58 characters and 5 characters of the
    generator's alphabet. The characters come from SHA-256 of (identity, index) read 5 bits at a
    time, skipping values past the alphabet as rand.String does, so the same input names the same
    pods; a name already `taken` (keys NAMESPACE/NAME) draws again, as the API server retries on a conflict."""
    import hashlib  # here: OpenSSL's module costs each run that names no pod

    base = prefix[:_MAX_GENERATED_PREFIX]
    attempt = 0
    while True:
        digest = hashlib.sha256(f"{identity}\0{index}\0{attempt}".encode()).digest()
        bits = int.from_bytes(digest, "big")
        out: list[str] = []
        while len(out) < 5 and bits:
            idx = bits & 31
            bits >>= 5
            if idx < len(_ALPHANUMS):
                out.append(_ALPHANUMS[idx])
        name = base + "".join(out)
        if taken is None or f"{namespace}/{name}" not in taken:
            return name
        attempt += 1
