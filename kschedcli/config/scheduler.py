"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): defaults, merge and validation."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from .extenders import ExtenderConfig, ignored_resources, parse_extenders
from .versions import REFERENCE, Release

API_VERSION = "kubescheduler.config.k8s.io/v1"
DEFAULT_SCHEDULER = "default-scheduler"

EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)

# getDefaultPlugins() as v1.34.1 applies its feature gates; each release's list is
# versions.Release.default_multipoint()
DEFAULT_MULTIPOINT = REFERENCE.default_multipoint()

DEFAULT_RESOURCE_SPEC = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]

SYSTEM_DEFAULT_CONSTRAINTS = [
    {"topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 5},
    {"topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 3},
]


def default_args(plugin: str, release: Release = REFERENCE) -> dict | None:
    """The args kube-scheduler's defaulting gives a plugin with no pluginConfig entry."""
    if plugin == "DefaultPreemption":
        return {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}
    if plugin == "InterPodAffinity":
        return {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}
    if plugin == "NodeAffinity":
        return {}
    if plugin == "NodeResourcesBalancedAllocation":
        return {"resources": copy.deepcopy(DEFAULT_RESOURCE_SPEC)}
    if plugin == "NodeResourcesFit":
        return {
            "ignoredResources": [],
            "ignoredResourceGroups": [],
            "scoringStrategy": {"type": "LeastAllocated", "resources": copy.deepcopy(DEFAULT_RESOURCE_SPEC)},
        }
    if plugin == "PodTopologySpread":
        return {"defaultingType": "System", "defaultConstraints": []}
    if plugin == "VolumeBinding":
        return {"bindTimeoutSeconds": 600}
    if plugin == "DynamicResources":
        return release.default_dynamic_resources_args()
    return None


def apply_arg_defaults(plugin: str, args: dict, release: Release = REFERENCE) -> dict:
    """scheme.Default for explicitly configured args: fill what the user left out."""
    d = default_args(plugin, release)
    if d is None:
        return dict(args)
    out = dict(args)
    if plugin == "NodeResourcesBalancedAllocation":
        res = out.get("resources") or copy.deepcopy(DEFAULT_RESOURCE_SPEC)
        out["resources"] = [{**r, "weight": r.get("weight") or 1} for r in res]
        return out
    if plugin == "NodeResourcesFit":
        if out.get("ignoredResources") is None:
            out["ignoredResources"] = []
        if out.get("ignoredResourceGroups") is None:
            out["ignoredResourceGroups"] = []
        # SetDefaults_NodeResourcesFitArgs: only a missing strategy gets the LeastAllocated type; a
        # strategy given without a type keeps "" (and fails validation), as in kube-scheduler
        ss: dict[str, Any]
        if out.get("scoringStrategy") is None:
            ss = {"type": "LeastAllocated"}
        else:
            ss = dict(out["scoringStrategy"])
            if ss.get("type") is None:
                ss["type"] = ""
        res = ss.get("resources") or copy.deepcopy(DEFAULT_RESOURCE_SPEC)
        ss["resources"] = [{**r, "weight": r.get("weight") or 1} for r in res]
        out["scoringStrategy"] = ss
        return out
    if plugin == "PodTopologySpread":
        if not out.get("defaultingType"):  # "" is Go's zero value: defaulted too
            out["defaultingType"] = "System"
        if out.get("defaultConstraints") is None:
            out["defaultConstraints"] = []
        return out
    for k, v in d.items():
        if out.get(k) is None:
            out[k] = v
    return out


@dataclass
class PluginRef:
    name: str
    weight: int = 0


@dataclass
class Profile:
    scheduler_name: str
    # extension point -> ordered plugin names, after multiPoint expansion (as the framework builds)
    points: dict[str, list[str]] = field(default_factory=dict)
    score_weights: dict[str, int] = field(default_factory=dict)
    args: dict[str, dict] = field(default_factory=dict)
    # the merged plugin sets before expansion, as `kube-scheduler --write-config-to` shows them
    merged: dict[str, dict] = field(default_factory=dict)
    # the profile's own percentageOfNodesToScore (None: the global one applies)
    percentage_of_nodes_to_score: int | None = None


@dataclass
class SchedulerConfig:
    profiles: list[Profile]
    percentage_of_nodes_to_score: int = 0
    # the filter's worker count (kube-scheduler's default 16); only node sampling reads it
    parallelism: int = 16
    source: str = ""
    release: Release = REFERENCE  # the kube-scheduler release whose defaults built it
    # the HTTP extenders in calling order (extender_config.py), and those --no-extenders left out
    extenders: list[ExtenderConfig] = field(default_factory=list)
    extenders_left_out: list[ExtenderConfig] = field(default_factory=list)

    def leave_out_extenders(self) -> None:
        """--no-extenders: no HTTP call; their ignoredByScheduler resources stay ignored by
        NodeResourcesFit (that is configuration, not a call)."""
        self.extenders_left_out, self.extenders = self.extenders, []

    def profile_for(self, scheduler_name: str) -> Profile | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None


# the Go interface each extension point's plugins must implement, as framework.go names them
_GO_POINT_TYPE = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
}


def _load_schema() -> dict:
    from importlib import resources as ilres

    return json.loads(ilres.files("kschedcli.schemas").joinpath("kubeschedulerconfiguration.schema.json").read_text())


def _merge_set(default: dict, custom: dict | None) -> dict:
    """mergePluginSet: defaults minus disabled ('*' drops all), re-configured in place, rest appended."""
    custom = custom or {}
    disabled = [p["name"] for p in custom.get("disabled") or []] + [p["name"] for p in default.get("disabled") or []]
    dset = set(disabled)
    custom_enabled = list(custom.get("enabled") or [])
    by_name = {}
    for i, p in enumerate(custom_enabled):
        by_name[p["name"]] = (i, p)
    replaced = set()
    enabled = []
    if "*" not in dset:
        for p in default.get("enabled") or []:
            if p["name"] in dset:
                continue
            if p["name"] in by_name:
                i, cp = by_name[p["name"]]
                p = cp
                replaced.add(i)
            enabled.append(p)
    for i, p in enumerate(custom_enabled):
        if i not in replaced:
            enabled.append(p)
    return {"enabled": enabled, "disabled": [{"name": n} for n in disabled]}


def build_profile(raw: dict, path: str, registry, release: Release = REFERENCE) -> Profile:
    """Defaults, merge and framework expansion for one profile, as `release` does them; raises
    InputError naming the field."""
    name = raw.get("schedulerName") or ""
    plugins = raw.get("plugins") or {}
    merged = {
        "multiPoint": _merge_set(
            {"enabled": [{"name": n, "weight": w} if w else {"name": n} for n, w in release.default_multipoint()]},
            plugins.get("multiPoint"),
        )
    }
    for pt in EXTENSION_POINTS:
        merged[pt] = _merge_set({}, plugins.get(pt))

    def err(field: str, msg: str) -> InputError:
        return InputError(msg, source=path, field=f"{raw.get('_path', 'profiles')}.{field}")

    # every named plugin must exist (framework.go updatePluginList / expandMultiPointPlugins wording)
    for pt, s in merged.items():
        kind = _GO_POINT_TYPE.get(pt, "PreFilterPlugin")
        # an entry the file wrote is named at its index in the file, not in the merged list
        written = {id(p): j for j, p in enumerate((plugins.get(pt) or {}).get("enabled") or [])}
        for m, p in enumerate(s["enabled"]):
            i = written.get(id(p), m)
            if p["name"] not in registry or not release.knows_plugin(p["name"]):
                raise err(f"plugins.{pt}.enabled[{i}].name", f'{kind} "{p["name"]}" does not exist')
            if pt != "multiPoint" and not registry[p["name"]].implements(pt, release):
                raise err(f"plugins.{pt}.enabled[{i}].name", f'plugin "{p["name"]}" does not extend {kind} plugin')
            # kube-scheduler does not validate plugin weights: a negative one is taken as given

    points: dict[str, list[str]] = {}
    for pt in EXTENSION_POINTS:
        point_enabled = [p["name"] for p in merged[pt]["enabled"]]
        if len(set(point_enabled)) != len(point_enabled):
            dup = next(n for n in point_enabled if point_enabled.count(n) > 1)
            raise err(f"plugins.{pt}", f'plugin "{dup}" already registered as "{_GO_POINT_TYPE[pt]}"')
        disabled = {p["name"] for p in merged[pt]["disabled"]}
        if "*" in disabled:
            points[pt] = point_enabled
            continue
        multi, override = [], set()
        for p in merged["multiPoint"]["enabled"]:
            cls = registry[p["name"]]
            if not cls.implements(pt, release) or p["name"] in disabled:
                continue
            if p["name"] in point_enabled:
                override.add(p["name"])
                continue
            if p["name"] in multi:
                raise err("plugins.multiPoint", f'plugin "{p["name"]}" already registered as "{_GO_POINT_TYPE[pt]}"')
            multi.append(p["name"])
        ordered = [n for n in point_enabled if n in override] + multi + [n for n in point_enabled if n not in override]
        points[pt] = ordered

    weights: dict[str, int] = {}
    for p in merged["score"]["enabled"] + merged["multiPoint"]["enabled"]:
        if not registry[p["name"]].implements("score", release) or p["name"] in weights:
            continue
        weights[p["name"]] = p.get("weight") or 1
    # validation.go validateCommonQueueSort checks the configured set; NewFramework then wants
    # exactly one queue sort plugin and at least one bind plugin after expansion
    if len(merged["queueSort"]["enabled"]) > 1:
        raise err(
            "plugins.queueSort.Enabled",
            f"Invalid value: {len(merged['queueSort']['enabled'])}: only one queue sort plugin can be enabled",
        )
    if len(points["queueSort"]) != 1:
        raise err(
            "plugins.queueSort",
            f"only one queue sort plugin required for profile with scheduler name "
            f'"{name}", but got {len(points["queueSort"])}',
        )
    if len(points["bind"]) == 0:
        raise err("plugins.bind", f'at least one bind plugin is needed for profile with scheduler name "{name}"')

    # plugin args: explicit ones defaulted, defaults for every other plugin named anywhere
    args: dict[str, dict] = {}
    seen = set()
    for i, pc in enumerate(raw.get("pluginConfig") or []):
        pname = pc.get("name")
        if pname in seen:
            raise err(f"pluginConfig[{i}]", f'Duplicate value: "{pname}"')
        seen.add(pname)
        a = pc.get("args") or {}
        if not isinstance(a, dict):
            raise err(f"pluginConfig[{i}].args", "must be an object")
        a = {k: v for k, v in a.items() if k not in ("apiVersion", "kind")}
        args[pname] = apply_arg_defaults(pname, a, release)
        from .argsvalidation import validate_args

        problem = validate_args(pname, args[pname], release)
        if problem:
            sub, msg = problem
            raise err(f"pluginConfig[{i}].args{('.' + sub) if sub else ''}", msg)
    for s in merged.values():
        for p in s["enabled"]:
            if p["name"] not in args:
                d = default_args(p["name"], release)
                if d is not None:
                    args[p["name"]] = d
    return Profile(scheduler_name=name, points=points, score_weights=weights, args=args, merged=merged)


def default_config(registry, release: Release = REFERENCE) -> SchedulerConfig:
    return SchedulerConfig(
        profiles=[build_profile({"schedulerName": DEFAULT_SCHEDULER}, "", registry, release)], release=release
    )


# plugins the v1 config API no longer accepts (validation.go invalidPluginsByVersion)
_REMOVED_IN_V1 = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
_STAGES = (
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
    "score", "reserve", "permit", "preBind", "bind", "postBind",
)  # fmt: skip


def _no_removed_plugins(rp: dict, i: int, path: str) -> None:
    """validatePluginConfig's check, made before any plugin is looked up: a removed plugin named
    at an extension point (multiPoint is not looked at) or in pluginConfig."""
    why = f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")'
    plugins = rp.get("plugins") or {}
    for stage in _STAGES:
        for j, p in enumerate((plugins.get(stage) or {}).get("enabled") or []):
            if isinstance(p, dict) and p.get("name") in _REMOVED_IN_V1:
                raise InputError(
                    f'Invalid value: "{p["name"]}": {why}',
                    source=path,
                    field=f"profiles[{i}].plugins.{stage}.enabled[{j}]",
                )
    for j, pc in enumerate(rp.get("pluginConfig") or []):
        if isinstance(pc, dict) and pc.get("name") in _REMOVED_IN_V1:
            raise InputError(
                f'Invalid value: "{pc["name"]}": {why}', source=path, field=f"profiles[{i}].pluginConfig[{j}]"
            )


def _without_nulls(value: Any) -> Any:
    """The configuration as Go's JSON decoding reads it: a field set to null is left unset (a nil
    pointer, slice, map or RawExtension, or the zero value), so `plugins: null` or `args: null`
    is as if the field were not there."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def load_config(path: str | None, registry, release: Release = REFERENCE) -> SchedulerConfig:
    if not path:
        return default_config(registry, release)
    from ..loader import parse_documents, read_text  # a --config file alone needs the loader here

    docs = parse_documents(read_text(path), path, as_kubectl=True)
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise InputError("expected one KubeSchedulerConfiguration document", source=path)
    doc = docs[0]
    if doc.get("kind") != "KubeSchedulerConfiguration":
        raise InputError(
            f"expected kind KubeSchedulerConfiguration, found {doc.get('kind')!r}", source=path, field="kind"
        )
    if doc.get("apiVersion") != API_VERSION:
        raise InputError(
            f"unsupported apiVersion {doc.get('apiVersion')!r} (ksched reads {API_VERSION})",
            source=path,
            field="apiVersion",
        )
    from ..api.validation import check_config, user_files_validation

    check_config(doc, path)  # unknown fields (with a did-you-mean) and JSON types, by --validate
    doc = _without_nulls(doc)
    import jsonschema  # only a config file needs it: a plain run does not pay its import (~40 ms)

    validator = jsonschema.Draft202012Validator(_load_schema())
    strict = user_files_validation()[0] == "strict"  # else unknown fields were warned of or let through
    errors = sorted(
        (e for e in validator.iter_errors(doc) if strict or e.validator != "additionalProperties"),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        e = errors[0]
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path).lstrip(".")
        raise InputError(e.message, source=path, field=loc or "(root)")
    parallelism = doc.get("parallelism")
    if parallelism is not None and parallelism <= 0:
        raise InputError(
            f"Invalid value: {parallelism}: should be an integer value greater than zero",
            source=path,
            field="parallelism",
        )
    pct = doc.get("percentageOfNodesToScore")
    if pct is not None and not 0 <= pct <= 100:
        raise InputError(
            f"Invalid value: {pct}: not in valid range [0-100]", source=path, field="percentageOfNodesToScore"
        )
    raw_profiles = doc.get("profiles") or [{}]
    # SetDefaults_KubeSchedulerConfiguration names a lone profile only when schedulerName is unset
    if len(raw_profiles) == 1 and raw_profiles[0].get("schedulerName") is None:
        raw_profiles = [{**raw_profiles[0], "schedulerName": DEFAULT_SCHEDULER}]
    profiles = []
    names = set()
    for i, rp in enumerate(raw_profiles):
        if not rp.get("schedulerName"):
            raise InputError("Required value", source=path, field=f"profiles[{i}].schedulerName")
        ppct = rp.get("percentageOfNodesToScore")
        if ppct is not None and not 0 <= ppct <= 100:
            raise InputError(
                f"Invalid value: {ppct}: not in valid range [0-100]",
                source=path,
                field=f"profiles[{i}].percentageOfNodesToScore",
            )
        if rp["schedulerName"] in names:
            # field.Duplicate's value is the first profile's *field.Path, which encodes as {}
            raise InputError("Duplicate value: {}", source=path, field=f"profiles[{i}].schedulerName")
        names.add(rp["schedulerName"])
        _no_removed_plugins(rp, i, path)
        profiles.append(build_profile({**rp, "_path": f"profiles[{i}]"}, path, registry, release))
        profiles[-1].percentage_of_nodes_to_score = ppct

    # validateCommonQueueSort: every profile's configured queueSort set (after merging with the
    # defaults, before multiPoint expansion) must equal the first profile's
    def qs_key(p):
        m = p.merged["queueSort"]
        return ([(e["name"], e.get("weight") or 0) for e in m["enabled"]], [d["name"] for d in m["disabled"]])

    for i in range(1, len(profiles)):
        if qs_key(profiles[i]) != qs_key(profiles[0]):
            raise InputError("must be the same for all profiles", source=path, field=f"profiles[{i}].plugins.queueSort")
    # the queue's backoff (v1 defaults 1 s and 10 s), checked as ValidateKubeSchedulerConfiguration does
    initial = doc.get("podInitialBackoffSeconds")
    initial = 1 if initial is None else initial
    most = doc.get("podMaxBackoffSeconds")
    most = 10 if most is None else most
    if initial <= 0:
        raise InputError(
            f"Invalid value: {initial}: must be greater than 0", source=path, field="podInitialBackoffSeconds"
        )
    if most < initial:
        raise InputError(
            f"Invalid value: {most}: must be greater than or equal to PodInitialBackoffSeconds",
            source=path,
            field="podMaxBackoffSeconds",
        )
    extenders = parse_extenders(doc.get("extenders"), path)
    ignored = ignored_resources(extenders)
    if ignored:
        # buildExtenders: the extenders' ignoredByScheduler resources replace every profile's
        # NodeResourcesFit ignoredResources
        for p in profiles:
            if "NodeResourcesFit" not in p.args:
                raise InputError(
                    "couldn't build extenders: can't find NodeResourcesFitArgs in plugin config",
                    source=path,
                    field="extenders",
                )
            p.args["NodeResourcesFit"] = {**p.args["NodeResourcesFit"], "ignoredResources": list(ignored)}
    return SchedulerConfig(
        profiles=profiles,
        percentage_of_nodes_to_score=pct or 0,
        parallelism=16 if doc.get("parallelism") is None else doc["parallelism"],
        source=path,
        release=release,
        extenders=extenders,
    )
