"""Fidelity audit of the core plugins, config, labels and quantities against kube-scheduler v1.34.1.

Each test pins one behaviour where ksched used to differ from the Go source it names.
"""

import pytest
from builders import fresh_state, node, plugin, pod, scheduler

from kschedcli.api import quantity
from kschedcli.api.labels import label_value_errors, parse_node_selector, qualified_name_errors, valid_label_key
from kschedcli.config.argsvalidation import validate_args
from kschedcli.config.scheduler import build_profile, load_config
from kschedcli.errors import FieldError, InputError
from kschedcli.framework.status import ERROR, SKIP, UNRESOLVABLE, UNSCHEDULABLE
from kschedcli.plugins import REGISTRY
from kschedcli.plugins.helper import default_normalize_score
from kschedcli.plugins.noderesources.resource_allocation import _go_round, balanced_scorer


def _cfg(tmp_path, body):
    p = tmp_path / "config.yaml"
    p.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body)
    return str(p)


# ---------------------------------------------------------------- plugins/helper


def test_default_normalize_score_max_starts_at_zero():
    # helper/normalize_score.go DefaultNormalizeScore: maxCount starts at 0, so only-negative
    # scores take the all-zero branch (reverse: every node gets maxPriority)
    scores = {"a": -3, "b": -1}
    default_normalize_score(scores, reverse=True)
    assert scores == {"a": 100, "b": 100}
    scores = {"a": -3, "b": -1}
    default_normalize_score(scores, reverse=False)
    assert scores == {"a": -3, "b": -1}


# ---------------------------------------------------------------- NodeAffinity


def _affinity_pod(name, node_affinity):
    return pod(name, spec={"affinity": {"nodeAffinity": node_affinity}})


def test_node_affinity_prescore_skips_only_without_a_preferred_list():
    # node_affinity.go PreScore: Skip iff the pod's preferred list is nil and no addedAffinity
    # preferred terms; an empty list (or weight-0 terms) still scores, 0 everywhere
    s = scheduler([node("n1"), node("n2")])
    pl = plugin(s, "NodeAffinity")
    assert pl.pre_score(fresh_state(), pod("p"), []).code == SKIP
    for na in (
        {"preferredDuringSchedulingIgnoredDuringExecution": []},
        {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
            ]
        },
    ):
        p = _affinity_pod("q", na)
        state = fresh_state()
        assert pl.pre_score(state, p, []) is None
        assert pl.score(state, p, s.snapshot.get("n1")) == (0, None)


def test_node_affinity_added_preferred_of_weight_zero_still_scores():
    # New(): a non-empty addedAffinity preferred list builds the scorer (PreScore never skips)
    s = scheduler(
        [node("n1")],
        profile={
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeAffinity",
                    "args": {
                        "addedAffinity": {
                            "preferredDuringSchedulingIgnoredDuringExecution": [
                                {"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
                            ]
                        }
                    },
                }
            ],
        },
    )
    assert plugin(s, "NodeAffinity").pre_score(fresh_state(), pod("p"), []) is None


def test_node_affinity_gt_with_a_non_integer_value_disables_only_that_term():
    # nodeaffinity.LazyErrorNodeSelector: labels.NewRequirement rejects "1_0" (strconv.ParseInt),
    # that term matches no node; the other term still does. The pod itself is valid API-wise.
    p = _affinity_pod(
        "p",
        {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["1_0"]}]},
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]},
                ]
            }
        },
    )
    s = scheduler([node("n1", labels={"gen": "20", "zone": "a"}), node("n2", labels={"zone": "b"})])
    pl = plugin(s, "NodeAffinity")
    state = fresh_state()
    pl.pre_filter(state, p, s.snapshot.list())
    assert pl.filter(state, p, s.snapshot.get("n1")).reasons == ["node(s) didn't match Pod's node affinity/selector"]
    assert pl.filter(state, p, s.snapshot.get("n2")) is None


def test_node_affinity_preferred_term_that_does_not_parse_is_a_prescore_error():
    # getPodPreferredNodeAffinity -> NewPreferredSchedulingTerms returns the parse error
    p = _affinity_pod(
        "p",
        {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "preference": {"matchExpressions": [{"key": "gen", "operator": "Lt", "values": ["abc"]}]}}
            ]
        },
    )
    s = scheduler([node("n1")])
    st = plugin(s, "NodeAffinity").pre_score(fresh_state(), p, [])
    assert st.code == ERROR
    assert st.reasons == [
        '[0].matchExpressions[0].values[0]: Invalid value: "abc": '
        "for 'Gt', 'Lt' operators, the value must be an integer"
    ]


