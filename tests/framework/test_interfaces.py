"""The extension points as Protocols: every in-tree plugin is declared against the Protocol of each
extension point it implements, and implements every method of each Protocol it declares (a
Protocol's own method body is an empty stub: inherited, it would answer None, i.e. Success)."""

from __future__ import annotations

import pytest

from kschedcli.framework import interface as i
from kschedcli.framework.result import Explainer
from kschedcli.framework.runtime import Framework
from kschedcli.plugins import REGISTRY

POINTS = {
    "preEnqueue": i.PreEnqueuePlugin,
    "queueSort": i.QueueSortPlugin,
    "preFilter": i.PreFilterPlugin,
    "filter": i.FilterPlugin,
    "postFilter": i.PostFilterPlugin,
    "preScore": i.PreScorePlugin,
    "score": i.ScorePlugin,
    "reserve": i.ReservePlugin,
    "permit": i.PermitPlugin,
    "preBind": i.PreBindPlugin,
    "bind": i.BindPlugin,
    "postBind": i.PostBindPlugin,
}
# optional forms and ksched's hooks: the method that makes a plugin one
OPTIONAL = {
    "add_pod": i.PreFilterExtensions,
    "filter_nodes": i.BatchFilterPlugin,
    "score_nodes": i.BatchScorePlugin,
    "normalize_score": i.ScoreExtensions,
    "explain": Explainer,
    "on_bind": i.BindObserver,
    "clear_caches": i.CacheHolder,
}
PROTOCOLS = set(POINTS.values()) | set(OPTIONAL.values()) | {i.EnqueueExtensions}


def _protocol_methods(proto: type) -> set[str]:
    return {
        m
        for k in proto.__mro__
        if k in PROTOCOLS or k is i.NamedPlugin
        for m, v in vars(k).items()
        if callable(v) and not m.startswith("_")
    }


def test_every_point_has_its_protocol():
    assert set(POINTS) == set(i.EXTENSION_METHODS)
    for point, proto in POINTS.items():
        assert i.EXTENSION_METHODS[point] in _protocol_methods(proto)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_plugin_declares_the_protocols_of_what_it_implements(name):
    cls = REGISTRY[name]
    for point, proto in POINTS.items():
        if cls.implements(point):
            assert proto in cls.__mro__, f"{name} implements {point} without declaring {proto.__name__}"
    for method, proto in OPTIONAL.items():
        if callable(getattr(cls, method, None)):
            assert proto in cls.__mro__, f"{name} has {method} without declaring {proto.__name__}"
    if cls.events_to_register is not i.Plugin.events_to_register:
        assert i.EnqueueExtensions in cls.__mro__, f"{name} registers events without declaring EnqueueExtensions"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_plugin_implements_every_method_it_declares(name):
    cls = REGISTRY[name]
    for proto in set(cls.__mro__) & PROTOCOLS:
        for method in _protocol_methods(proto):
            owner = next(k for k in cls.__mro__ if method in vars(k))
            assert owner not in PROTOCOLS, f"{name} declares {proto.__name__} but {method} is its empty stub"


def test_a_stub_would_be_caught():
    class Lazy(i.Plugin, i.FilterPlugin):
        name = "Lazy"

    owner = next(k for k in Lazy.__mro__ if "filter" in vars(k))
    assert owner is i.FilterPlugin


def test_runtime_finds_the_optional_forms():
    from builders import node, scheduler

    fw: Framework = scheduler([node("n1")]).frameworks["default-scheduler"]
    assert "NodeResourcesFit" in fw.batch_filters and "NodePorts" not in fw.batch_filters
    assert "ImageLocality" in fw.batch_scorers and "NodeAffinity" not in fw.batch_scorers
    assert set(fw.normalizers) == {pl.name for pl in fw.score_plugins if hasattr(pl, "normalize_score")}
    assert "InterPodAffinity" in fw.pre_filter_extensions_of and "NodePorts" not in fw.pre_filter_extensions_of
