"""NodeStatuses (NodeToStatus): the filter pass hands over its statuses as a list in node
order; asked by name, they read as the explicit dict kube-scheduler keeps."""

from kschedcli.framework.fit_error import fit_error_message
from kschedcli.framework.runtime import NodeStatuses
from kschedcli.framework.status import UNRESOLVABLE, UNSCHEDULABLE, Status


def _positional():
    names = ["a", "b", "c", "d"]
    cpu = Status(UNSCHEDULABLE, "Insufficient cpu")
    taint = Status(UNRESOLVABLE, "node(s) had untolerated taint {x: y}")
    statuses = NodeStatuses()
    statuses.set_in_order(names, [cpu, None, taint, cpu])
    return names, statuses, cpu, taint


def test_statuses_in_node_order_read_as_the_explicit_dict_of_the_nodes_with_one():
    names, statuses, cpu, taint = _positional()
    assert len(statuses) == 3
    assert statuses.values() == [cpu, taint, cpu]
    assert statuses.get("b") is statuses.absent
    assert statuses.get("c") is taint
    assert statuses.explicit == {"a": cpu, "c": taint, "d": cpu}
    assert list(statuses.explicit) == ["a", "c", "d"]


def test_in_order_gives_the_absent_status_to_nodes_without_one():
    names, statuses, cpu, taint = _positional()
    got = statuses.in_order(names)
    assert got == [cpu, statuses.absent, taint, cpu]
    # another list of names (even an equal one) is looked up by name
    assert statuses.in_order(["d", "b"]) == [cpu, statuses.absent]


def test_a_status_set_by_name_after_the_filter_pass_joins_the_others():
    names, statuses, cpu, taint = _positional()
    extender = Status(UNRESOLVABLE, "rejected by the extender")
    statuses.set("b", extender)
    assert len(statuses) == 4
    assert statuses.in_order(names) == [cpu, extender, taint, cpu]
    assert statuses.values() == [cpu, taint, cpu, extender]


def test_the_fit_error_counts_the_same_from_either_form():
    names, positional, cpu, taint = _positional()
    by_name = NodeStatuses()
    by_name.explicit = {"a": cpu, "c": taint, "d": cpu}
    want = "0/5 nodes are available: 1 node(s) had untolerated taint {x: y}, 2 Insufficient cpu, 2 reason-absent."
    by_name.absent = positional.absent = Status(UNRESOLVABLE, "reason-absent")
    assert fit_error_message(5, "", positional, "") == want
    assert fit_error_message(5, "", by_name, "") == want
