"""DRA selectors are bounded as kube-scheduler bounds them: cel-go's runtime cost limit
(resourceapi.CELSelectorExpressionMaxCost, 1,000,000) stops a selector with
`operation cancelled: actual cost limit exceeded` (issue 29)."""

from __future__ import annotations

from test_dra import GPU, _dev, _two_nodes, claim, claim_pod, device_class, exactly

from kschedcli.dra import cel
from kschedcli.framework.status import ERROR

TEN = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"


def _nested(depth: int) -> str:
    expr = "true"
    for i in range(depth):
        expr = f"{TEN}.all(x{i}, {expr})"
    return expr


def test_a_comprehension_over_ten_million_elements_is_stopped_at_the_cost_limit():
    # 10^7 iterations, each costing cel-go at least 1: past the limit (10^8 would take the bindings
    # minutes, with nothing to stop them)
    s = cel.selector(_nested(7))
    try:
        s.matches(_dev())
    except cel.CelError as e:
        assert (e.message, e.compile_error) == ("operation cancelled: actual cost limit exceeded", False)
    else:
        raise AssertionError("not stopped")


def test_small_comprehensions_still_run():
    assert cel.selector(_nested(2)).matches(_dev()) is True
    assert cel.selector('["a100", "h100"].exists(m, device.attributes["gpu.example.com"].model == m)').matches(_dev())


def test_a_string_doubled_towards_a_gigabyte_is_stopped_before_it_is_built():
    # 64 * 2^18 characters, 17 million; 30 doublings would make 64 GiB: cel-go's cost for reading and
    # writing strings passes the limit at a few million characters
    expr = '"' + "a" * 64 + '"' + '.replace("a", "aa")' * 18 + ".size() > 0"
    try:
        cel.selector(expr).matches(_dev())
    except cel.CelError as e:
        assert e.message == "operation cancelled: actual cost limit exceeded"
    else:
        raise AssertionError("not stopped")
    # a few doublings are cheap and evaluate as written
    assert cel.selector('"ab".replace("a", "aa").replace("a", "aa") == "aaaab"').matches(_dev()) is True


def test_the_cost_is_counted_per_evaluation():
    # each device's evaluation starts with the whole budget
    expr = '"' + "a" * 1000 + '".replace("a", "bb").size() == 2000'
    s = cel.selector(expr)
    for _ in range(5):
        s.verdicts.clear()
        assert s.matches(_dev()) is True


def test_the_scheduler_reports_the_cost_limit_as_kube_scheduler_does():
    bad = device_class("costly", _nested(7))
    s = _two_nodes([bad, claim("c", exactly("gpu", "costly"))])
    r = s.schedule(claim_pod("p", "c"))
    st = r.filters["n1"].plugins["DynamicResources"]
    assert st.code == ERROR
    assert st.reasons == [
        'running "DynamicResources" filter plugin: class costly: selector #0: '
        "CEL runtime error: operation cancelled: actual cost limit exceeded"
    ]
    assert GPU  # the fixture's driver
