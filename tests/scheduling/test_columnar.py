"""The columnar cycle (scheduling/columnar.py) must choose what the full cycle chooses, cycle by
cycle: seeded random clusters (taints, zones, missing topology labels, cordons, images, node and
pod affinity, spread constraints, Services giving the system default spreading), each pending
pod decided both ways on the same state, the full cycle's node then bound."""

from __future__ import annotations

import copy
import random

import pytest
from builders import node, pod, scheduler

from kschedcli.api.model import Pod
from kschedcli.backend import vectors
from kschedcli.config.versions import REFERENCE, RELEASES
from kschedcli.framework.cycle_state import CycleState
from kschedcli.framework.result import CycleResult
from kschedcli.scheduling import columnar as col
from kschedcli.whatif import sweep as sw

ZONES = ["a", "b", "c"]
APPS = ["web", "api", "db", "cache"]
N = 30


@pytest.fixture(params=["arrays", "lists"])
def vectorised(request, monkeypatch):
    """The resource scorers' int64 arrays on these small clusters too ("arrays"), or their lists."""
    if request.param == "arrays":
        monkeypatch.setattr(vectors, "MIN_NODES", 1)
        monkeypatch.setattr(vectors, "IMPORT_AFTER_NODES", 0)
    else:
        monkeypatch.setattr(vectors, "MIN_NODES", 10**9)
    return request.param


def _terms(rng, preferred: bool) -> list:
    out = []
    for _ in range(rng.choice([1, 2])):
        term = {
            "topologyKey": rng.choice(["kubernetes.io/hostname", "topology.kubernetes.io/zone"]),
            "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
        }
        out.append({"weight": rng.randint(1, 100), "podAffinityTerm": term} if preferred else term)
    return out


def _spec(rng, app: str, pending: bool) -> dict:
    spec: dict = {}
    if rng.random() < 0.4:
        spec["tolerations"] = [{"key": "pool", "operator": "Exists"}]
    if rng.random() < 0.3:
        spec.setdefault("tolerations", []).append({"key": "soft", "operator": "Exists", "effect": "PreferNoSchedule"})
    affinity: dict = {}
    if rng.random() < 0.3:
        kind = rng.choice(["podAffinity", "podAntiAffinity"])
        affinity[kind] = {"preferredDuringSchedulingIgnoredDuringExecution": _terms(rng, True)}
    if pending and rng.random() < 0.1:
        kind = rng.choice(["podAffinity", "podAntiAffinity"])
        affinity.setdefault(kind, {})["requiredDuringSchedulingIgnoredDuringExecution"] = _terms(rng, False)
    if pending and rng.random() < 0.3:
        affinity["nodeAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": rng.randint(1, 100),
                    "preference": {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [rng.choice(ZONES)]}
                        ]
                    },
                }
            ]
        }
    if pending and rng.random() < 0.15:
        affinity.setdefault("nodeAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]
        }
    if affinity:
        spec["affinity"] = affinity
    if pending and rng.random() < 0.3:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": rng.choice([1, 2, 3]),
                "topologyKey": rng.choice(["topology.kubernetes.io/zone", "kubernetes.io/hostname"]),
                "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway", "ScheduleAnyway"]),
                "labelSelector": {"matchLabels": {"app": app}},
                # matchNodeInclusionPolicies, both ways
                **({"nodeAffinityPolicy": rng.choice(["Honor", "Ignore"])} if rng.random() < 0.5 else {}),
                **({"nodeTaintsPolicy": rng.choice(["Honor", "Ignore"])} if rng.random() < 0.5 else {}),
            }
        ]
    if pending and rng.random() < 0.05:
        spec["nodeSelector"] = {"topology.kubernetes.io/zone": rng.choice(ZONES)}
    if pending and rng.random() < 0.03:
        spec["nodeName"] = f"n{rng.randrange(N):02d}"
    if pending and rng.random() < 0.05:
        spec["containers"] = [{"name": "c", "image": "app:1", "ports": [{"containerPort": 80, "hostPort": 8080}]}]
    return spec


