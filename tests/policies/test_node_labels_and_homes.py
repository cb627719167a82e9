"""The labels a NodePool's nodes carry (node_labels.py) and the homes besides node groups (homes.py).

Sources: https://karpenter.sh/docs/concepts/scheduling/#well-known-labels ;
https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html (Auto Mode's eks.amazonaws.com labels);
https://docs.aws.amazon.com/eks/latest/userguide/set-builtin-node-pools.html ;
https://docs.aws.amazon.com/eks/latest/userguide/fargate-profile.html (selectors, wildcards).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from policies.gpu_guard.homes import FargateProfile, auto_mode_pools, fargate_profiles
from policies.gpu_guard.node_labels import definitely_gpu, nodepool_domain
from policies.gpu_guard.views import Taint


def test_an_auto_mode_pool_carries_the_eks_labels_and_the_gpu_name_of_its_families():
    domain, types = nodepool_domain({}, [{"key": "eks.amazonaws.com/instance-family", "operator": "In",
                                          "values": ["g6e"]}], "gpu", auto_mode=True)
    assert types == ()
    assert domain["eks.amazonaws.com/compute-type"] == frozenset({"auto"})
    assert domain["eks.amazonaws.com/instance-family"] == frozenset({"g6e"})
    assert domain["eks.amazonaws.com/instance-gpu-name"] == frozenset({"l40s"})
    assert domain["eks.amazonaws.com/instance-gpu-count"] is None
    assert "karpenter.k8s.aws/instance-family" not in domain
    assert domain["karpenter.sh/nodepool"] == frozenset({"gpu"})
    assert definitely_gpu(domain, types)


def test_a_cpu_family_pool_has_no_gpu_labels_and_does_not_exist_removes_a_label():
    domain, _ = nodepool_domain({"team": "infra"}, [
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m7i"]},
        {"key": "topology.kubernetes.io/zone", "operator": "DoesNotExist"},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
    ], "general", auto_mode=False)
    assert "karpenter.k8s.aws/instance-gpu-count" not in domain
    assert "topology.kubernetes.io/zone" not in domain
    assert domain["kubernetes.io/arch"] == frozenset({"arm64"})  # a requirement replaces Karpenter's default
    assert domain["team"] == frozenset({"infra"})
    assert not definitely_gpu(domain, ())


def test_an_unconstrained_pool_may_launch_gpu_instances():
    domain, _ = nodepool_domain({}, [], "any", auto_mode=False)
    assert domain["karpenter.k8s.aws/instance-gpu-count"] is None
    assert not definitely_gpu(domain, ())


def _cluster(compute: dict[str, object]) -> SimpleNamespace:
    return SimpleNamespace(resource_type="aws:eks/cluster:Cluster", props={"computeConfig": compute},
                           urn="urn:cluster", name="c")


def test_auto_mode_brings_the_built_in_pools_it_enables():
    pools = {p.name: p for p in auto_mode_pools([_cluster({"enabled": True, "nodePools": ["system",
                                                                                       "general-purpose"]})])}
    assert set(pools) == {"system", "general-purpose"}
    assert pools["system"].taints == (Taint("CriticalAddonsOnly", "", "NoSchedule"),)
    assert pools["general-purpose"].taints == ()
    assert pools["general-purpose"].label_domain["kubernetes.io/arch"] == frozenset({"amd64"})
    assert all(p.auto_mode and p.kind == "auto-mode-builtin" for p in pools.values())
    assert auto_mode_pools([_cluster({"enabled": False, "nodePools": ["system"]})]) == []
    assert auto_mode_pools([_cluster({"enabled": True, "nodePools": []})]) == []


@pytest.mark.parametrize(("namespace", "labels", "runs"), [
    ("karpenter", {}, True),
    ("kube-system", {"k8s-app": "kube-dns"}, True),
    ("kube-system", {"k8s-app": "other"}, False),
    ("kube-public", {"k8s-app": "kube-dns"}, False),
    ("team-ml", {"app": "x"}, True),  # wildcard namespace
    (None, {}, False),  # a namespace not known yet
])
def test_a_fargate_profile_runs_the_pods_its_selectors_match(namespace, labels, runs):
    resource = SimpleNamespace(resource_type="aws:eks/fargateProfile:FargateProfile", urn="u", name="f", props={
        "selectors": [{"namespace": "karpenter"}, {"namespace": "kube-system", "labels": {"k8s-app": "kube-dns"}},
                      {"namespace": "team-*", "labels": {"app": "?"}}]})
    (profile,) = fargate_profiles([resource])
    assert isinstance(profile, FargateProfile)
    assert profile.runs(namespace, labels) is runs