def test_a_pod_with_two_match_fields_values_is_refused_as_the_api_server_refuses_it():
    # ValidateNodeFieldSelectorRequirement: In/NotIn on a node field takes exactly one value, so no
    # pod holds two (kube-scheduler's Filter would read such a term as matching no node)
    with pytest.raises(InputError) as e:
        _affinity_pod(
            "p",
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]}
                    ]
                }
            },
        )
    assert e.value.field.endswith("nodeSelectorTerms[0].matchFields[0].values")
    assert e.value.message == (
        "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
    )


def test_added_affinity_match_fields_on_other_keys():
    # nodeSelectorRequirementsAsFieldSelector accepts any key; a node's field set holds only
    # metadata.name, so other keys read as "": In never matches, NotIn always does
    sel = parse_node_selector(
        {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.uid", "operator": "NotIn", "values": ["x"]}]}]},
        "a",
        strict=True,
    )
    assert sel.matches({}, "n1")
    sel = parse_node_selector(
        {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["x"]}]}]},
        "a",
        strict=True,
    )
    assert not sel.matches({}, "n1")


def test_added_affinity_validation_paths_and_skipped_terms():
    # ValidateNodeAffinityArgs: NewPreferredSchedulingTerms paths index the list directly, and it
    # never parses weight-0 terms
    bad_term = {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["x"]}]}
    assert (
        validate_args(
            "NodeAffinity",
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": bad_term}]
                }
            },
        )
        is None
    )
    sub, msg = validate_args(
        "NodeAffinity",
        {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": bad_term}]}},
    )
    assert sub == "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].values[0]"
    assert msg == "Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"


# ---------------------------------------------------------------- labels


def test_label_requirement_gt_parses_like_strconv():
    # labels.Requirement.Matches: strconv.ParseInt(value, 10, 64); "1_0" and " 5" are not integers
    sel = parse_node_selector(
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["5"]}]}]}, "f"
    )
    assert sel.matches({"gen": "10"}, "n")
    assert not sel.matches({"gen": "1_0"}, "n")
    assert not sel.matches({"gen": "99999999999999999999"}, "n")  # beyond int64


def test_label_key_validation_is_anchored_like_go():
    # Go's "$" is end of text; Python's also matches before a final newline
    assert not valid_label_key("app\n")
    assert label_value_errors("v\n")
    assert qualified_name_errors("a/b/c")[0].startswith("a qualified name must consist of")
    assert qualified_name_errors("-x") == [
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    ]


# ---------------------------------------------------------------- resource scoring


def test_balanced_allocation_converts_each_operand_to_float64():
    # balancedResourceScorer: float64(requested) / float64(allocatable); Python's int / int is
    # the exactly rounded quotient, which differs for values past 2^53
    a, b = 1129863074514721857, 1152921504606859321
    assert balanced_scorer([a, 1], [b, 1]) == 99


def test_balanced_allocation_three_resources():
    # more than two resources: population standard deviation of the fractions
    fr = [0.25, 0.5, 0.75]
    mean = sum(fr) / 3
    std = (sum((f - mean) ** 2 for f in fr) / 3) ** 0.5
    assert balanced_scorer([1, 2, 3], [4, 4, 4]) == int((1 - std) * 100)


def test_go_round_half_away_from_zero_exactly():
    # requested_to_capacity_ratio.go: math.Round; floor(x + 0.5) is wrong just below one half
    assert _go_round(0.49999999999999994) == 0
    assert _go_round(2.5) == 3
    assert _go_round(-2.5) == -3


# ---------------------------------------------------------------- config


def test_scoring_strategy_without_type_is_not_defaulted(tmp_path):
    # SetDefaults_NodeResourcesFitArgs sets the type only when scoringStrategy is nil; "" then
    # fails ValidateNodeResourcesFitArgs
    with pytest.raises(InputError) as e:
        load_config(
            _cfg(
                tmp_path,
                "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
                "    args: {scoringStrategy: {resources: [{name: cpu}]}}\n",
            ),
            REGISTRY,
        )
    assert e.value.field == "profiles[0].pluginConfig[0].args.scoringStrategy.type"
    assert e.value.message.startswith('Unsupported value: "": supported values: "LeastAllocated"')


def test_pod_topology_spread_empty_defaulting_type_is_system(tmp_path):
    # SetDefaults_PodTopologySpreadArgs: "" (the zero value) becomes System
    cfg = load_config(
        _cfg(tmp_path, "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultingType: ''}\n"),
        REGISTRY,
    )
    assert cfg.profiles[0].args["PodTopologySpread"]["defaultingType"] == "System"


