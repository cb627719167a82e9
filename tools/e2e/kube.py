"""The cluster side of the run, through `kubectl` with the stack's kubeconfig: wait for GPU nodes, read the
probe Jobs, scale a service's ScaledObject, and empty the cluster in the order that lets the controllers
remove what they created before `destroy` (Ingresses and their ALBs, ScaledObjects, PVCs, Karpenter NodePools
and their nodes)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GPU_RESOURCE = "nvidia.com/gpu"
POOL_LABEL = "gpu-platform.io/pool"
FORCE_ACTIVATION = "autoscaling.keda.sh/force-activation"  # docs/runbook.md: wake a service by hand


class KubeError(RuntimeError):
    pass


class KubectlError(KubeError):
    """kubectl exited non-zero (the API server refused or did not answer); a wait counts it as "not yet"."""


class ClusterUnreachable(KubeError):
    """The API server does not answer with this kubeconfig (the cleanup job runs on another runner than the one
    whose /32 the endpoint admits, or the cluster is gone): nothing in the cluster could be listed or deleted."""


# kubectl's message when a kind's CRD is not installed (Karpenter or KEDA absent): an empty list, not an error.
NO_RESOURCE_TYPE = "the server doesn't have a resource type"


@dataclass
class Kube:
    kubeconfig: Path
    kubectl: str = "kubectl"
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    log: Callable[[str], None] = print
    poll: float = 10.0
    calls: list[list[str]] = field(default_factory=list)

    def run(self, *args: str, check: bool = True) -> str:
        command = [self.kubectl, "--kubeconfig", str(self.kubeconfig), *args]
        self.calls.append(command)
        proc = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
        if check and proc.returncode != 0:
            raise KubectlError(f"kubectl {' '.join(args)}: {proc.stderr.strip()[-800:]}")
        return proc.stdout

    def items(self, *args: str) -> list[dict[str, Any]]:
        """The objects listed; [] only when the kind does not exist in the cluster. A kubectl failure raises
        KubectlError: an unreachable API server is not an empty cluster."""
        command = [self.kubectl, "--kubeconfig", str(self.kubeconfig), "get", *args, "-o", "json"]
        self.calls.append(command)
        proc = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
        if proc.returncode != 0:
            if NO_RESOURCE_TYPE in proc.stderr:
                return []
            raise KubectlError(f"kubectl get {' '.join(args)}: {proc.stderr.strip()[-800:]}")
        try:
            return list(json.loads(proc.stdout).get("items", []))
        except json.JSONDecodeError as error:
            raise KubectlError(f"kubectl get {' '.join(args)}: not JSON ({error})") from error

    def reachable(self) -> None:
        """ClusterUnreachable unless the API server answers (`/version` is readable by any authenticated user)."""
        try:
            self.run("get", "--raw", "/version", "--request-timeout=30s")
        except KubectlError as error:
            raise ClusterUnreachable(str(error)) from error

    def until(self, what: str, ready: Callable[[], bool], budget: float) -> float:
        """Poll `ready` until it holds; the seconds it took. KubeError at the end of `budget`."""
        start = self.clock()
        failure = ""
        while True:
            try:
                if ready():
                    return self.clock() - start
                failure = ""
            except KubectlError as error:  # the API did not answer this time: not a "yes"
                failure = f" (last kubectl error: {error})"
            if self.clock() - start > budget:
                raise KubeError(f"{what}: not after {budget:.0f} s{failure}")
            self.sleep(self.poll)

    # ---- GPU nodes and the probe -----------------------------------------------------------------------------

    def gpu_nodes(self, pool: str) -> list[dict[str, Any]]:
        return [n for n in self.items("nodes", "-l", f"{POOL_LABEL}={pool}") if node_ready_with_gpu(n)]

    def wait_gpu_node(self, pool: str, budget: float) -> float:
        return self.until(f"a Ready node of pool {pool} with {GPU_RESOURCE}", lambda: bool(self.gpu_nodes(pool)),
                          budget)

    def wait_probe(self, namespace: str, job: str, budget: float) -> str:
        """The probe Job's verdict line, once the Job completed; KubeError with its logs when it failed."""
        def done() -> bool:
            status = json.loads(self.run("get", "job", job, "-n", namespace, "-o", "json")).get("status", {})
            if status.get("failed", 0) and not status.get("active", 0) and not status.get("succeeded", 0):
                logs = self.run("logs", f"job/{job}", "-n", namespace, "--all-containers", check=False)
                raise KubeError(f"probe job {namespace}/{job} failed: {logs.strip()[-1500:]}")
            return bool(status.get("succeeded", 0))
        self.until(f"probe job {namespace}/{job}", done, budget)
        logs = self.run("logs", f"job/{job}", "-n", namespace, "--all-containers", check=False)
        verdicts = [line for line in logs.splitlines() if line.startswith("verdict:")]
        return verdicts[-1] if verdicts else "completed (no verdict line in the logs)"

    # ---- scaling ---------------------------------------------------------------------------------------------

    def force_activation(self, namespace: str, name: str, on: bool) -> None:
        value = f"{FORCE_ACTIVATION}=true" if on else f"{FORCE_ACTIVATION}-"
        self.run("annotate", "scaledobject", name, "-n", namespace, value, "--overwrite")

    def ready_replicas(self, namespace: str, name: str) -> int:
        out = self.run("get", "deployment", name, "-n", namespace, "-o", "json", check=False)
        try:
            return int(json.loads(out).get("status", {}).get("readyReplicas", 0) or 0)
        except json.JSONDecodeError:
            return 0

    def replicas(self, namespace: str, name: str) -> int:
        out = self.run("get", "deployment", name, "-n", namespace, "-o", "json", check=False)
        try:
            return int(json.loads(out).get("spec", {}).get("replicas", 0) or 0)
        except json.JSONDecodeError:
            return 0

    def ingress_hostname(self, namespace: str, name: str) -> str:
        out = self.run("get", "ingress", name, "-n", namespace, "-o", "json")
        ingress = json.loads(out).get("status", {}).get("loadBalancer", {}).get("ingress", [])
        return str(ingress[0].get("hostname", "")) if ingress else ""

    def nodeclaims_older_than(self, stamp: str) -> int:
        """Karpenter NodeClaims created before `stamp` (RFC 3339, UTC): the drifted ones not replaced yet."""
        return sum(1 for c in self.items("nodeclaims.karpenter.sh")
                   if str(c.get("metadata", {}).get("creationTimestamp", "")) < stamp)

    def disrupted_nodes(self) -> int:
        """Nodes Karpenter is disrupting now (its `karpenter.sh/disrupted` taint)."""
        return sum(1 for n in self.items("nodes")
                   if any(t.get("key") == "karpenter.sh/disrupted" for t in n.get("spec", {}).get("taints", [])))

    def _ebs_volumes_of(self, claims: set[tuple[str, str]]) -> list[dict[str, Any]]:
        return [v for v in self.items("persistentvolumes")
                if (v.get("spec", {}).get("csi") or {}).get("driver") == EBS_CSI_DRIVER and _claim_of(v) in claims]

    # ---- before destroy ---------------------------------------------------------------------------------------

    def empty_cluster(self, budget: float) -> list[str]:
        """The pre-destroy order; what it did, one line each. Each wait is bounded by `budget`."""
        self.reachable()
        done: list[str] = []
        ingresses = self.items("ingress", "-A")
        for item in ingresses:
            meta = item["metadata"]
            self.run("delete", "ingress", meta["name"], "-n", meta["namespace"], "--wait=false", check=False)
        if ingresses:
            self.until("Ingresses gone (their ALBs removed by the controller's finalizer)",
                       lambda: not self.items("ingress", "-A"), budget)
            done.append(f"deleted {len(ingresses)} Ingress(es); the load balancer controller removed their ALBs")
        for kind in ("scaledobjects.keda.sh", "persistentvolumeclaims"):
            found = self.items(kind, "-A")
            if kind == "persistentvolumeclaims":
                # A PVC in use stays (kubernetes.io/pvc-protection) until its pods are gone: with the ScaledObjects
                # gone nothing scales the workloads, so stop them first.
                # https://kubernetes.io/docs/concepts/storage/persistent-volumes/#storage-object-in-use-protection
                for namespace in sorted({i["metadata"]["namespace"] for i in found}):
                    for workload in ("deployments", "statefulsets"):
                        self.run("scale", workload, "--all", "-n", namespace, "--replicas=0", check=False)
            for item in found:
                meta = item["metadata"]
                self.run("delete", kind, meta["name"], "-n", meta["namespace"], "--wait=false", check=False)
            if found:
                self.until(f"{kind} gone", lambda k=kind: not self.items(k, "-A"), budget)  # type: ignore[misc]
                done.append(f"deleted {len(found)} {kind}")
            if found and kind == "persistentvolumeclaims":
                # A bound PV with reclaim policy Delete is deleted after its claim, asynchronously, by the EBS CSI
                # controller, which `destroy` then removes: wait until the volumes are gone too
                # (https://kubernetes.io/docs/concepts/storage/persistent-volumes/#delete).
                claims = {(i["metadata"]["namespace"], i["metadata"]["name"]) for i in found}
                self.until("the EBS volumes behind the PVCs deleted",
                           lambda c=claims: not self._ebs_volumes_of(c), budget)  # type: ignore[misc]
                done.append("their EBS volumes are deleted")
        pools = self.items("nodepools.karpenter.sh")
        if pools:
            self.run("delete", "nodepools.karpenter.sh", "--all", "--wait=false", check=False)
            self.until("Karpenter's nodes gone", lambda: not self.items("nodeclaims.karpenter.sh"), budget)
            done.append(f"deleted {len(pools)} NodePool(s); their nodes are gone")
        return done


EBS_CSI_DRIVER = "ebs.csi.aws.com"


def _claim_of(volume: dict[str, Any]) -> tuple[str, str]:
    ref = volume.get("spec", {}).get("claimRef") or {}
    return str(ref.get("namespace", "")), str(ref.get("name", ""))


def node_ready_with_gpu(node: dict[str, Any]) -> bool:
    status = node.get("status", {})
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions", []))
    try:
        gpus = int(str(status.get("allocatable", {}).get(GPU_RESOURCE, "0")))
    except ValueError:
        gpus = 0
    return ready and gpus >= 1


def longest_gap(samples: Sequence[tuple[float, bool]]) -> float:
    """The longest time between a failed sample and the next good one (or the last sample): the outage."""
    longest = 0.0
    down_since: float | None = None
    for at, ok in samples:
        if not ok and down_since is None:
            down_since = at
        elif ok and down_since is not None:
            longest = max(longest, at - down_since)
            down_since = None
    if down_since is not None and samples:
        longest = max(longest, samples[-1][0] - down_since)
    return longest