def _world(seed: int, release=REFERENCE):
    rng = random.Random(seed)
    nodes = []
    for i in range(N):
        labels = {"topology.kubernetes.io/zone": ZONES[i % 3], "kubernetes.io/hostname": f"host-{i}"}
        if rng.random() < 0.3:
            labels["disk"] = "ssd"
        taints = []
        if rng.random() < 0.2:
            taints.append({"key": "pool", "value": "gpu", "effect": "NoSchedule"})
        if rng.random() < 0.3:
            taints.append({"key": "soft", "value": "x", "effect": "PreferNoSchedule"})
        nodes.append(
            node(
                f"n{i:02d}",
                cpu=str(rng.choice([2, 4, 8])),
                memory=f"{rng.choice([4, 8, 16])}Gi",
                pods=str(rng.choice([4, 110, 110])),
                labels=labels,
                taints=taints,
                unschedulable=rng.random() < 0.05,
                images=[{"names": ["app:1"], "sizeBytes": rng.choice([50, 300, 900]) * 2**20}]
                if rng.random() < 0.5
                else [],
            )
        )
    if seed % 2:
        del nodes[5].labels["topology.kubernetes.io/zone"]
        del nodes[7].labels["kubernetes.io/hostname"]
    existing = []
    for j in range(60):
        app = rng.choice(APPS)
        existing.append(
            pod(
                f"e{j}",
                labels={"app": app},
                node_name=f"n{rng.randrange(N):02d}",
                requests={"cpu": f"{rng.choice([100, 250, 500])}m", "memory": f"{rng.choice([128, 512, 1024])}Mi"},
                spec=_spec(rng, app, False),
            )
        )
    pending = []
    for k in range(70):
        app = rng.choice(APPS)
        pending.append(
            pod(
                f"p{k}",
                labels={"app": app},
                requests={"cpu": f"{rng.choice([0, 100, 300, 1500])}m", "memory": f"{rng.choice([0, 256, 1024])}Mi"},
                spec=_spec(rng, app, True),
            )
        )
    sched = scheduler(nodes, existing, release=release)
    for app in APPS[: 2 + seed % 3]:
        sched.cluster.objects["Service"][("default", app)] = {
            "kind": "Service",
            "metadata": {"name": app, "namespace": "default"},
            "spec": {"selector": {"app": app}},
        }
    return sched, pending


def _slim(r: CycleResult) -> dict:
    out = dict(vars(r))
    for k in ("pod", "filters", "scores", "feasible", "totals"):
        out.pop(k)
    # (statuses compare by their text)
    out["pre_filter_plugins"] = {k: repr(v) for k, v in out["pre_filter_plugins"].items()}
    out["pre_filter"], out["pre_score"] = repr(out["pre_filter"]), repr(out["pre_score"])
    return out


def _both_ways(sched, pending, seed=None) -> int:
    """Each pending pod decided by the columnar cycle and by the full one on the same state; the
    full cycle's node bound. The number of cycles the columnar one answered."""
    assert sched.enable_columnar()
    columnar = sched.columnar
    ran = 0
    for p in pending:
        fw = sched.frameworks["default-scheduler"]
        fast = columnar.run(fw, p, seed)
        sched.columnar = None
        full = sched.schedule(p, seed, with_details=False)
        sched.columnar = columnar
        if fast is not None:
            ran += 1
            assert full.schedulable, p.name
            assert _slim(fast) == _slim(full), p.name
        if full.schedulable:
            sched.bind(p, full.selected_node)
    return ran


@pytest.mark.parametrize("seed", range(8))
def test_the_columnar_cycle_chooses_what_the_full_cycle_chooses(seed, vectorised):
    sched, pending = _world(seed)
    ran = _both_ways(sched, pending, seed=None if seed % 4 else 7)
    # most cycles are its own: the test would pass vacuously otherwise
    assert ran >= len(pending) // 2, ran


