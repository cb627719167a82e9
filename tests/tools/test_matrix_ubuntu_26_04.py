"""Ubuntu 26.04 through `python -m tools.matrix` (issue 32): the first field report's failure, one release later.

The first report hit ImagePullBackOff because a driver had no image for the node's OS. On Ubuntu 26.04 the
LTS branch most stacks pin (R580) has none: NVIDIA publishes 595.91.07-ubuntu26.04 and 610.57.04-ubuntu26.04
and precompiled 595-7.0.0-*-ubuntu26.04 (NVIDIA/aicr#2192, NVIDIA/gpu-driver-container#853). `check` refuses R580
there and names R595; `refresh --fetch` reads the 26.04 tags of a loopback registry as it reads nvcr.io's.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.policies.conftest_registry import run_registry
from tests.tools.test_matrix_cli import _docs_and_ci, _require_upstream, _serve_files
from tools.matrix.cli import main

TODAY = ["--today", "2026-12-01"]


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", "--os", "ubuntu-26.04", *args, *TODAY, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_r580_on_ubuntu_26_04_exits_1_naming_the_missing_image_and_r595(capsys):
    code = main(["check", "--os", "ubuntu-26.04", "--driver", "580.173.02", "--operator", "v26.7.0", *TODAY])
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[0] == "verdict: INCOMPATIBLE"
    assert (
        "  [mandatory] driver-image-published: driver 580.173.02 has no published image "
        "nvcr.io/nvidia/driver:580.173.02-ubuntu26.04 (NVIDIA builds 580.173.02 only for ubuntu22.04, ubuntu24.04, "
        "not ubuntu26.04; the container would sit in ImagePullBackOff; R580 was never built for ubuntu26.04); "
        "nearest published for ubuntu26.04: 595.91.07.\n"  # R610 reached its end of life in August 2026
    ) in out
    assert (
        "  [mandatory] driver-branch-supported: GPU Operator v26.7.0 does not support driver branch R580 (driver "
        "580.173.02) on ubuntu-26.04; it supports R595, R610 there. NVIDIA never built R580 for ubuntu-26.04; its "
        "driver images start at R595. Nearest supported drivers: 595.91.07.\n"
    ) in out


def test_every_suggestion_for_r580_on_ubuntu_26_04_passes_every_check(capsys):
    code, doc = _check(capsys, "--driver", "580.173.02", "--operator", "v26.7.0", "--kubernetes", "1.35")
    assert code == 1
    suggested = {v for f in doc["findings"] if f["level"] == "mandatory" for v in f["nearest"]}
    assert suggested == {"595.91.07"}  # R610 is past its end of life (2026-08): never suggested (issue 39)
    first = [f["nearest"][0] for f in doc["findings"] if f["level"] == "mandatory"]
    assert set(first) == {"595.91.07"}
    for version in sorted(suggested):
        code, again = _check(capsys, "--driver", version, "--operator", "v26.7.0", "--kubernetes", "1.35")
        assert code == 0, (version, again["findings"])


def test_r595_on_ubuntu_26_04_under_v26_7_0_and_eks_1_35_is_compatible_with_each_source(capsys):
    code, doc = _check(capsys, "--driver", "595.91.07", "--operator", "v26.7.0", "--kubernetes", "1.35",
                       "--instance-type", "g6.xlarge")
    assert code == 0
    assert doc["level"] == "ok"
    by_rule = {f["rule"]: (f["message"], f["source"]) for f in doc["findings"]}
    assert by_rule["driver-branch-supported"] == (
        "GPU Operator v26.7.0 lists driver 595.91.07 (R595) for ubuntu-26.04",
        "https://github.com/NVIDIA/cloud-native-docs/blob/main/gpu-operator/life-cycle-policy.rst",
    )
    kubernetes = by_rule["operator-kubernetes-supported"][0]
    assert kubernetes == "GPU Operator v26.7.0 supports Kubernetes 1.35 on ubuntu-26.04"
    assert by_rule["node-image-published"] == (
        "/aws/service/canonical/ubuntu/eks/26.04/1.35/stable/current/amd64/hvm/ebs-gp3/ami-id is published",
        "https://github.com/canonical/ubuntu-cloud-docs/blob/main/docs/aws/aws-how-to/instances/find-ubuntu-images.rst",
    )


def test_ubuntu_26_04_on_eks_1_34_has_no_canonical_image_and_no_kubelet_that_fits(capsys):
    code, doc = _check(capsys, "--driver", "595.91.07", "--operator", "v26.7.0", "--kubernetes", "1.34")
    assert code == 1
    (finding,) = [f for f in doc["findings"] if f["level"] == "mandatory"]
    assert finding["rule"] == "node-image-published"
    assert finding["message"] == (
        "no ubuntu-26.04 EKS node image is published for Kubernetes 1.34 (/aws/service/canonical/ubuntu/eks/26.04/"
        "1.34/stable/current/amd64/hvm/ebs-gp3/ami-id does not exist; published: 1.35, 1.36). No published "
        "ubuntu-26.04 kubelet fits a 1.34 control plane (a kubelet is never newer than the control plane): upgrade "
        "the control plane to 1.35, or use ubuntu-24.04 (1.34), bottlerocket (1.34), al2023 (1.34)."
    )
    assert finding["nearest"] == ["ubuntu-24.04 (1.34)", "bottlerocket (1.34)", "al2023 (1.34)"]


def test_an_operator_that_does_not_list_ubuntu_26_04_is_advisory_when_the_image_exists(capsys):
    code, doc = _check(capsys, "--driver", "595.91.07", "--operator", "v26.3.3", "--kubernetes", "1.35")
    assert code == 0
    assert doc["level"] == "advisory"
    advisories = [f for f in doc["findings"] if f["level"] == "advisory"]
    assert {f["rule"] for f in advisories} == {"driver-branch-supported", "operator-kubernetes-supported"}
    assert all(f["nearest"] == ["v26.7.0"] for f in advisories)
    assert advisories[0]["message"].startswith(
        "GPU Operator v26.3.3 does not list ubuntu-26.04 as a supported OS (it lists ubuntu-22.04, ubuntu-24.04; "
        "NVIDIA lists ubuntu-26.04 from v26.7.0 on). The operator still installs a driver there"
    )


def test_the_built_but_unpublished_595_71_05_is_refused_on_ubuntu_26_04(capsys):
    code, doc = _check(capsys, "--driver", "595.71.05", "--operator", "v26.3.3")
    assert code == 1
    (image,) = [f for f in doc["findings"] if f["rule"] == "driver-image-published"]
    assert image["level"] == "mandatory"
    assert image["source"] == "https://github.com/NVIDIA/aicr/issues/2192"
    assert "NVIDIA CI built 595.71.05 for ubuntu26.04 but the registry holds no such tag" in image["message"]
    assert image["nearest"][0] == "595.91.07"


def test_drivers_for_ubuntu_26_04_under_v26_7_0_are_r595_and_r610_only(capsys):
    assert main(["drivers", "--os", "ubuntu-26.04", "--operator", "v26.7.0", *TODAY]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:-1]]
    assert listed == ["595.91.07", "610.57.04"]  # R610 ended (August 2026): after the branch in support


@pytest.mark.registry
def test_refresh_fetch_reads_the_ubuntu_26_04_tags_of_the_registry(tmp_path_factory, capsys):
    upstream = _require_upstream()
    args = ["refresh", "--fetch", "--timeout", "5", "--no-images", "--no-image-releases", *TODAY]
    with run_registry(tmp_path_factory.mktemp("registry26")) as registry:
        for tag in ("595.91.07-ubuntu26.04", "610.57.04-ubuntu26.04", "595-7.0.0-1008-aws-ubuntu26.04",
                    "595-7.0.0-27-generic-ubuntu26.04", "595-7.0.0-1006-azure-fde-ubuntu26.04"):
            registry.push_image("nvidia/driver", tag)
        with _serve_files(_docs_and_ci(upstream)) as (url, _):
            fetch = [*args, "--docs-url", f"{url}/gpu-operator", "--ci-url", f"{url}/ci/.common-ci.yml",
                     "--registry", registry.url]
            assert main(fetch) == 0, capsys.readouterr().out
            assert "agrees with upstream" in capsys.readouterr().out
            registry.push_image("nvidia/driver", "595.99.01-ubuntu26.04")
            registry.push_image("nvidia/driver", "595-7.2.0-1001-aws-ubuntu26.04")
            registry.push_image("nvidia/driver", "595-7.0.0-1001-gcp-ubuntu26.04")
            assert main(fetch) == 1
    out = capsys.readouterr().out
    assert ("  driver_images[ubuntu26.04].versions: matrix.yaml [610.57.04, 595.91.07]; upstream [610.57.04, "
            "595.99.01, 595.91.07]") in out
    assert "  precompiled_kernels[ubuntu26.04].kernel_lines: matrix.yaml [7.0]; upstream [7.0, 7.2]" in out
    assert ("  precompiled_kernels[ubuntu26.04].flavours: matrix.yaml [aws, azure, azure-fde, generic, nvidia, "
            "oracle]; upstream [aws, azure, azure-fde, gcp, generic, nvidia, oracle]") in out
