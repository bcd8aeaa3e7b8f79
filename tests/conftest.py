from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SEEDS = SHARED / "seeds"
EXAMPLES = ROOT / "examples" / "corpus"

settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason="../shared/seeds is not present")


@pytest.fixture(scope="session")
def policy():
    from corpus_hygiene.checks import load_policy

    return load_policy()


def signal_columns(text: str, lang: str = "en") -> dict:
    """The records table's signal columns for ``text``, as the pipeline computes them."""
    from corpus_hygiene.signals import signals_of

    return {**signals_of(text, lang).columns(), "lost_words": []}
