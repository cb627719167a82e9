"""The parts of system-node-group-present's "cannot be scheduled" message (`_homeless`): every other home it
names, joined exactly, and the fix it proposes for each kind of controller.

Written from the survivors of the mutation run (docs/testing.md); the fixtures assert these messages only in part.
"""

from __future__ import annotations

from policies.gpu_guard.homes import FargateProfile
from policies.gpu_guard.rules.system_node_group_present import _homeless, _Placement, _terms
from policies.gpu_guard.views import Pool, Taint


def _placement(chart: str) -> _Placement:
    return _Placement(chart, "controller", (("nodeSelector",),), {}, {})


def _pool(name: str, kind: str, *taints: Taint, labels: dict[str, str] | None = None) -> Pool:
    return Pool(urn=f"urn:{name}", name=name, kind=kind, labels=labels or {}, label_domain={}, taints=taints,
                instance_types=(), min_size=1)


GPU_TAINT = Taint("nvidia.com/gpu", "true", "NoSchedule")
TAINTED = _pool("gpu-spot", "karpenter-nodepool", GPU_TAINT)
PLAIN = _pool("general", "karpenter-nodepool")
SYSTEM = _pool("system", "managed-node-group", labels={"gpu-platform.io/role": "system"})
PROFILES = [FargateProfile("urn:fp1", "fp-system", (("kube-system", {}),)),
            FargateProfile("urn:fp2", "fp-karpenter", (("karpenter", {"app": "karpenter"}),))]


def test_no_system_group_names_every_nodepool_and_profile_and_every_fix() -> None:
    assert _homeless(_placement("keda"), [], [TAINTED, PLAIN], PROFILES, None) == (
        " or other home",
        "; no system node group",
        "; NodePools: 'gpu-spot' taints ['nvidia.com/gpu=true:NoSchedule']; 'general' taints none"
        "; namespace not known matches no Fargate profile 'fp-system' (namespace kube-system); "
        "Fargate profile 'fp-karpenter' (namespace karpenter labels {'app': 'karpenter'})",
        "add a system managed node group or an untainted NodePool, or a Fargate profile that selects its namespace, "
        "or tolerate a NodePool's taint",
    )


def test_untainted_nodepools_offer_no_taint_to_tolerate() -> None:
    assert _homeless(_placement("keda"), [], [PLAIN], [], "keda") == (
        " or other home", "; no system node group", "; NodePools: 'general' taints none",
        "add a system managed node group or an untainted NodePool, or a Fargate profile that selects its namespace",
    )


def test_karpenter_cannot_run_on_a_nodepool_so_none_is_named() -> None:
    assert _homeless(_placement("karpenter"), [], [TAINTED], PROFILES[:1], "karpenter") == (
        " or other home", "; no system node group",
        "; namespace karpenter matches no Fargate profile 'fp-system' (namespace kube-system)",
        "add a system managed node group, or a Fargate profile that selects its namespace",
    )
    assert _homeless(_placement("karpenter"), [], [TAINTED], [], "karpenter") == (
        "", "; no system node group", "",
        "add a system managed node group, or a Fargate profile that selects its namespace",
    )


def test_with_a_system_group_the_fix_is_the_selector() -> None:
    assert _homeless(_placement("gpu-operator"), [SYSTEM, PLAIN], [], [], "gpu-operator") == (
        "", "; system node groups: 'system' labels {'gpu-platform.io/role': 'system'}; 'general' labels {}", "",
        "point its nodeSelector at a label the system node group carries, or leave it unset",
    )


def test_required_node_affinity_is_told_term_by_term() -> None:
    terms = ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]},
                                  {"key": "b", "operator": "Exists"}]},
             {"matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["y", "z"]}]})
    assert _terms(terms) == "a In ['x'] AND b Exists [] OR c NotIn ['y', 'z']"
    assert _terms(None) == _terms(()) == "none"
