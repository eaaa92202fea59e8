"""PreemptionResult.not_helpful as PostFilter makes it: a mapping made into a dict when first read."""

import pickle

from kschedcli.framework.result import NodeWhys


def test_node_whys_reads_as_the_dict_of_the_nodes_with_a_why_in_node_order():
    names = ["n0", "n1", "n2", "n3", "n4"]
    whys = ["tainted", None, "too small", None, "tainted"]
    m = NodeWhys(names, whys)
    # set before the first read: an existing node's why replaced in place, a new one last
    m["n2"] = "dry run failed"
    m["n3"] = "dropped by an extender"
    want = {"n0": "tainted", "n2": "dry run failed", "n4": "tainted", "n3": "dropped by an extender"}
    assert list(m.items()) == list(want.items())
    assert m == want and len(m) == 4 and "n1" not in m and m.get("n1") is None
    m["n1"] = "late"  # after it was read
    del m["n0"]
    assert list(m) == ["n2", "n4", "n3", "n1"]
    assert pickle.loads(pickle.dumps(m)) == m


def test_node_whys_without_any_why_is_empty():
    m = NodeWhys(["a", "b"], [None, None])
    assert not m and dict(m) == {}
