import pytest

from kschedcli.api.labels import parse_label_selector, parse_node_selector
from kschedcli.errors import FieldError


def test_nil_selector_matches_nothing_and_empty_matches_everything():
    assert not parse_label_selector(None, "s").matches({"a": "b"})
    assert parse_label_selector({}, "s").matches({"a": "b"})


def test_match_labels_and_expressions_are_anded():
    sel = parse_label_selector(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "NotIn", "values": ["db"]},
                {"key": "env", "operator": "Exists"},
            ],
        },
        "s",
    )
    assert sel.matches({"app": "web", "env": "prod"})
    assert not sel.matches({"app": "web", "env": "prod", "tier": "db"})
    assert not sel.matches({"app": "web"})


def test_invalid_selector_names_the_field():
    with pytest.raises(FieldError) as e:
        parse_label_selector({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}, "spec.sel")
    assert e.value.field == "spec.sel.matchExpressions[0].values"
    with pytest.raises(FieldError):
        parse_label_selector({"matchExpressions": [{"key": "a", "operator": "Like"}]}, "s")


def test_node_selector_gt_lt_and_fields():
    ns = parse_node_selector(
        {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["4"]}]},
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n9"]}]},
            ]
        },
        "f",
    )
    assert ns.matches({"cores": "8"}, "n1")
    assert not ns.matches({"cores": "4"}, "n1")
    assert not ns.matches({"cores": "x"}, "n1")
    assert ns.matches({}, "n9")


def test_empty_node_selector_term_matches_nothing():
    ns = parse_node_selector({"nodeSelectorTerms": [{}]}, "f")
    assert not ns.matches({"a": "b"}, "n")
