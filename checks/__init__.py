"""The quality contract: the policy a user edits, the named checks built from it, the table schemas
of the output contract, and the dataset gates.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from corpus_hygiene.dedup.config import DedupConfig

DEFAULT_POLICY_PATH = Path(__file__).with_name("policy.toml")


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
    max_paragraph_chars: int = 200_000  # longer input paragraphs are quarantined unread (oversized_record)
    quality: dict = field(default_factory=dict)  # [quality] table: limits on signals.py's signals
    contacts: str = "keep"  # e-mails and phone numbers in a text: keep, mask or quarantine
    reference: dict = field(default_factory=dict)  # [reference] table; its paths absolute

    def reference_paths(self) -> list[str]:
        return list(self.reference.get("paths", ()))

    def file_limit(self, max_file_mb: float | None = None) -> int:
        """Largest file read, in bytes: ``max_file_mb`` (the command line's) when given, else the policy's."""
        return int(max_file_mb * 1024 * 1024) if max_file_mb else self.max_file_bytes

    def dedup_config(self):
        return _dedup_config(tuple(sorted(self.dedup.items())))

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


@lru_cache(maxsize=8)
def _dedup_config(items: tuple):
    """A policy's DedupConfig, made once: every paragraph of a run asks for it."""
    return DedupConfig(**dict(items))


MAX_POLICY_BYTES = 1 << 20


def read_policy_bytes(path: Path) -> bytes:
    """The policy file's bytes. A pipe (``--policy <(…)``) or FIFO is read without waiting for a writer
    that may never come (opened non-blocking: with no writer it reads as empty); a device that never
    ends (``/dev/zero``) stops at MAX_POLICY_BYTES."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= MAX_POLICY_BYTES and (chunk := os.read(fd, 1 << 16)):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > MAX_POLICY_BYTES:
        raise PolicyError(f"policy file {path} is larger than {MAX_POLICY_BYTES:,} bytes")
    if size == 0:
        raise PolicyError(f"policy file {path} is empty")
    return b"".join(chunks)


def load_policy(path: Path | str | None = None) -> Policy:
    """Read and check the policy file (``policy_model.PolicyFile``): an unknown key, a value of the wrong
    type or out of range is a PolicyError naming the file, line and key, before any work starts."""
    from pydantic import ValidationError

    from checks.policy_model import PolicyFile, describe

    policy_path = Path(path) if path else DEFAULT_POLICY_PATH
    try:
        raw = read_policy_bytes(policy_path)
    except OSError as exc:
        raise PolicyError(f"cannot read policy file {policy_path}: {exc.strerror}") from exc
    try:
        text = raw.decode("utf-8")
        model = PolicyFile.model_validate(tomllib.loads(text))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PolicyError(f"policy file {policy_path} is not valid TOML: {exc}") from exc
    except ValidationError as exc:
        problems = describe(exc, text, str(policy_path))
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise PolicyError(problems[0] + more) from exc
    policy = Policy(
        max_file_bytes=int(model.ingest.max_file_mb * 1024 * 1024),
        min_chars=model.record.min_chars,
        max_chars=model.record.max_chars,
        sha256=hashlib.sha256(raw).hexdigest(),
        path=str(policy_path),
        dedup=model.dedup.model_dump(),
        checks=model.checks.model_dump(),
        gates=model.gates.model_dump(),
        stream_above_bytes=int(model.ingest.stream_above_mb * 1024 * 1024),
        max_lost_words=model.record.max_lost_words,
        max_paragraph_chars=model.record.max_paragraph_chars,
        quality=model.quality.model_dump(),
        contacts=model.contacts.action,
        # a reference's path is read from the policy file's folder, wherever the run starts
        reference=model.reference.model_dump()
        | {"paths": [str(policy_path.parent / p) for p in model.reference.paths]},
    )
    try:
        policy.dedup_config()
    except (TypeError, ValueError) as exc:
        raise PolicyError(f"policy file {policy_path}: [dedup] is invalid: {exc}") from exc
    return policy
