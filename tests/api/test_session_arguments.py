"""The public API's arguments are checked where a caller hands them in: a value of the wrong
Python type is a TypeError naming the method and the argument (not an AttributeError or a
TypeError from deep inside), a value the command line would refuse is its InputError naming the
flag, and a count the command line bounds (--replicas) is bounded here too, rather than
building objects until memory runs out."""

from __future__ import annotations

from pathlib import Path

import pytest

from kschedcli import ClusterSource, InputError, Session

ROOT = Path(__file__).resolve().parents[2]
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")
STATEFULSET = str(ROOT / "fixtures" / "workloads" / "warehouse-statefulset.yaml")


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: Session(123), "the cluster"),
        (lambda: Session([None]), "the cluster"),
        (lambda: Session(b"snapshot.yaml"), "the cluster"),
        (lambda: Session(SMALL, options={"cache": False}), "Session: options"),
        (lambda: Session(SMALL, messages=5), "Session: messages"),
        (lambda: Session(SMALL, validate=None), "Options: validate"),
        (lambda: Session(SMALL, config=123), "Options: config"),
        (lambda: Session(SMALL, profile=5), "Options: profile"),
        (lambda: Session(SMALL, edits=["--cordon=node-a"]), "Options: edits"),
        (lambda: Session(SMALL, edits=5), "Options: edits"),
        (lambda: Session(SMALL).explain(None), "Session.explain: pod"),
        (lambda: Session(SMALL).explain(123), "Session.explain: pod"),
        (lambda: Session(SMALL).explain(WEB, replicas="3"), "Session.explain: replicas"),
        (lambda: Session(SMALL).explain(WEB, seed="x"), "Session.explain: seed"),
        (lambda: Session(SMALL).explain(WEB, fixes=None), "Session.explain: fixes"),
        (lambda: Session(SMALL).explain(WEB, node=5), "Session.explain: node"),
        (lambda: Session(SMALL).fixes(None), "Session.fixes: explanation"),
        (lambda: Session(SMALL).schedule(123), "Session.schedule: pods"),
        (lambda: Session(SMALL).schedule(namespace=5), "Session.schedule: namespace"),
        (lambda: Session(SMALL).capacity(None), "Session.capacity: templates"),
        (lambda: Session(SMALL).capacity([WEB], group_by=[5]), "Session.capacity: group_by"),
        (lambda: Session(SMALL).drain([None]), "Session.drain: nodes"),
        (lambda: Session(SMALL).scale_down(threshold="0.5"), "Session.scale_down: threshold"),
        (lambda: Session(SMALL).sweep(fail="node", workers="2"), "Session.sweep: workers"),
        (lambda: Session(SMALL).sweep(fail="node", top=None), "Session.sweep: top"),
        (lambda: Session(SMALL).diff(WEB, against_cluster=5), "Session.diff: against_cluster"),
        (lambda: Session(SMALL).diff(WEB, against_config=5), "Session.diff: against_config"),
        (lambda: Session(SMALL).run_scenario(None), "Session.run_scenario: scenario"),
    ],
)
def test_an_argument_of_the_wrong_type_is_a_type_error_naming_it(call, named):
    with pytest.raises(TypeError, match=f"^{named}: expected"):
        call()


@pytest.mark.parametrize(
    ("call", "flag"),
    [
        (lambda: Session(SMALL).explain(STATEFULSET, replicas=10**12), "--replicas: must be at most 150,000"),
        (lambda: Session(SMALL).schedule(STATEFULSET, replicas=200_000), "--replicas: must be at most 150,000"),
        (lambda: Session(SMALL).schedule(STATEFULSET, replicas=-3), "--replicas: must be at least 0"),
        (lambda: Session(SMALL).explain(WEB, replica=-5), "--replica: must be at least 0"),
        (lambda: Session(SMALL).explain(WEB, fixes=-1), "--fixes: must be at least 0"),
        (lambda: Session(SMALL).capacity([WEB], max_copies=-1), "--max: must be at least 0"),
        (lambda: Session(SMALL).schedule(WEB, order="bogus"), "--order: 'bogus' is not one of priority, file"),
        (lambda: Session(SMALL).schedule(WEB, preemption="evict"), "--preemption: 'evict' is not one of"),
        (lambda: Session(SMALL).schedule(WEB, detail="wide"), "--detail: 'wide' is not one of compact, full"),
    ],
)
def test_a_value_the_command_line_refuses_is_its_input_error(call, flag):
    with pytest.raises(InputError, match=f"^{flag}"):
        call()


def test_a_lone_path_or_name_is_one_not_its_characters():
    assert ClusterSource(files=SMALL).files == (SMALL,)  # was ('/', 'w', 'o', ...)
    assert ClusterSource.of(Path(SMALL)).files == (SMALL,)
    s = Session(SMALL)
    assert s.capacity(WEB, max_copies=2).replicas == s.capacity([WEB], max_copies=2).replicas
    assert s.drain("node-a").to_dict() == s.drain(["node-a"]).to_dict()  # was: no node named 'n'
    assert Session(SMALL, edits=None).options.edits == ()
    assert s.explain(Path(WEB)).node == s.explain(WEB).node