@pytest.mark.parametrize("name", sorted(set(RELEASES) - {REFERENCE.name}))
def test_other_releases(name, vectorised):
    """The same on the other releases ksched follows (their plugins' differences stay in the
    plugins' own code; OpportunisticBatching's releases leave every cycle to the full cycle)."""
    release = RELEASES[name]
    for seed in range(3):
        sched, pending = _world(seed, release)
        if sched.batches:
            # a cycle there may place the pod on its batch's hint: never the columnar cycle's
            assert sched.enable_columnar()
            assert not sched.columnar.applies(sched.frameworks["default-scheduler"])
            for p in pending:
                sched.schedule(p, with_details=False)
            assert sched.columnar.ran == sched.columnar.declined == 0
            continue
        ran = _both_ways(sched, pending)
        assert ran >= len(pending) // 2, (name, ran)


@pytest.mark.parametrize("seed", range(3))
def test_ties_and_a_uniform_cluster(seed, vectorised):
    """Many nodes alike: the best score shared by most, the tie broken by name (or the seed)."""
    nodes = [node(f"n{i:02d}", labels={"topology.kubernetes.io/zone": ZONES[i % 3]}) for i in reversed(range(N))]
    sched = scheduler(nodes, [])
    pending = [pod(f"p{k}", requests={"cpu": "100m", "memory": "64Mi"}) for k in range(40)]
    assert _both_ways(sched, pending, seed=None if seed == 0 else seed) == len(pending)


def test_it_declines_what_it_cannot_run(vectorised):
    """An unschedulable pod, a pod with a nominated node, a pod whose PreFilter narrows the nodes:
    the full cycle runs (it reports the statuses and runs PostFilter)."""
    sched, _ = _world(1)
    assert sched.enable_columnar()
    fw = sched.frameworks["default-scheduler"]
    huge = pod("huge", requests={"cpu": "64"})
    assert sched.columnar.run(fw, huge, None) is None
    fields = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n03"]}]}
    narrowed = pod(
        "narrowed",
        spec={
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [fields]}}
            }
        },
        requests={"cpu": "10m"},
    )
    assert sched.columnar.run(fw, narrowed, None) is None  # NodeAffinity's PreFilter result: one node
    nominated = copy.deepcopy(pod("nom", requests={"cpu": "10m"}).raw)
    nominated["status"]["nominatedNodeName"] = "n04"
    assert sched.columnar.run(fw, Pod(nominated), None) is None
    assert sched.columnar.declined == 3 and sched.columnar.ran == 0
    assert dict(sched.columnar.declined_by) == {"unschedulable": 1, "PreFilter": 1, "nominated pods": 1}
    pinned = pod("pinned", spec={"nodeName": "n03"}, requests={"cpu": "10m"})
    assert sched.columnar.run(fw, pinned, None).selected_node == "n03"


def _replica_set_pods(raws: list) -> list:
    """Pods of the raw objects, each owned by a ReplicaSet named after its app (recreated when its
    node fails)."""
    for raw in raws:
        app = raw["metadata"]["labels"]["app"]
        raw["metadata"]["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app, "uid": f"rs-{app}", "controller": True}
        ]
    return [Pod(raw) for raw in raws]


def test_a_sweep_gives_the_same_document_with_and_without_it(vectorised):
    """Every zone and every node of a random cluster, its pods ReplicaSet pods (recreated when
    their node fails): the findings are the same documents, most cycles the columnar ones."""
    sched, pending = _world(3)
    cluster = sched.cluster
    bound = []
    for r in sched.run_sequence(pending):
        if r.schedulable:
            raw = copy.deepcopy(r.pod.raw)
            raw["spec"]["nodeName"] = r.selected_node
            bound.append(raw)
    cluster.pods = _replica_set_pods([*(copy.deepcopy(p.raw) for p in cluster.pods), *bound])
    base = sw.Base.of(cluster, sched.config)
    specs = [*sw.plan(cluster, fail="zone").scenarios, *sw.plan(cluster, fail="node").scenarios]
    docs = {}
    for flag in (True, False):
        base.columnar = flag
        docs[flag] = [sw.run_failure(base, s) for s in specs]
    assert docs[True] == docs[False]
    ran = base.columnar_ran
    assert sum(d["recreated"] for d in docs[True]) > 100 and ran > 100, ran


