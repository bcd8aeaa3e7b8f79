"""The quality contract: the policy a user edits, the named checks built from it, the table schemas
of the output contract, and the dataset gates.

Importable as ``corpus_hygiene.checks`` from the source tree and from an installed wheel.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_POLICY_PATH = Path(__file__).with_name("policy.toml")


QUALITY_LIMITS = (
    "min_words",
    "min_mean_word_length",
    "max_mean_word_length",
    "min_alpha_share",
    "min_stopword_share",
    "max_repeated_ngram_share",
    "max_urls",
)
CONTACT_ACTIONS = ("keep", "mask", "quarantine")


class PolicyError(Exception):
    """The policy file is missing a value or has one of the wrong type."""


@dataclass(frozen=True, slots=True)
class Policy:
    max_file_bytes: int
    min_chars: int
    max_chars: int
    sha256: str  # of the policy file's bytes: goes into the manifest
    path: str
    dedup: dict = field(default_factory=dict)  # DedupConfig fields; missing ones take its defaults
    checks: dict = field(default_factory=dict)  # [checks] table
    gates: dict = field(default_factory=dict)  # [gates] table
    stream_above_bytes: int = 64 << 20  # larger files are read in batches, never whole
    max_lost_words: int = 0  # words cleaning may remove that were not markup (clean/loss.py)
    quality: dict = field(default_factory=dict)  # [quality] table: limits on signals.py's signals
    contacts: str = "keep"  # e-mails and phone numbers in a text: keep, mask or quarantine

    def file_limit(self, max_file_mb: float | None = None) -> int:
        """Largest file read, in bytes: ``max_file_mb`` (the command line's) when given, else the policy's."""
        return int(max_file_mb * 1024 * 1024) if max_file_mb else self.max_file_bytes

    def dedup_config(self):
        from corpus_hygiene.dedup.config import DedupConfig

        return DedupConfig(**self.dedup)

    def check_params(self) -> dict:
        """Every value a record check may read, by name."""
        params = dict(
            self.checks,
            **self.quality,
            min_chars=self.min_chars,
            max_chars=self.max_chars,
            max_lost_words=self.max_lost_words,
            contacts=self.contacts,
        )
        params["placeholders"] = frozenset(p.casefold() for p in self.checks.get("placeholders", ()))
        return params


def load_policy(path: Path | str | None = None) -> Policy:
    policy_path = Path(path) if path else DEFAULT_POLICY_PATH
    try:
        raw = policy_path.read_bytes()
    except OSError as exc:
        raise PolicyError(f"cannot read policy file {policy_path}: {exc.strerror}") from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
        policy = Policy(
            max_file_bytes=int(float(data["ingest"]["max_file_mb"]) * 1024 * 1024),
            min_chars=int(data["record"]["min_chars"]),
            max_chars=int(data["record"]["max_chars"]),
            sha256=hashlib.sha256(raw).hexdigest(),
            path=str(policy_path),
            dedup=dict(data.get("dedup", {})),
            checks=dict(data["checks"]),
            gates=dict(data["gates"]),
            stream_above_bytes=int(float(data["ingest"].get("stream_above_mb", 64)) * 1024 * 1024),
            max_lost_words=int(data["record"]["max_lost_words"]),
            quality={key: float(data["quality"][key]) for key in QUALITY_LIMITS},
            contacts=str(data["contacts"]["action"]),
        )
        for key in (
            "year_min",
            "year_max",
            "repetition_min_words",
            "min_distinct_word_ratio",
            "placeholder_max_chars",
            "placeholders",
        ):
            policy.checks[key]  # noqa: B018 - presence check, KeyError below names it
        for key in ("min_records", "max_quarantine_share", "max_duplicate_share"):
            policy.gates[key]  # noqa: B018
    except (KeyError, TypeError, ValueError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PolicyError(
            f"policy file {policy_path} is invalid ({type(exc).__name__}: {exc}); "
            f"compare with {DEFAULT_POLICY_PATH}"
        ) from exc
    if policy.contacts not in CONTACT_ACTIONS:
        raise PolicyError(
            f"policy file {policy_path}: contacts.action is {policy.contacts!r}; "
            f"use one of {', '.join(CONTACT_ACTIONS)}"
        )
    if not 0 < policy.min_chars < policy.max_chars:
        raise PolicyError(f"policy file {policy_path}: need 0 < record.min_chars < record.max_chars")
    try:
        policy.dedup_config()
    except (TypeError, ValueError) as exc:
        raise PolicyError(f"policy file {policy_path}: [dedup] is invalid: {exc}") from exc
    return policy
