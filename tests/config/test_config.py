import pytest

from kschedcli.config.scheduler import build_profile, load_config
from kschedcli.errors import InputError
from kschedcli.plugins import REGISTRY


def _cfg(tmp_path, text):
    p = tmp_path / "sched.yaml"
    p.write_text(text)
    return str(p)


def test_default_profile_order_and_weights():
    prof = build_profile({"schedulerName": "default-scheduler"}, "", REGISTRY)
    assert prof.points["filter"] == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ]
    assert prof.points["postFilter"] == ["DynamicResources", "DefaultPreemption"]
    assert prof.score_weights == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "VolumeBinding": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
    assert prof.args["DefaultPreemption"] == {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}


def test_disable_one_score_plugin_and_reweight(tmp_path):
    cfg = load_config(
        _cfg(
            tmp_path,
            """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      disabled: [{name: ImageLocality}]
      enabled: [{name: NodeResourcesFit, weight: 5}]
""",
        ),
        REGISTRY,
    )
    prof = cfg.profiles[0]
    assert prof.scheduler_name == "default-scheduler"
    assert "ImageLocality" not in prof.points["score"]
    assert prof.score_weights["NodeResourcesFit"] == 5
    # a plugin re-enabled at the point comes first (override), then the multiPoint ones
    assert prof.points["score"][0] == "NodeResourcesFit"


def test_star_disables_every_default_at_a_point(tmp_path):
    cfg = load_config(
        _cfg(
            tmp_path,
            """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: a
  plugins:
    score:
      disabled: [{name: "*"}]
      enabled: [{name: ImageLocality}]
- schedulerName: b
""",
        ),
        REGISTRY,
    )
    assert cfg.profile_for("a").points["score"] == ["ImageLocality"]
    assert len(cfg.profile_for("b").points["score"]) == 8


@pytest.mark.parametrize(
    "body,field",
    [
        (
            "profiles:\n- plugins:\n    filter:\n      enabled: [{name: Nope}]\n",
            "profiles[0].plugins.filter.enabled[0].name",
        ),
        (
            "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 101}\n",
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeight",
        ),
        ("profiles:\n- schedulerName: x\n- schedulerName: x\n", "profiles[1].schedulerName"),
        ("percentageOfNodesToScore: 150\n", "percentageOfNodesToScore"),
        (
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Fancy}}\n",
            "profiles[0].pluginConfig[0].args.scoringStrategy.type",
        ),
        (
            "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: "
            "{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}\n",
            "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage",
        ),
        ("profilez: []\n", "profilez"),  # an unknown field, with a did-you-mean (test_input_validate_everywhere)
    ],
)
def test_invalid_configs_name_the_field(tmp_path, body, field):
    path = _cfg(tmp_path, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body)
    with pytest.raises(InputError) as e:
        load_config(path, REGISTRY)
    assert e.value.field == field
    assert str(e.value).startswith(path)


def test_wrong_api_version_is_rejected(tmp_path):
    path = _cfg(tmp_path, "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n")
    with pytest.raises(InputError, match="unsupported apiVersion"):
        load_config(path, REGISTRY)