def _random_scores(rng, n: int, lo: int, hi: int) -> list[int]:
    # a few distinct values, as nodes of one domain share theirs; sometimes all equal
    distinct = [rng.randint(lo, hi) for _ in range(rng.choice([1, 2, 3, 7]))]
    return [rng.choice(distinct) for _ in range(n)]


@pytest.mark.parametrize("seed", range(4))
def test_array_normalizations_equal_the_lists(seed):
    """Each normalize_array against its plugin's list normalization on random scores: the
    default one (TaintToleration reversed, NodeAffinity not, negative scores truncated toward
    zero), InterPodAffinity's float64 one (large spreads, where the operations' order shows),
    PodTopologySpread's with and without ignored nodes."""
    import numpy as np

    from kschedcli.plugins.interpodaffinity import plugin as ipa
    from kschedcli.plugins.podtopologyspread import plugin as pts
    from kschedcli.plugins.podtopologyspread.counting import PreScoreState

    rng = random.Random(seed)
    sched, _ = _world(seed)
    fw = sched.frameworks["default-scheduler"]
    names = sched.snapshot.names
    at = np.arange(len(names))
    p = pod("x")
    for name in ("TaintToleration", "NodeAffinity"):
        pl = fw.plugins[name]
        for _ in range(50):
            scores = _random_scores(rng, len(names), -300, 300)
            state = CycleState()
            table = dict(zip(names, scores))
            pl.normalize_score(state, p, table)
            want = list(table.values())
            got = pl.normalize_array(state, p, np.array(scores, dtype=np.int64), at)
            assert got.tolist() == want, name
    pl = fw.plugins["InterPodAffinity"]
    state = CycleState()
    state.write(ipa.PRE_SCORE_KEY, ipa.PreScoreState(p, {}))
    state.get(ipa.PRE_SCORE_KEY).topology_score = {"zone": {"a": 1}}
    # (where 100 * (v / d) and 100 * v / d differ in float64: 29 of 100, 29 of 50)
    samples = [[0, 29, 57, 58, 100], [0, 29, 50], [-7, 22, 43]]
    for _ in range(300):
        bound = rng.choice([10, 1000, 10**6, 2**40])
        samples.append(_random_scores(rng, len(names), -bound, bound))
    for scores in samples:
        want, _ = pl.normalize_scores(state, p, list(scores), names[: len(scores)])
        got = pl.normalize_array(state, p, np.array(scores, dtype=np.int64), at[: len(scores)])
        assert got.tolist() == want, scores
    pl = fw.plugins["PodTopologySpread"]
    for ignored in (set(), {names[1], names[4]}, set(names)):
        s = PreScoreState()
        s.ignored_nodes = ignored
        state = CycleState()
        state.write(pts.PRE_SCORE_KEY, s)
        for _ in range(50):
            scores = _random_scores(rng, len(names), 0, 400)
            want, _ = pl.normalize_scores(state, p, list(scores), names)
            assert pl.normalize_array(state, p, np.array(scores, dtype=np.int64), at).tolist() == want


