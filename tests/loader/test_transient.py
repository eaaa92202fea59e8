"""loader.transient / freeze_lasting: what a what-if scenario builds is never frozen (it would
outlive the scenario: the cyclic collector never looks at a frozen object again); a freeze asked
for good inside a scenario (pods made from the snapshot cache) waits for its end, after a
collection has freed the scenario's cycles."""

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


def test_a_scenarios_cycles_are_not_frozen_and_are_collected():
    with transient():
        garbage = _cycle()
        before = gc.get_freeze_count()
        freeze_lasting()  # a scheduler's first cycle inside the scenario
        assert gc.get_freeze_count() == before
    assert gc.get_freeze_count() == before
    gc.collect()
    assert garbage() is None


def test_a_freeze_for_good_waits_for_the_scenarios_end():
    with transient():
        with transient():
            lasting = [[i] for i in range(50)]
            garbage = _cycle()
            before = gc.get_freeze_count()
            freeze_lasting(for_good=True)
        assert gc.get_freeze_count() == before  # an inner block ends: still inside the scenario
    assert gc.get_freeze_count() >= before + len(lasting)
    assert garbage() is None  # collected before the freeze, not frozen with what lasts
