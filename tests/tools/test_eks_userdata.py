"""pulumi-eks's own `createUserData` tests, run against the emulation (tools/engine/mocks/eks_userdata.py).

The judge is upstream's: every case of nodejs/eks/nodes/userdata.test.ts at pulumi/pulumi-eks 7bf0c1b1 (its data and
expected values in fixtures/pulumi_eks_userdata_cases.yaml, each with its line), compared byte for byte with the Jest
snapshots of that commit (fixtures/pulumi_eks_userdata.test.ts.snap, verbatim), and its `getClusterDnsIp` table.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tools.engine.mocks.eks_ami import PulumiEksInputError
from tools.engine.mocks.eks_userdata import SOURCE, cluster_dns_ip, create_user_data

FIXTURES = Path(__file__).parent / "fixtures"
CASES = yaml.safe_load((FIXTURES / "pulumi_eks_userdata_cases.yaml").read_text())
PINNED = yaml.safe_load((FIXTURES / "pulumi_eks_source.yaml").read_text())


def _snapshots() -> dict[str, str]:
    text = (FIXTURES / "pulumi_eks_userdata.test.ts.snap").read_text()
    found = re.findall(r'^exports\[`(.*?) 1`\] = `\n"(.*?)"\n`;$', text, flags=re.S | re.M)
    # Jest escapes backticks and `${` in a template literal; none of these snapshots holds one.
    assert not any("\\`" in body or "\\${" in body for _, body in found)
    return dict(found)


SNAPSHOTS = _snapshots()


def _cluster(case: dict[str, Any]) -> dict[str, str]:
    return {"name": case["cluster"], **CASES["clusters"][case["cluster"]], "serviceCidr": case["serviceCidr"]}


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: f"{c['describe']}: {c['it']} (L{c['line']})")
def test_create_user_data_gives_pulumi_eks_s_own_expected_text(case: dict[str, Any]) -> None:
    if case["expect"] == "snapshot":
        expected = SNAPSHOTS[f"createUserData {case['describe']} {case['it']}"]
        assert create_user_data(case["os"], _cluster(case), case["args"]) == expected
    else:
        with pytest.raises(PulumiEksInputError, match=re.escape(case["expect"]["raises"])):
            create_user_data(case["os"], _cluster(case), case["args"])


def test_every_snapshot_of_create_user_data_is_a_translated_case() -> None:
    cases = {f"createUserData {c['describe']} {c['it']}" for c in CASES["cases"] if c["expect"] == "snapshot"}
    assert cases == set(SNAPSHOTS)


def test_bottlerocket_toml_does_not_depend_on_key_order() -> None:
    stable = CASES["stableToml"]
    cluster = {"name": "example-managed-nodegroups-eksCluster-b27184c",
               **CASES["clusters"]["example-managed-nodegroups-eksCluster-b27184c"], "serviceCidr": "10.100.0.0/16"}
    first = create_user_data("Bottlerocket", cluster, stable["args1"])
    assert first == create_user_data("Bottlerocket", cluster, stable["args2"])
    assert "[settings.cloudformation]\nstack-name = \"example\"" in first


def test_a_protobuf_number_is_written_as_the_js_integer_it_was() -> None:
    """The program's settings reach the emulation through protobuf, where 1500 is 1500.0: pulumi-eks writes 1_500."""
    case = next(c for c in CASES["cases"] if c["it"] == "should allow adding additional configuration")
    args = {**case["args"], "bottlerocketSettings": {"settings": {"kubernetes": {"max-pods": 1500.0},
                                                                  "host-containers": {"admin": {"enabled": True}}}}}
    assert create_user_data("Bottlerocket", _cluster(case), args) == SNAPSHOTS[
        "createUserData bottlerocket should allow adding additional configuration"]


@pytest.mark.parametrize(("cidr", "expected"), CASES["clusterDnsIp"]["valid"])
def test_cluster_dns_ip_is_pulumi_eks_s(cidr: str, expected: str) -> None:
    assert cluster_dns_ip(cidr) == expected


@pytest.mark.parametrize("cidr", CASES["clusterDnsIp"]["invalid"])
def test_cluster_dns_ip_refuses_what_pulumi_eks_refuses(cidr: str) -> None:
    with pytest.raises(PulumiEksInputError, match="neither IPv6 nor IPv4 CIDR format"):
        cluster_dns_ip(cidr)


@pytest.mark.parametrize("key", sorted(SOURCE))
def test_every_citation_holds_the_pinned_text_of_its_line(key: str) -> None:
    cite = SOURCE[key]
    assert cite.snippet in PINNED["files"][cite.path]["lines"][cite.line], f"{cite.path}:{cite.line}"