def test_each_cycle_counts_once(vectorised):
    """A cycle the columnar cycle answers counts once, and so does one it leaves to the full
    cycle, even after its PreScore ran (a score out of range)."""
    sched, pending = _world(2)
    assert sched.enable_columnar()
    for p in pending[:20]:
        before = sched.cycles
        r = sched.schedule(p, with_details=False)
        assert sched.cycles == before + 1
        if r.schedulable:
            sched.bind(p, r.selected_node)
    fw = sched.frameworks["default-scheduler"]
    ba = fw.plugins["NodeResourcesBalancedAllocation"]

    class OutOfRange:
        """BalancedAllocation, scoring every node 300 (and not saying its scores are in range)."""

        name = ba.name

        def __getattr__(self, attr):
            return getattr(ba, attr)

        def array_scores_in_range(self, state):
            return False

        def score_array(self, state, pod, nodes):
            import numpy as np

            return np.full(len(nodes), 300, dtype=np.int64)

    fw.score_plugins = [OutOfRange() if pl is ba else pl for pl in fw.score_plugins]
    before, declined = sched.cycles, sched.columnar.declined
    p = pod("late", requests={"cpu": "10m", "memory": "10Mi"})
    sched.schedule(p, with_details=False)
    assert sched.columnar.declined == declined + 1 and sched.cycles == before + 1


def test_explicit_success_statuses_pass(vectorised):
    """A filter plugin returning Success statuses (not None) passes those nodes, as the full
    cycle's first failures read them; its rejections still count."""
    from kschedcli.framework.status import SUCCESS, UNSCHEDULABLE, Status

    class Explicit:
        name = "Explicit"

        def filter(self, state, pod, node_info):
            n = int(node_info.node.name[1:])
            if n % 7 == 3:
                return Status(UNSCHEDULABLE, "not this one")
            return Status(SUCCESS) if n % 2 else None

    sched, pending = _world(4)
    fw = sched.frameworks["default-scheduler"]
    fw.filter_plugins = [*fw.filter_plugins, Explicit()]
    assert _both_ways(sched, pending) >= len(pending) // 2
    chosen = [r.selected_node for r in sched.run_sequence([pod(f"q{k}", requests={"cpu": "10m"}) for k in range(5)])]
    assert chosen and all(int(n[1:]) % 7 != 3 for n in chosen)


def test_label_codes_and_name_ranks_of_a_derived_snapshot():
    """A snapshot without some nodes takes its parent's label codes and name ranks less the
    removed nodes: the same values per node, the same order by name, as its own would be."""
    import numpy as np

    sched, _ = _world(1)
    shuffled = [n.node for n in sched.snapshot.node_infos]
    random.Random(5).shuffle(shuffled)
    parent = scheduler(shuffled, []).snapshot
    gone = {parent.names[i] for i in (0, 4, 5, 17)}
    child = parent.without_nodes(gone)
    for key in ("topology.kubernetes.io/zone", "kubernetes.io/hostname", "disk"):
        codes, distinct = child.label_codes(key, np)
        assert [None if c < 0 else distinct[c] for c in codes.tolist()] == child.label_column(key)
    order = [child.names[i] for i in np.argsort(child.name_ranks(np)).tolist()]
    assert order == sorted(child.names)


