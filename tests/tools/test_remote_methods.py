"""A method call on a remote component (`eks.Cluster.get_kubeconfig`) through the offline gate, in every phase
(tools/engine/mocks/methods.py; issue 37 class 3: it crashed every phase, 'attached to a different loop', and
hung under an explicit aws.Provider)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.shared import REPO
from tools.engine.mocks.methods import UnknownMethodError, answer_method, cluster_get_kubeconfig
from tools.engine.records import UNKNOWN

PROGRAM = ("--program", str(REPO / "tests" / "tools" / "fixtures" / "method_program"), "--today", "2026-11-30")


def _inputs(doc: dict[str, Any], rtype: str, name: str = "role-provider") -> dict[str, Any]:
    """The inputs of the program's own `name` (the Cluster's emulated children hold a Kubernetes provider too)."""
    return next(r["inputs"] for r in doc["resources"] if r["type"] == rtype and r["name"] == name)


def test_get_kubeconfig_answers_pulumi_eks_s_kubeconfig_of_the_cluster(run_preview):
    run = run_preview(*PROGRAM, "--phase", "update", "--json")
    assert run.returncode in (0, 1), run.explain()
    doc = run.json()
    config = json.loads(_inputs(doc, "pulumi:providers:kubernetes")["kubeconfig"])
    exec_ = config["users"][0]["user"]["exec"]
    args = exec_["args"]
    assert args[:8] == ["--region", "us-west-2", "eks", "get-token", "--cluster-name", "methods-demo", "--output",
                        "json"]
    assert args[8] == "--role" and args[9].startswith("arn:aws:iam::") and ":role/admin" in args[9]
    assert args[10:] == ["--profile", "ops"]
    assert exec_["env"] == [{"name": "KUBERNETES_EXEC_INFO",
                             "value": '{"apiVersion": "client.authentication.k8s.io/v1beta1"}'}]
    assert config["clusters"][0]["cluster"]["server"].endswith(".gr7.us-west-2.eks.amazonaws.com")


@pytest.mark.parametrize("phase", ["preview", "up"])  # `up` reports the preview it runs first
def test_in_a_first_preview_the_result_is_unknown_as_the_cluster_s_outputs_are(run_preview, phase):
    run = run_preview(*PROGRAM, "--phase", phase, "--json")
    assert run.returncode in (0, 1), run.explain()
    assert _inputs(run.json(), "pulumi:providers:kubernetes")["kubeconfig"] == UNKNOWN


def test_the_method_follows_the_cluster_s_own_kubeconfig_and_unknowns():
    own = {"clusters": [{"cluster": {"server": "https://x.eks", "certificate-authority-data": "Q0E="}}],
           "users": [{"user": {"exec": {"args": ["eks", "get-token", "--cluster-name", "c1", "--output", "json"]}}}]}
    config = json.loads(cluster_get_kubeconfig({"kubeconfig": own}, {}, "eu-west-1")["result"])
    assert config["users"][0]["user"]["exec"]["args"] == [
        "--region", "eu-west-1", "eks", "get-token", "--cluster-name", "c1", "--output", "json"]
    assert config["clusters"][0] == {"cluster": {"server": "https://x.eks", "certificate-authority-data": "Q0E="},
                                     "name": "kubernetes"}
    assert cluster_get_kubeconfig({"kubeconfig": UNKNOWN}, {}, "eu-west-1") == {"result": UNKNOWN}
    assert cluster_get_kubeconfig({"kubeconfig": own}, {"roleArn": UNKNOWN}, "eu-west-1") == {"result": UNKNOWN}
    with pytest.raises(UnknownMethodError, match="eks:index:Cluster/getOidcProvider"):
        answer_method("eks:index:Cluster/getOidcProvider", {}, {}, "eu-west-1")
