"""The collector around long-lived data: paused while it is built, frozen after, handed back at the end."""

import gc

import pytest

from corpus_hygiene.gc_policy import freeze_alive, long_lived, release_long_lived


@pytest.fixture(autouse=True)
def _collector_as_before():
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    (gc.enable if enabled else gc.disable)()


def test_the_block_runs_paused_and_what_it_built_is_frozen_after():
    gc.unfreeze()
    with long_lived():
        assert not gc.isenabled()
        rows = [{"text": str(i)} for i in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(rows)
    release_long_lived()
    assert gc.get_freeze_count() == 0


def test_freeze_alive_moves_what_is_alive_and_a_disabled_collector_stays_disabled():
    gc.unfreeze()
    batch = [{"text": str(i)} for i in range(1000)]
    freeze_alive()
    assert gc.get_freeze_count() >= len(batch)
    gc.disable()
    with long_lived():
        pass
    assert not gc.isenabled()


def test_an_error_in_the_block_still_restores_the_collector():
    with pytest.raises(ValueError), long_lived():
        raise ValueError("stage failed")
    assert gc.isenabled() and gc.get_freeze_count() > 0


def test_the_flow_hands_frozen_objects_back_even_when_it_fails():
    from corpus_hygiene.flows.hygiene import hygiene_flow

    gc.freeze()
    assert gc.get_freeze_count() > 0
    with pytest.raises(Exception):  # noqa: B017 - outside a flow run it fails at once (no run context)
        hygiene_flow.fn("no-such-folder")
    assert gc.get_freeze_count() == 0