def test_pod_topology_spread_unsupported_defaulting_type_lists_values_in_go_order():
    sub, msg = validate_args("PodTopologySpread", {"defaultingType": "Foo", "defaultConstraints": []})
    assert (sub, msg) == ("defaultingType", 'Unsupported value: "Foo": supported values: "System", "List"')


def test_queue_sort_must_be_exactly_one(tmp_path):
    # NewFramework: "only one queue sort plugin required ..." also when none is left
    with pytest.raises(InputError) as e:
        load_config(
            _cfg(tmp_path, "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: PrioritySort}]\n"), REGISTRY
        )
    assert e.value.message == (
        'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0'
    )


def test_queue_sort_configuration_must_match_across_profiles(tmp_path):
    # validateCommonQueueSort compares the configured queueSort sets, not the expanded lists
    with pytest.raises(InputError) as e:
        load_config(
            _cfg(
                tmp_path,
                "profiles:\n- schedulerName: a\n- schedulerName: b\n- schedulerName: c\n"
                "  plugins:\n    queueSort:\n      enabled: [{name: PrioritySort}]\n"
                "    multiPoint:\n      disabled: [{name: PrioritySort}]\n",
            ),
            REGISTRY,
        )
    assert e.value.field == "profiles[2].plugins.queueSort"
    assert e.value.message == "must be the same for all profiles"


def test_negative_plugin_weight_is_accepted(tmp_path):
    # neither validation.go nor getScoreWeights rejects a negative weight
    cfg = load_config(
        _cfg(tmp_path, "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: ImageLocality, weight: -2}]\n"),
        REGISTRY,
    )
    assert cfg.profiles[0].score_weights["ImageLocality"] == -2


def test_duplicate_plugin_config_names_the_entry(tmp_path):
    # validatePluginConfig: field.Duplicate(pluginConfig[i], name)
    with pytest.raises(InputError) as e:
        load_config(
            _cfg(tmp_path, "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n  - name: NodeAffinity\n"), REGISTRY
        )
    assert (e.value.field, e.value.message) == ("profiles[0].pluginConfig[1]", 'Duplicate value: "NodeAffinity"')


def test_explicit_empty_scheduler_name_is_not_defaulted(tmp_path):
    # SetDefaults_KubeSchedulerConfiguration names a lone profile only when schedulerName is nil
    with pytest.raises(InputError) as e:
        load_config(_cfg(tmp_path, "profiles:\n- schedulerName: ''\n"), REGISTRY)
    assert e.value.field == "profiles[0].schedulerName"


def test_plugin_that_does_not_implement_a_point_uses_go_wording():
    with pytest.raises(InputError) as e:
        build_profile({"schedulerName": "x", "plugins": {"score": {"enabled": [{"name": "NodeName"}]}}}, "t", REGISTRY)
    assert e.value.message == 'plugin "NodeName" does not extend ScorePlugin plugin'


def test_dynamic_resources_implements_reserve_and_prebind():
    # dynamicresources.go: ReservePlugin and PreBindPlugin, so a config may name it there
    prof = build_profile(
        {
            "schedulerName": "x",
            "plugins": {
                "reserve": {"enabled": [{"name": "DynamicResources"}]},
                "preBind": {"enabled": [{"name": "DynamicResources"}]},
            },
        },
        "t",
        REGISTRY,
    )
    assert "DynamicResources" in prof.points["reserve"] and "DynamicResources" in prof.points["preBind"]


# ---------------------------------------------------------------- plugin args validation


def test_args_validation_messages_match_validation_pluginargs():
    assert validate_args(
        "NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]}
    ) == ("resources[1].name", 'Duplicate value: "cpu"')
    assert validate_args("VolumeBinding", {"bindTimeoutSeconds": -1}) == (
        "bindTimeoutSeconds",
        "Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value",
    )
    assert validate_args("VolumeBinding", {"bindTimeoutSeconds": 600, "shape": [{"utilization": 0, "score": 10}]}) == (
        "shape",
        'Invalid value: [{"Utilization":0,"Score":10}]: unexpected field `shape`, remove it or turn on '
        "the feature gate StorageCapacityScoring",
    )
    sub, msg = validate_args(
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 1, "topologyKey": "Zone/x", "whenUnsatisfiable": "DoNotSchedule"}],
        },
    )
    assert sub == "defaultConstraints[0].topologyKey"
    assert msg.startswith('Invalid value: "Zone/x": prefix part a lowercase RFC 1123 subdomain')
    assert validate_args("DynamicResources", {"filterTimeout": "-1s"}) == (
        "filterTimeout",
        'Invalid value: "-1s": must be zero or positive',
    )
    assert validate_args("DynamicResources", {"filterTimeout": "ten"}) == (
        "filterTimeout",
        'time: invalid duration "ten"',
    )
    assert validate_args("DynamicResources", {"filterTimeout": "1m30s"}) is None


