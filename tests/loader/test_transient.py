"""loader.transient / freeze_lasting: what a what-if scenario builds is never frozen while it runs
(it would outlive the scenario: the cyclic collector never looks at a frozen object again); a
freeze asked for inside a scenario waits for its end and follows a collection, which frees the
scenario's cycles, so that only what lasts is frozen."""

from __future__ import annotations

import gc
import weakref

from kschedcli.loader import freeze_lasting, transient


class _Node:
    pass


def _cycle() -> weakref.ref:
    n = _Node()
    n.me = n  # type: ignore[attr-defined]
    return weakref.ref(n)


def test_outside_a_scenario_freeze_lasting_freezes():
    kept = [[i] for i in range(50)]
    before = gc.get_freeze_count()
    freeze_lasting()
    assert gc.get_freeze_count() >= before + len(kept)


def test_a_scenario_without_a_freeze_changes_nothing():
    before = gc.get_freeze_count()
    with transient():
        kept = [[i] for i in range(50)]
    assert kept and gc.get_freeze_count() == before


def test_a_freeze_inside_a_scenario_waits_for_its_end_and_its_cycles_are_freed():
    with transient():
        with transient():
            lasting = [[i] for i in range(50)]
            gc.disable()  # no collection of their own before the scenario ends
            try:
                garbage = [_cycle() for _ in range(20)]
                before = gc.get_freeze_count()
                freeze_lasting()  # a scheduler's first cycle, pods made from the cache
                assert gc.get_freeze_count() == before
            finally:
                gc.enable()
        assert gc.get_freeze_count() == before  # an inner block ends: still inside the scenario
    assert all(g() is None for g in garbage)  # collected, not frozen
    assert gc.get_freeze_count() >= before + len(lasting)
    with transient():
        pass
    assert gc.get_freeze_count() >= before + len(lasting)  # the next scenario: nothing asked, nothing done


def test_the_collector_is_paused_for_a_whole_scenario_and_resumed_as_it_was():
    """A scenario's cycles do not each end with collections over its objects (no_gc leaves the
    collector as it found it: paused); the scenario's end resumes it, unless it was paused before."""
    from kschedcli.loader import no_gc

    assert gc.isenabled()
    with transient():
        assert not gc.isenabled()
        with no_gc():
            pass
        assert not gc.isenabled()  # a cycle's end does not resume it inside the scenario
        with transient():
            pass
        assert not gc.isenabled()  # nor does an inner block's
    assert gc.isenabled()
    gc.disable()
    try:
        with transient():
            pass
        assert not gc.isenabled()  # paused before: stays paused
    finally:
        gc.enable()
