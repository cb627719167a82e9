"""What the offline preview answers for a method call on a remote component (the monitor's `Call`).

A method of a multi-language component (`pulumi_eks.Cluster.get_kubeconfig`) runs in the component's provider
plugin, which does not run offline. The SDK sends the call with the component itself as `__self__`, a resource
reference; the monitor reads its URN from the raw Struct and answers from the state it recorded for that
component, computed as the provider computes it. A result that rests on an output unknown in this phase (a
first preview: every output of a new remote component) is unknown, as the engine's would be.

pulumi-eks: `eks:index:Cluster/getKubeconfig` returns `{result: <the kubeconfig as a JSON string>}`
(pulumi/pulumi-eks@v4.3.0 nodejs/eks/cmd/provider/index.ts lines 65-72), the kubeconfig of
`generateKubeconfig(eksCluster.name, eksCluster.endpoint, <region of the cluster's ARN>, true,
certificateAuthority.data, {profileName, roleArn})` stringified (nodejs/eks/cluster/cluster.ts lines 2324-2334):
an `aws --region R eks get-token --cluster-name N --output json` exec user, `--role` and `--profile` appended
when given, with the `KUBERNETES_EXEC_INFO` environment variable (cluster.ts lines 203-280). The Python SDK
reads the result as `Cluster.GetKubeconfigResult.result` (pulumi_eks 4.4.0 cluster.py `get_kubeconfig`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from tools.engine.records import UNKNOWN, has_unknown

# (the component's recorded outputs, the call's arguments without `__self__`, the component's region) -> result
Method = Callable[[Mapping[str, Any], Mapping[str, Any], str], dict[str, Any]]


def cluster_get_kubeconfig(outputs: Mapping[str, Any], args: Mapping[str, Any], region: str) -> dict[str, Any]:
    """`eks.Cluster.get_kubeconfig(profile_name, role_arn)`, from the cluster's own kubeconfig output (the mock's
    `eks:index:Cluster` answer, tools/engine/mocks/eks.py): its server, certificate and cluster name."""
    kubeconfig = outputs.get("kubeconfig")
    role_arn, profile = args.get("roleArn"), args.get("profileName")
    if not isinstance(kubeconfig, Mapping) or has_unknown(kubeconfig) or has_unknown(role_arn) or has_unknown(profile):
        return {"result": UNKNOWN}
    cluster = kubeconfig["clusters"][0]["cluster"]
    own_args = list(kubeconfig["users"][0]["user"]["exec"]["args"])
    name = own_args[own_args.index("--cluster-name") + 1]
    token_args = ["--region", region, "eks", "get-token", "--cluster-name", name, "--output", "json"]
    if role_arn:
        token_args += ["--role", role_arn]
    if profile:
        token_args += ["--profile", profile]
    config = {
        "apiVersion": "v1",
        "clusters": [{"cluster": {"server": cluster["server"],
                                  "certificate-authority-data": cluster["certificate-authority-data"]},
                      "name": "kubernetes"}],
        "contexts": [{"context": {"cluster": "kubernetes", "user": "aws"}, "name": "aws"}],
        "current-context": "aws",
        "kind": "Config",
        "users": [{"name": "aws", "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "aws",
            "args": token_args,
            "env": [{"name": "KUBERNETES_EXEC_INFO",
                     "value": '{"apiVersion": "client.authentication.k8s.io/v1beta1"}'}],
        }}}],
    }
    return {"result": json.dumps(config, separators=(",", ":"))}  # JSON.stringify: no spaces


METHODS: dict[str, Method] = {
    "eks:index:Cluster/getKubeconfig": cluster_get_kubeconfig,
}


class UnknownMethodError(RuntimeError):
    """A method of a remote component the offline mocks cannot answer: a gate limitation, named as such."""


def answer_method(token: str, outputs: Mapping[str, Any], args: Mapping[str, Any], region: str) -> dict[str, Any]:
    method = METHODS.get(token)
    if method is None:
        raise UnknownMethodError(
            f"the program called the method {token} of a remote component with {sorted(args)}, and the offline "
            "mocks have no answer for it; add it to METHODS in tools/engine/mocks/methods.py")
    return method(outputs, args, region)