@pytest.mark.parametrize("seed", range(4))
def test_image_locality_array_equals_its_list_scorer(seed):
    """ImageLocality.score_array against score_nodes on random nodes listing random images
    (names under several tags, sizes around the thresholds, one image listed at two sizes),
    for pods of one to four containers and init containers, on the snapshot, on a snapshot
    without some nodes (fewer nodes hold some images) and after add_node."""
    import numpy as np

    rng = random.Random(seed)
    images = [f"reg/img{i}:v{i % 3}" for i in range(6)] + ["reg/plain"]  # (plain: ":latest" added)
    nodes = []
    for i in range(40):
        held = rng.sample(images, rng.randint(0, 4))
        listed = [
            {
                "names": [n if not n.endswith("plain") else n + ":latest"],
                "sizeBytes": rng.choice([5, 23, 24, 400, 999, 1000, 3000]) * 2**20 + rng.randint(0, 10),
            }
            for n in held
        ]
        nodes.append(node(f"n{i:02d}", images=listed))
    sched = scheduler(nodes, [])
    fw = sched.frameworks["default-scheduler"]
    pl = fw.plugins["ImageLocality"]
    said: set[bool] = set()

    def compare(snapshot, pods):
        pl.handle.snapshot = snapshot
        positions = sorted(rng.sample(range(len(snapshot.node_infos)), rng.randint(1, len(snapshot.node_infos))))
        feasible = [snapshot.node_infos[i] for i in positions]
        for p in pods:
            state = CycleState()
            state.score_positions = positions
            state.score_positions_array = (positions, np.array(positions, dtype=np.intp))
            got = pl.score_array(state, p, feasible)
            want, st = pl.score_nodes(state, p, feasible)
            assert st is None
            assert got is not None and got.tolist() == want, p.name
            assert [pl.score(state, p, ni)[0] for ni in feasible] == want
            # the same score on every node of the snapshot exactly when it says so
            every = {pl.score(state, p, ni)[0] for ni in snapshot.node_infos}
            constant = pl.constant_array_scores(state, p)
            assert constant == (len(every) == 1), p.name
            said.add(constant)

    def some_pods(k):
        out = []
        for j in range(k):
            cs = [{"name": f"c{c}", "image": rng.choice(images)} for c in range(rng.randint(1, 4))]
            init = [{"name": f"i{c}", "image": rng.choice(images)} for c in range(rng.randint(0, 2))]
            out.append(pod(f"p{j}", containers=cs, init_containers=init or None))
        return out

    base = sched.snapshot
    compare(base, some_pods(40))
    derived = base.without_nodes({f"n{i:02d}" for i in rng.sample(range(40), 15)})
    compare(derived, some_pods(40))
    derived.add_node(node("extra", images=[{"names": [images[0]], "sizeBytes": 700 * 2**20}]), [], images=True)
    compare(derived, some_pods(40))
    pl.handle.snapshot = base
    assert said == {True, False}


@pytest.mark.parametrize("seed", range(4))
def test_pods_with_bound_claims(seed, vectorised):
    """Pods whose claims are bound to PVs with zone or host affinity (VolumeBinding's filter as an
    array; NodeVolumeLimits node by node before it): chosen as the full cycle chooses, and a pod
    whose PVs no node matches left to the full cycle without a node-by-node pass."""
    sched, pending = _world(seed)
    rng = random.Random(seed)
    objects = sched.cluster.objects
    objects["StorageClass"][("", "gp3")] = {
        "kind": "StorageClass",
        "metadata": {"name": "gp3"},
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    with_claims = []
    for k in range(40):
        where = rng.choice(
            [
                ("topology.kubernetes.io/zone", rng.choice([*ZONES, "d"])),
                ("kubernetes.io/hostname", f"host-{rng.randrange(N)}"),
            ]
        )
        objects["PersistentVolume"][("", f"pv{k}")] = {
            "kind": "PersistentVolume",
            "metadata": {"name": f"pv{k}"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "capacity": {"storage": "1Gi"},
                "storageClassName": "gp3",
                "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": f"vol-{k}"},
                "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default", "name": f"c{k}", "uid": f"u{k}"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": where[0], "operator": "In", "values": [where[1]]}]}
                        ]
                    }
                },
            },
            "status": {"phase": "Bound"},
        }
        objects["PersistentVolumeClaim"][("default", f"c{k}")] = {
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": f"c{k}",
                "namespace": "default",
                "uid": f"u{k}",
                "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
            },
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "gp3",
                "volumeName": f"pv{k}",
                "resources": {"requests": {"storage": "1Gi"}},
            },
            "status": {"phase": "Bound"},
        }
        p = pod(
            f"v{k}",
            requests={"cpu": "100m"},
            spec={"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": f"c{k}"}}]},
        )
        with_claims.append(p)
    nowhere = {
        f"v{k}"
        for k in range(40)
        if objects["PersistentVolume"][("", f"pv{k}")]["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0][
            "matchExpressions"
        ][0]["values"]
        == ["d"]
    }
    fw = sched.frameworks["default-scheduler"]
    node_by_node: list[tuple[str, str]] = []
    column = fw.filter_column

    def spy(pl, state, p, nodes):
        node_by_node.append((p.name, pl.name))
        return column(pl, state, p, nodes)

    fw.filter_column = spy
    queue = [x for pair in zip(pending, with_claims) for x in pair]
    ran = _both_ways(sched, queue)
    columnar = sched.columnar
    assert ran >= len(queue) // 2, ran
    assert nowhere and columnar.declined_by["unschedulable"] >= len(nowhere)
    # VolumeBinding never node by node; NodeVolumeLimits (before it) not for a pod no node takes
    assert "VolumeBinding" not in {name for _, name in node_by_node}
    assert not nowhere & {p for p, _ in node_by_node}
    assert {p for p, name in node_by_node if name == "NodeVolumeLimits"}


