"""Stable seeds for every random choice of the speech channel.

Python's ``hash`` is salted per process, so a schedule seeded with it (as τ-Voice's are) is
different on every run; here a seed is the first 8 bytes of a BLAKE2b digest of its parts,
the same in every process, on every machine, in every run.
"""

from __future__ import annotations

import hashlib

import numpy as np


def stable_seed(*parts: object) -> int:
    """A 63-bit seed from the parts' text (``repr`` of non-strings), stable across processes."""
    text = "\x1f".join(p if isinstance(p, str) else repr(p) for p in parts)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big") >> 1


def rng_for(*parts: object) -> np.random.Generator:
    """A numpy generator seeded from :func:`stable_seed` of the parts."""
    return np.random.default_rng(stable_seed(*parts))
