"""Seed scenarios of issue 3 (infrastructure half): small whole stacks through every registered policy."""

from __future__ import annotations

from typing import Any

from policies.gpu_guard.base import all_policies
from tests.policies.harness import run_policy
from tests.policies.test_seed_scenarios import HARDENED_CONTROL_PLANE

POLICIES = {p.name: p for p in all_policies()}

_CLUSTER = {"type": "aws:eks/cluster:Cluster", "name": "gpu-dev",
            "props": {"name": "gpu-dev", "version": "1.35", **HARDENED_CONTROL_PLANE}}
_SYSTEM = {
    "type": "aws:eks/nodeGroup:NodeGroup", "name": "gpu-dev-system",
    "props": {"clusterName": "gpu-dev", "instanceTypes": ["m7i.large"], "launchTemplate": {"id": "lt-1"},
              "scalingConfig": {"minSize": 2, "desiredSize": 2, "maxSize": 3}, "subnetIds": ["subnet-a", "subnet-b"]},
}
_GPU = {
    "type": "aws:eks/nodeGroup:NodeGroup", "name": "gpu-dev-a10g",
    "props": {"clusterName": "gpu-dev", "instanceTypes": ["g5.xlarge"], "launchTemplate": {"id": "lt-2"},
              "scalingConfig": {"minSize": 0, "desiredSize": 1, "maxSize": 2}, "subnetIds": ["subnet-a"],
              "labels": {"gpu-platform.io/pool": "a10g", "gpu-platform.io/os": "ubuntu-24.04",
                         "gpu-platform.io/driver": "580.173.02", "gpu-platform.io/driver-source": "operator"},
              "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]},
}


def _run_all(resources: list[dict[str, Any]]) -> dict[str, tuple[str, ...]]:
    """Every policy's violation messages (policies that could not judge are left out)."""
    out: dict[str, tuple[str, ...]] = {}
    for name, policy in POLICIES.items():
        outcome = run_policy(policy, resources, None)
        if outcome.messages:
            out[name] = outcome.messages
    return out


def _fires(verdicts: dict[str, tuple[str, ...]], policy: str, text: str) -> None:
    assert policy in POLICIES, f"{policy} is not registered"
    messages = verdicts.get(policy, ())
    assert any(text in m for m in messages), f"{policy} did not report {text!r}; it reported {list(messages)}"


def test_rejects_a_gpu_only_cluster():
    verdicts = _run_all([_CLUSTER, _GPU])
    _fires(verdicts, "system-node-group-present", "No untainted, non-GPU node group with minSize >= 1 exists")


def test_a_cluster_with_a_system_node_group_passes_the_node_group_rule():
    verdicts = _run_all([_CLUSTER, _SYSTEM, _GPU])
    assert "system-node-group-present" not in verdicts
    assert "gpu-nodes-tainted" not in verdicts


def test_rejects_read_only_many_on_ebs():
    storage_class = {"type": "kubernetes:storage.k8s.io/v1:StorageClass", "name": "ebs-gp3",
                     "props": {"metadata": {"name": "ebs-gp3"}, "provisioner": "ebs.csi.aws.com",
                               "parameters": {"type": "gp3", "encrypted": "true"}}}
    claim = {"type": "kubernetes:core/v1:PersistentVolumeClaim", "name": "models",
             "props": {"metadata": {"name": "models", "namespace": "inference"},
                       "spec": {"accessModes": ["ReadOnlyMany"], "storageClassName": "ebs-gp3",
                                "resources": {"requests": {"storage": "100Gi"}}}}}
    verdicts = _run_all([storage_class, claim])
    _fires(verdicts, "ebs-access-mode-supported",
           "PersistentVolumeClaim 'models' on EBS StorageClass 'ebs-gp3' (ebs.csi.aws.com, type gp3) asks for "
           "ReadOnlyMany, which the EBS CSI driver rejects")


def test_rejects_a_v1beta1_nodepool():
    nodepool = {"type": "kubernetes:karpenter.sh/v1beta1:NodePool", "name": "default",
                "props": {"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool", "metadata": {"name": "default"},
                          "spec": {"template": {"spec": {"nodeClassRef": {"name": "default"},
                                                         "requirements": []}},
                                   "disruption": {"consolidationPolicy": "WhenUnderutilized"}}}}
    verdicts = _run_all([nodepool])
    _fires(verdicts, "karpenter-v1-api", "NodePool 'default' uses karpenter.sh/v1beta1; Karpenter v1 serves only "
                                         "karpenter.sh/v1")
    _fires(verdicts, "karpenter-v1-api", "WhenUnderutilized is the v1beta1 name, v1 calls it WhenEmptyOrUnderutilized")


def test_rejects_an_unquoted_listen_ports_annotation():
    listen_ports = "[{HTTP: 80}, {HTTPS: 443}]"
    ingress = {"type": "kubernetes:networking.k8s.io/v1:Ingress", "name": "gpu-inference",
               "props": {"metadata": {"name": "gpu-inference", "annotations": {
                   "alb.ingress.kubernetes.io/scheme": "internet-facing",
                   "alb.ingress.kubernetes.io/listen-ports": listen_ports,
                   "alb.ingress.kubernetes.io/certificate-arn": "arn:aws:acm:us-west-2:111122223333:certificate/x",
                   "alb.ingress.kubernetes.io/ssl-redirect": "443",
                   "alb.ingress.kubernetes.io/ssl-policy": "ELBSecurityPolicy-TLS13-1-2-2021-06"}},
                         "spec": {"ingressClassName": "alb"}}}
    verdicts = _run_all([ingress])
    _fires(verdicts, "alb-https-only",
           """listen-ports '[{HTTP: 80}, {HTTPS: 443}]', which is not valid JSON (keys must be quoted), so the """
           """controller rejects the Ingress. Fix: alb.ingress.kubernetes.io/listen-ports: """
           """'[{"HTTP": 80}, {"HTTPS": 443}]'""")
