"""Stateful safety, read off the recorded resources and their options (issue 20).

The model snapshot can never be deleted by the stack (Retain in the cluster, `protect` and `retainOnDelete` in
Pulumi), the prod cluster and its key are protected, and replacing a node group or a NodePool drains through
the services' PodDisruptionBudgets.

Sources:
- Managed node group updates drain by eviction, honouring PDBs, unless forced (`forceUpdateVersion`), at most
  `updateConfig.maxUnavailable` nodes at a time:
  https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html
- Karpenter disruption budgets (`spec.disruption.budgets[].nodes`) and `terminationGracePeriod`, past which a
  draining node no longer waits on PDBs: https://karpenter.sh/docs/concepts/disruption/. Without it, a PDB
  that never allows an eviction holds an expired node forever (issue 26), so every NodePool sets it, long
  enough (24h by default) that a drain waits on the PDBs through any ordinary rollout.
- `protect` / `retainOnDelete`: https://www.pulumi.com/docs/iac/concepts/options/protect/,
  https://www.pulumi.com/docs/iac/concepts/options/retainondelete/
"""

from __future__ import annotations

import pytest

from tests.security.documents import STACKS, stack_run
from tools.engine.view import analyzer_options

SNAPSHOT_CONTENT = "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotContent"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
PDB = "kubernetes:policy/v1:PodDisruptionBudget"


@pytest.mark.parametrize("stack", STACKS)
def test_the_model_snapshot_is_retained_protected_and_kept_on_delete(stack: str):
    contents = stack_run(stack).of_type(SNAPSHOT_CONTENT)
    assert contents, "each stack's service restores its model from a snapshot"
    for content in contents:
        assert content.inputs["spec"]["source"]["snapshotHandle"].startswith("snap-")
        assert content.inputs["spec"]["deletionPolicy"] == "Retain", content.name
        assert (content.protect, content.retain_on_delete) == (True, True), content.name
        # What model-snapshot-retained receives from the engine: the protect option, as the gate sends it.
        assert analyzer_options(content).protect is True


@pytest.mark.parametrize(("stack", "protected"), [("dev", False), ("prod", True)])
def test_the_vpc_and_the_nat_addresses_are_protected_where_the_cluster_is(stack: str, protected: bool):
    # cluster.deletionProtection: off in dev, on in prod (tests/components/test_eks_control_plane.py).
    result = stack_run(stack)
    vpcs, addresses = result.of_type("aws:ec2/vpc:Vpc"), result.of_type("aws:ec2/eip:Eip")
    assert len(vpcs) == 1 and addresses
    for resource in [*vpcs, *addresses]:
        assert resource.protect is protected, resource.name
        assert analyzer_options(resource).protect is protected
    # The NAT gateways stay unprotected: a replacement takes the same protected address.
    assert not any(s.protect for s in result.of_type("aws:ec2/natGateway:NatGateway"))


@pytest.mark.parametrize("stack", STACKS)
def test_node_group_updates_drain_one_node_at_a_time_through_the_pdbs(stack: str):
    groups = stack_run(stack).of_type(NODE_GROUP)
    assert groups
    for group in groups:
        assert group.inputs["updateConfig"] == {"maxUnavailable": 1}, group.name
        assert group.inputs.get("forceUpdateVersion") in (None, False), group.name


@pytest.mark.parametrize("stack", STACKS)
def test_nodepools_disrupt_one_node_at_a_time_and_wait_on_the_pdbs(stack: str):
    pools = stack_run(stack).of_type(NODE_POOL)
    assert pools
    for pool in pools:
        spec = pool.inputs["spec"]
        assert spec["disruption"]["budgets"] == [{"nodes": "1"}], pool.name
        grace = spec["template"]["spec"]["terminationGracePeriod"]
        assert grace == "24h", pool.name  # the config default; the drain waits on the PDBs for a day, then forces


@pytest.mark.parametrize("stack", STACKS)
def test_every_service_deployment_has_a_pdb_that_lets_one_replica_go(stack: str):
    result = stack_run(stack)
    deployments = result.of_type(DEPLOYMENT)
    assert deployments
    budgets = [b.inputs["spec"] for b in result.of_type(PDB)]
    for deployment in deployments:
        selector = deployment.inputs["spec"]["selector"]["matchLabels"]
        matching = [b for b in budgets if b["selector"]["matchLabels"].items() <= selector.items()]
        assert [b["maxUnavailable"] for b in matching] == [1], deployment.name