@pytest.mark.parametrize(
    "body,field,message",
    [
        ("parallelism: 0\n", "parallelism", "Invalid value: 0: should be an integer value greater than zero"),
        ("podInitialBackoffSeconds: 0\n", "podInitialBackoffSeconds", "Invalid value: 0: must be greater than 0"),
        # kube-scheduler refuses a maximum below the initial backoff (the default maximum is 10)
        (
            "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n",
            "podMaxBackoffSeconds",
            "Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds",
        ),
        (
            "podInitialBackoffSeconds: 11\n",
            "podMaxBackoffSeconds",
            "Invalid value: 10: must be greater than or equal to PodInitialBackoffSeconds",
        ),
        # field.Duplicate's value is a *field.Path, which JSON-encodes as {}
        ("profiles:\n- schedulerName: x\n- schedulerName: x\n", "profiles[1].schedulerName", "Duplicate value: {}"),
        # a plugin the v1 API removed, named before any plugin is looked up
        (
            "profiles:\n- plugins:\n    filter:\n      enabled: [{name: NodeName}, {name: EBSLimits}]\n",
            "profiles[0].plugins.filter.enabled[1]",
            'Invalid value: "EBSLimits": was invalid in version "kubescheduler.config.k8s.io/v1" '
            '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        ),
        (
            "profiles:\n- pluginConfig:\n  - name: CinderLimits\n    args: {}\n",
            "profiles[0].pluginConfig[0]",
            'Invalid value: "CinderLimits": was invalid in version "kubescheduler.config.k8s.io/v1" '
            '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        ),
    ],
)
def test_config_validation_in_kube_schedulers_words(tmp_path, body, field, message):
    path = _cfg(tmp_path, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body)
    with pytest.raises(InputError) as e:
        load_config(path, REGISTRY)
    assert e.value.field == field
    assert str(e.value) == f"{path}: {field}: {message}"


def test_backoff_within_bounds_is_taken(tmp_path):
    body = "podInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 2\nparallelism: 1\n"
    path = _cfg(tmp_path, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body)
    assert load_config(path, REGISTRY).parallelism == 1


@pytest.mark.parametrize(
    "version,words", [("v1.33", "utilization values must be sorted"), ("v1.34", "values must be sorted")]
)
def test_an_unsorted_shape_is_worded_as_the_release_words_it(tmp_path, version, words):
    from kschedcli.config.versions import parse

    body = (
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
        "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
        "          shape: [{utilization: 50, score: 1}, {utilization: 10, score: 5}]\n"
    )
    path = _cfg(tmp_path, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body)
    with pytest.raises(InputError) as e:
        load_config(path, REGISTRY, parse(version))
    assert e.value.field == "profiles[0].pluginConfig[0].args.scoringStrategy.shape[1].utilization"
    assert str(e.value).endswith(f"Invalid value: 10: {words} in increasing order")


_ADDED = (
    "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
    "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
    "          - matchExpressions: [{expr}]\n"
)
_AT = "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"


@pytest.mark.parametrize(
    "expr,sub,message",
    [
        (
            "{key: zone, operator: Foo, values: [x]}",
            "operator",
            'Unsupported value: "Foo": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        ),
        (
            "{key: zone, operator: In}",
            "values",
            "Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            "{key: zone, operator: NotIn, values: []}",
            "values",
            "Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            "{key: zone, operator: Exists, values: [x]}",
            "values",
            'Invalid value: ["x"]: values set must be empty for exists and does not exist',
        ),
        (
            "{key: zone, operator: Lt, values: ['1', '2']}",
            "values",
            "Invalid value: [\"1\",\"2\"]: for 'Gt', 'Lt' operators, exactly one value is required",
        ),
        (
            "{key: zone, operator: Gt, values: [abc]}",
            "values[0]",
            "Invalid value: \"abc\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ],
)
def test_added_affinity_is_parsed_as_new_node_selector_words_it(tmp_path, expr, sub, message):
    path = _cfg(
        tmp_path,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + _ADDED.format(expr=expr),
    )
    with pytest.raises(InputError) as e:
        load_config(path, REGISTRY)
    field = f"{_AT}.nodeSelectorTerms[0].matchExpressions[0].{sub}"
    assert e.value.field == field
    assert str(e.value) == f"{path}: {field}: {message}"


def test_added_affinity_key_is_checked_as_a_qualified_name(tmp_path):
    path = _cfg(
        tmp_path,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        + _ADDED.format(expr="{key: 'a b', operator: In, values: [x]}"),
    )
    with pytest.raises(InputError) as e:
        load_config(path, REGISTRY)
    assert e.value.field.endswith("matchExpressions[0].key")
    assert e.value.message.startswith('Invalid value: "a b": name part must consist of alphanumeric characters')


def test_null_fields_are_unset_as_gos_json_decoding_reads_them(tmp_path):
    """`profiles: null`, `plugins: null`, `args: null`, `percentageOfNodesToScore: null`: each as if
    the field were not there (kube-scheduler's decoding leaves a null field unset), giving the
    defaults; an unknown field is still refused when its value is null."""
    head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    default = load_config(None, REGISTRY)
    for body in (
        "profiles: null\npercentageOfNodesToScore: null\n",
        "profiles:\n- schedulerName: default-scheduler\n  plugins: null\n"
        "  pluginConfig:\n  - name: NodeResourcesFit\n    args: null\n",
    ):
        cfg = load_config(_cfg(tmp_path, head + body), REGISTRY)
        [prof], [want] = cfg.profiles, default.profiles
        assert prof.scheduler_name == "default-scheduler"
        assert prof.points == want.points and prof.score_weights == want.score_weights
        assert cfg.percentage_of_nodes_to_score == default.percentage_of_nodes_to_score
    with pytest.raises(InputError) as e:
        load_config(_cfg(tmp_path, head + "percentageOfNodesToScor: null\n"), REGISTRY)
    assert "percentageOfNodesToScor" in str(e.value)
