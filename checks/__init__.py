"""The quality contract: the policy file (thresholds a user edits) and the checks built from it.

Importable as ``corpus_hygiene.checks`` from the source tree and from an installed wheel.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_POLICY_PATH = Path(__file__).with_name("policy.toml")


@dataclass(frozen=True, slots=True)
class Policy:
    max_file_bytes: int
    min_chars: int
    max_chars: int
    sha256: str  # of the policy file's bytes: goes into the manifest
    path: str
    dedup: dict = field(default_factory=dict)  # DedupConfig fields; missing ones take its defaults

    def dedup_config(self):
        from corpus_hygiene.dedup.config import DedupConfig

        return DedupConfig(**self.dedup)


class PolicyError(Exception):
    """The policy file is missing a value or has one of the wrong type."""


def load_policy(path: Path | str | None = None) -> Policy:
    policy_path = Path(path) if path else DEFAULT_POLICY_PATH
    raw = policy_path.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
        policy = Policy(
            max_file_bytes=int(float(data["ingest"]["max_file_mb"]) * 1024 * 1024),
            min_chars=int(data["record"]["min_chars"]),
            max_chars=int(data["record"]["max_chars"]),
            sha256=hashlib.sha256(raw).hexdigest(),
            path=str(policy_path),
            dedup=dict(data.get("dedup", {})),
        )
    except (KeyError, TypeError, ValueError, tomllib.TOMLDecodeError) as exc:
        raise PolicyError(
            f"policy file {policy_path} is invalid: {exc!r}; compare with {DEFAULT_POLICY_PATH}"
        ) from exc
    if not 0 < policy.min_chars < policy.max_chars:
        raise PolicyError(f"policy file {policy_path}: need 0 < record.min_chars < record.max_chars")
    try:
        policy.dedup_config()
    except (TypeError, ValueError) as exc:
        raise PolicyError(f"policy file {policy_path}: [dedup] is invalid: {exc}") from exc
    return policy