def test_dynamic_resources_args_have_no_binding_timeout(tmp_path):
    # v1.34.1 DynamicResourcesArgs has only filterTimeout: strict decoding rejects other fields
    with pytest.raises(InputError):
        load_config(
            _cfg(tmp_path, "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {bindingTimeout: 10s}\n"),
            REGISTRY,
        )


# ---------------------------------------------------------------- quantity.go


@pytest.mark.parametrize(
    "text,nanos",
    [
        ("+", 0),
        ("-", 0),
        (".", 0),
        ("Gi", 0),
        ("m", 0),
        ("+Ki", 0),
        ("0Ei", 0),  # parseQuantityString quirks
        ("1e-10", 1),
        ("1e-200", 1),  # below 1n rounds up to 1n (inf.RoundUp)
        ("1e4294967299", 10**12),  # int32(exponent): 2^32 + 3 -> 3
        ("16Ei", ((1 << 63) - 1) * 10**9),  # BinarySI capped at maxAllowed
        ("1.Gi", (1 << 30) * 10**9),
    ],
)
def test_quantity_parses_like_parse_quantity(text, nanos):
    assert quantity.parse_nanos(text) == nanos


@pytest.mark.parametrize("bad", ["Ei", "Pi", "e-10", "1e", "1e+", "1.5.5", "1e3.5", "1K"])
def test_quantity_rejects_like_parse_quantity(bad):
    # Ei/Pi/e-10 alone take inf.Dec's path, which finds no digit (ErrNumeric)
    with pytest.raises(FieldError):
        quantity.parse(bad, "f")


# ---------------------------------------------------------------- DynamicResources


def _dra_sched(objects):
    s = scheduler([node("n1", labels={"zone": "a"}), node("n2", labels={"zone": "b"})])
    for kind, ns, name, obj in objects:
        s.cluster.objects[kind][(ns, name)] = obj
    return s


def test_dra_pre_enqueue_reports_missing_claims():
    # PreEnqueue -> foreachPodResourceClaim: the assume cache's NotFoundError, resourceclaim.Name
    s = _dra_sched([])
    pl = plugin(s, "DynamicResources")
    st = pl.pre_enqueue(pod("p", spec={"resourceClaims": [{"name": "gpu", "resourceClaimName": "c1"}]}))
    assert (st.code, st.reasons) == (UNRESOLVABLE, ['could not find ResourceClaim "default/c1"'])
    st = pl.pre_enqueue(pod("p", spec={"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}))
    assert st.reasons == ['pod "default/p": ResourceClaim not created yet']


def test_dra_allocated_claim_limits_nodes_and_post_filter_deallocates():
    claim = {
        "kind": "ResourceClaim",
        "metadata": {"name": "c1", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
        "status": {
            "allocation": {
                "nodeSelector": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
                }
            }
        },
    }
    s = _dra_sched([("ResourceClaim", "default", "c1", claim)])
    pl = plugin(s, "DynamicResources")
    p = pod("p", spec={"resourceClaims": [{"name": "gpu", "resourceClaimName": "c1"}]})
    state = fresh_state()
    assert pl.pre_filter(state, p, s.snapshot.list()) == (None, None)
    assert pl.filter(state, p, s.snapshot.get("n1")) is None
    st = pl.filter(state, p, s.snapshot.get("n2"))
    assert (st.code, st.reasons) == (UNRESOLVABLE, ["resourceclaim not available on the node"])
    _, st = pl.post_filter(state, p, None)
    assert (st.code, st.reasons) == (UNSCHEDULABLE, ["deallocation of ResourceClaim completed"])


def test_dra_unallocated_claim_needs_its_device_class():
    claim = {
        "kind": "ResourceClaim",
        "metadata": {"name": "c1", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
    }
    s = _dra_sched([("ResourceClaim", "default", "c1", claim)])
    _, st = plugin(s, "DynamicResources").pre_filter(
        fresh_state(), pod("p", spec={"resourceClaims": [{"name": "gpu", "resourceClaimName": "c1"}]}), []
    )
    assert (st.code, st.reasons) == (UNRESOLVABLE, ["request r: device class gpu does not exist"])


def test_dra_extended_resources_are_left_to_fit():
    # DRAExtendedResource is alpha (off) in v1.34: a pod without claims skips the plugin
    s = _dra_sched([])
    p = pod("p", requests={"deviceclass.resource.kubernetes.io/gpu": "1"})
    _, st = plugin(s, "DynamicResources").pre_filter(fresh_state(), p, [])
    assert st.code == SKIP