@pytest.mark.parametrize("seed", range(6))
def test_scores_said_in_range_are_in_range(seed, vectorised, monkeypatch):
    """Plugin.array_scores_in_range passes the range check over: every array score a plugin says
    is in range, on random clusters (their extremes: full and empty nodes, taints, spreads, image
    sizes), lies in [0, 100]; each such plugin's claim met at least once."""
    sched, pending = _world(seed)
    claimed: dict[str, int] = {}
    orig = col.ColumnarCycle._scores

    def _scores(self, fw, pl, state, pod, feasible, positions, at):
        out = orig(self, fw, pl, state, pod, feasible, positions, at)
        if out is not None and pl.array_scores_in_range(state):
            assert int(out.min()) >= 0 and int(out.max()) <= 100, pl.name
            claimed[pl.name] = claimed.get(pl.name, 0) + 1
        return out

    monkeypatch.setattr(col.ColumnarCycle, "_scores", _scores)
    # (every plugin summed, none left out as constant: each claim is met)
    for name in ("TaintToleration", "ImageLocality"):
        cls = type(sched.frameworks["default-scheduler"].plugins[name])
        monkeypatch.setattr(cls, "constant_array_scores", lambda self, state, pod: False)
    _both_ways(sched, pending)
    assert {"NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality", "TaintToleration"} <= set(claimed)
    assert "NodeAffinity" not in claimed  # (its preferred terms' weights are not held to a sign)


def test_a_score_out_of_range_declines_the_columnar_cycle(vectorised):
    """A plugin that does not say its scores are in range is checked: a negative preferred
    node-affinity weight (kube-apiserver refuses it; `--validate ignore` lets it through) gives
    a negative normalized score, the columnar cycle declines, the full cycle reports the error."""
    sched, _ = _world(1)
    bad = pod(
        "neg",
        requests={"cpu": "10m"},
        spec={
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": -5,
                            "preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
                        }
                    ]
                }
            }
        },
    )
    assert sched.enable_columnar()
    fw = sched.frameworks["default-scheduler"]
    assert sched.columnar.run(fw, bad, None) is None
    assert sched.columnar.declined_by["NodeAffinity"] == 1


@pytest.mark.parametrize("seed", range(6))
def test_scores_said_constant_are_the_same_on_every_node(seed, vectorised, monkeypatch):
    """Plugin.constant_array_scores leaves a plugin out of the sum: wherever TaintToleration or
    ImageLocality says so, its score (its own node-by-node one, normalized over every node) is
    one value on every node of the snapshot; TaintToleration says so, and says not, at least once
    (ImageLocality's both ways: test_image_locality_array_equals_its_list_scorer)."""
    from kschedcli.plugins.imagelocality import ImageLocality
    from kschedcli.plugins.tainttoleration import TaintToleration

    sched, pending = _world(seed)
    said: dict[tuple[str, bool], int] = {}
    for cls in (TaintToleration, ImageLocality):
        orig = cls.constant_array_scores

        def constant(self, state, pod, _orig=orig):
            out = _orig(self, state, pod)
            nodes = self.handle.snapshot.node_infos
            scores = {ni.node.name: self.score(state, pod, ni)[0] for ni in nodes}
            if hasattr(self, "normalize_score"):
                self.normalize_score(state, pod, scores)
            if out:
                assert len(set(scores.values())) == 1, (self.name, pod.name)
            key = (self.name, out)
            said[key] = said.get(key, 0) + 1
            return out

        monkeypatch.setattr(cls, "constant_array_scores", constant)
    _both_ways(sched, pending)
    assert {("TaintToleration", True), ("TaintToleration", False)} <= set(said), said


def test_taint_toleration_constant_counts_the_untainted_nodes():
    """Every tainted node with the same intolerable PreferNoSchedule taint: one count on them, 0
    on an untainted node, so not constant; constant where no node is untainted, or the pod
    tolerates the taint."""
    soft = [{"key": "soft", "value": "x", "effect": "PreferNoSchedule"}]
    tolerating = pod("t", spec={"tolerations": [{"key": "soft", "operator": "Exists"}]})
    plain = pod("p")
    for nodes, want in (
        ([node("a", taints=soft), node("b", taints=soft), node("c")], {"p": False, "t": True}),
        ([node("a", taints=soft), node("b", taints=soft)], {"p": True, "t": True}),
        ([node("a"), node("b")], {"p": True, "t": True}),
    ):
        sched = scheduler(nodes, [])
        pl = sched.frameworks["default-scheduler"].plugins["TaintToleration"]
        got = {}
        for p in (plain, tolerating):
            p._cache.clear()
            state = CycleState()
            pl.pre_score(state, p, sched.snapshot.node_infos)
            got[p.name] = pl.constant_array_scores(state, p)
        assert got == want, [n.name for n in nodes]


def test_spread_counts_skip_nodes_lacking_a_key_of_the_pods_constraints(vectorised):
    """A pod's own soft spread over zone and hostname counts, per zone, only the nodes that have
    both labels: a node without its hostname label holds matching pods that must not count in
    its zone (the columnar cycle sums them in numpy, the full cycle node by node)."""
    zone = "topology.kubernetes.io/zone"
    nodes = [node(f"n{i}", labels={zone: ZONES[i % 2]}) for i in range(6)]
    del nodes[0].labels["kubernetes.io/hostname"]
    existing = [pod(f"e{j}", labels={"app": "web"}, node_name="n0", requests={"cpu": "10m"}) for j in range(6)]
    existing += [pod("f0", labels={"app": "web"}, node_name="n1", requests={"cpu": "10m"})]
    sched = scheduler(nodes, existing)
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": k,
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
        for k in (zone, "kubernetes.io/hostname")
    ]
    pending = [
        pod(f"p{k}", labels={"app": "web"}, requests={"cpu": "10m"}, spec={"topologySpreadConstraints": spread})
        for k in range(4)
    ]
    assert _both_ways(sched, pending) == 4


def test_nothing_a_scenario_built_outlives_it(vectorised, monkeypatch):
    """A sweep scenario's snapshot (and all it holds: the bound replacements, the scenario's
    indexes) is freed when the scenario ends: what plugins keep between cycles lives on the
    plugin, not on the pods' `_cache` (which the loaded world's templates may keep), so that a
    worker's memory stays flat and the scenario's end has nothing to pass over."""
    import weakref

    from kschedcli.backend.snapshot import Snapshot

    sched, pending = _world(5)
    cluster = sched.cluster
    raws = [*(copy.deepcopy(p.raw) for p in cluster.pods), *(copy.deepcopy(p.raw) for p in pending[:40])]
    for i, raw in enumerate(raws):
        raw["spec"]["nodeName"] = f"n{i % N:02d}"
    cluster.pods = _replica_set_pods(raws)
    base = sw.Base.of(cluster, sched.config)
    made: list = []
    derive = Snapshot.without_nodes

    def without_nodes(self, names):
        out = derive(self, names)
        made.append(weakref.ref(out))
        return out

    monkeypatch.setattr(Snapshot, "without_nodes", without_nodes)
    specs = sw.plan(cluster, fail="zone").scenarios
    for spec in specs:
        sw.run_failure(base, spec)
        assert made and all(ref() is None for ref in made), spec.name
    assert base.columnar_ran > 20
