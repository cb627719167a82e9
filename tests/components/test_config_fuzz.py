# mypy: disallow-untyped-decorators=False
"""Property-based tests: broken stack configs in every section end in ONE message naming the key, nothing created.

hypothesis generates the bad input (wrong types, out-of-range numbers, malformed ARNs, ids, CIDRs, versions
and durations, duplicate and dangling names) into an otherwise valid stack that uses every section
(cluster, systemNodeGroup, gpuOperator, gpuNodeGroups, karpenter, inferenceServices). Each case must raise a
ConfigError (a pulumi.RunError: `pulumi up` prints it without a traceback) of exactly one line naming the
stack file and the key path, and the whole program must register nothing. Broken YAML, an empty stack file
and a stack file that is a list: tests/components/test_config_files.py.

The values are invalid by construction (an octet above 255, an 11-digit account, a day unit), not by asking
the validators, so a validator that lets one through fails here. Deterministic: derandomize=True, bounded
max_examples, no deadline.
"""

from __future__ import annotations

import copy
import re
import string
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is pinned in requirements-dev.txt")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from components.config import ConfigError, load_stack_config  # noqa: E402
from tests.components.harness import TODAY, run_rejected, stack_values  # noqa: E402

FILE = "Pulumi.dev.yaml"
FAST = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])

ACCOUNT = "111122223333"
UUID = "0123abcd-4567-89ab-cdef-0123456789ab"


def full_stack() -> dict[str, Any]:
    """The dev stack plus a valid Karpenter pool and an inference service: every section in use."""
    values = copy.deepcopy(stack_values("dev"))
    values["cluster"]["adminPrincipalArns"] = [f"arn:aws:iam::{ACCOUNT}:role/platform-admin"]
    values["karpenter"] = {"version": "1.14.1", "pools": [{
        "name": "gpu-spot", "os": "bottlerocket", "driverVersion": "580", "instanceTypes": ["g6.xlarge"],
        "capacityTypes": ["spot"], "imageVersion": "v1.26.0", "expireAfter": "720h", "consolidateAfter": "10m"}]}
    values["inferenceServices"] = [{
        "name": "llm", "image": "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8.4", "cudaVersion": "12.8",
        # one replica on dev's one-node group: a node group does not scale (scaled-workload-wakes-nodes)
        "nodePools": ["l4-spot"], "minReplicas": 1, "maxReplicas": 1,
        "autoscaling": {"query": "sum(rate(http_requests_total[1m]))", "threshold": "100"},
        "ingress": {"host": "inference.example.com",
                    "certificateArn": f"arn:aws:acm:us-west-2:{ACCOUNT}:certificate/{UUID}",
                    "wafAclArn": f"arn:aws:wafv2:us-west-2:{ACCOUNT}:regional/webacl/edge/{UUID}"},
        # snapshotSizeGiB 1: read inside the default startupSeconds (components/inference/budget.py) at every sizeGiB
        "modelVolume": {"snapshotId": "snap-0123456789abcdef0", "sizeGiB": 100, "snapshotSizeGiB": 1}}]
    return values


def test_the_full_stack_is_valid():
    config = load_stack_config(full_stack(), stack_file=FILE, today=TODAY)
    assert config.karpenter is not None and config.inference_services[0].name == "llm"


# --- where to break it, and how -----------------------------------------------------------------------

def _shown(path: tuple[str | int, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


GP = ("gpuNodeGroups", 0)
KP = ("karpenter", "pools", 0)
SV = ("inferenceServices", 0)
STRINGS = [("cluster", "name"), ("cluster", "kubernetesVersion"), ("cluster", "vpcCidr"),
           ("gpuOperator", "version"), ("gpuOperator", "driverVersion"), (*GP, "name"), (*GP, "os"),
           ("karpenter", "version"), (*KP, "name"), (*KP, "driverVersion"), (*KP, "expireAfter"),
           (*SV, "name"), (*SV, "image"), (*SV, "ingress", "host"), (*SV, "modelVolume", "snapshotId")]
INTS = {("cluster", "availabilityZones"): (2, 6), ("systemNodeGroup", "minSize"): (1, 100),
        ("systemNodeGroup", "diskSizeGiB"): (20, 16384), (*GP, "maxSize"): (1, 1000),
        (*GP, "diskSizeGiB"): (30, 16384), (*KP, "maxGpus"): (1, 10000), (*KP, "diskSizeGiB"): (30, 16384),
        (*SV, "port"): (1, 65535), (*SV, "gpusPerReplica"): (1, 16), (*SV, "modelVolume", "sizeGiB"): (1, 16384)}
BOOLS = [("cluster", "singleNatGateway"), ("cluster", "deletionProtection"), ("gpuOperator", "smokeTest"),
         (*KP, "onDemandFallback"), (*SV, "modelVolume", "fastSnapshotRestore")]
LISTS = [("cluster", "endpointPublicAccessCidrs"), ("systemNodeGroup", "instanceTypes"), (*GP, "instanceTypes"),
         (*KP, "capacityTypes"), (*SV, "nodePools")]
SECTIONS = [("cluster",), ("systemNodeGroup",), ("gpuOperator",), GP, ("karpenter",), KP, SV,
            (*SV, "ingress"), (*SV, "autoscaling"), (*SV, "modelVolume")]

Case = tuple[tuple[str | int, ...], Any]

wrong_for_string = st.one_of(st.integers(), st.booleans(), st.lists(st.text(max_size=3), max_size=2),
                             st.dictionaries(st.text(string.ascii_letters, min_size=1, max_size=3), st.integers(),
                                             max_size=1))
wrong_for_int = st.one_of(st.text(string.ascii_letters, max_size=4), st.floats(allow_nan=False).filter(
    lambda f: f != int(f) if f == f and abs(f) < 1e18 else True), st.lists(st.integers(), max_size=2))
wrong_for_bool = st.one_of(st.sampled_from(["yes", "no", "on", "1", "True "]), st.integers(), st.lists(st.booleans()))


def wrong_types() -> st.SearchStrategy[Case]:
    return st.one_of(
        st.tuples(st.sampled_from(STRINGS), wrong_for_string),
        st.tuples(st.sampled_from(list(INTS)), wrong_for_int),
        st.tuples(st.sampled_from(BOOLS), wrong_for_bool),
        st.tuples(st.sampled_from(LISTS), st.one_of(st.text(min_size=1, max_size=5), st.integers(),
                                                    st.dictionaries(st.just("a"), st.just(1), min_size=1))),
        st.tuples(st.sampled_from(SECTIONS), st.one_of(st.text(max_size=5), st.integers(), st.lists(
            st.integers(), min_size=1, max_size=2))),
    )


@st.composite
def out_of_range(draw: st.DrawFn) -> Case:
    path = draw(st.sampled_from(sorted(INTS)))
    low, high = INTS[path]
    return path, draw(st.one_of(st.integers(max_value=low - 1), st.integers(min_value=high + 1)))


octet = st.integers(0, 255)
bad_octet = st.integers(256, 9999)


@st.composite
def bad_cidr(draw: st.DrawFn) -> str:
    octets = [draw(octet) for _ in range(4)]
    kind = draw(st.sampled_from(["octet", "prefix", "no-prefix", "host-bits"]))
    if kind == "octet":
        octets[draw(st.integers(0, 3))] = draw(bad_octet)
        return ".".join(map(str, octets)) + f"/{draw(st.integers(8, 32))}"
    if kind == "prefix":
        return ".".join(map(str, octets)) + f"/{draw(st.integers(33, 999))}"
    if kind == "no-prefix":
        return ".".join(map(str, octets[:draw(st.integers(1, 3))]))
    return f"10.{draw(octet)}.{draw(octet)}.{draw(st.integers(1, 255))}/16"  # host bits set


def bad_account() -> st.SearchStrategy[str]:
    return st.one_of(st.text(string.digits, min_size=1, max_size=11), st.text(string.digits, min_size=13,
                                                                                 max_size=14),
                     st.text(string.ascii_letters, min_size=12, max_size=12))


@st.composite
def bad_role_arn(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["account", "service", "resource", "prefix"]))
    if kind == "account":
        return f"arn:aws:iam::{draw(bad_account())}:role/admin"
    if kind == "service":
        return f"arn:aws:{draw(st.sampled_from(['s3', 'ec2', 'eks', 'sts']))}::{ACCOUNT}:role/admin"
    if kind == "resource":
        return f"arn:aws:iam::{ACCOUNT}:{draw(st.sampled_from(['group', 'policy', 'instance-profile', 'root']))}/x"
    return str(draw(st.sampled_from(["", "admin", f"iam::{ACCOUNT}:role/admin", f"aws:iam::{ACCOUNT}:role/admin"])))


@st.composite
def bad_acm_arn(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["account", "uuid", "region", "service"]))
    if kind == "account":
        return f"arn:aws:acm:us-west-2:{draw(bad_account())}:certificate/{UUID}"
    if kind == "uuid":
        return f"arn:aws:acm:us-west-2:{ACCOUNT}:certificate/{draw(st.text('xyz-', min_size=1, max_size=36))}"
    if kind == "region":
        return f"arn:aws:acm:{draw(st.sampled_from(['', 'uswest2', 'US-WEST-2']))}:{ACCOUNT}:certificate/{UUID}"
    return f"arn:aws:iam::{ACCOUNT}:server-certificate/{UUID}"


@st.composite
def bad_waf_arn(draw: st.DrawFn) -> str:
    scope = draw(st.sampled_from(["global", "cloudfront", "regional/ipset"]))
    return f"arn:aws:wafv2:us-west-2:{ACCOUNT}:{scope}/webacl/edge/{UUID}"


def bad_hex_id(prefix: str) -> st.SearchStrategy[str]:
    hex_digits = "0123456789abcdef"
    return st.one_of(
        st.builds(lambda n: f"{prefix}{n}", st.text(hex_digits, min_size=1, max_size=7)),          # too short
        st.builds(lambda n: f"{prefix}{n}", st.text(hex_digits, min_size=9, max_size=16)),         # between lengths
        st.builds(lambda n: f"{prefix}{n}", st.text("ghijklmnopqrstuvwxyz", min_size=8, max_size=8)),  # not hex
        st.builds(lambda n: f"{prefix.upper()}{n}", st.text(hex_digits, min_size=8, max_size=8)),  # wrong prefix
        st.builds(lambda n: n, st.text(hex_digits, min_size=17, max_size=17)),                      # no prefix
    )


bad_duration = st.one_of(
    st.builds(lambda n, unit: f"{n}{unit}", st.integers(1, 999), st.sampled_from(["d", "w", "ms", "y", " h"])),
    st.builds(lambda n: f"-{n}h", st.integers(1, 99)),
    st.sampled_from(["", "forever", "never ", "1.5h", "h", "720"]),
)
bad_kube_version = st.one_of(st.sampled_from(["1.3", "v1.35", "1.35.0", "2.35", "1.x", "", "135"]),
                             st.builds(lambda n: f"1.{n}", st.integers(100, 999)))
bad_driver = st.one_of(st.sampled_from(["latest", "", "R", "580.x", "580..1", "v580.173.02", "5800.1.1"]),
                       st.text(string.ascii_letters, min_size=1, max_size=6))
bad_operator = st.one_of(st.builds(lambda a, b, c: f"{a}.{b}.{c}", st.integers(20, 30), st.integers(1, 12),
                                   st.integers(0, 9)), st.sampled_from(["latest", "v26.7", "V26.7.0", "26"]))
bad_chart = st.one_of(st.builds(lambda a, b: f"v{a}.{b}.0", st.integers(0, 2), st.integers(0, 20)),
                      st.sampled_from(["1.14", "latest", "1.14.1-", "one"]))
bad_name = st.one_of(st.text(string.ascii_uppercase, min_size=1, max_size=8),
                     st.builds(lambda n: f"-{n}", st.text(string.ascii_lowercase, min_size=1, max_size=5)),
                     st.builds(lambda n: f"{n}_x", st.text(string.ascii_lowercase, min_size=1, max_size=5)),
                     st.just(""), st.text(string.ascii_lowercase, min_size=41, max_size=50))


def malformed() -> st.SearchStrategy[Case]:
    return st.one_of(
        st.tuples(st.just(("cluster", "vpcCidr")), bad_cidr()),
        st.tuples(st.just(("cluster", "endpointPublicAccessCidrs", 0)), bad_cidr()),
        st.tuples(st.just(("cluster", "adminPrincipalArns", 0)), bad_role_arn()),
        st.tuples(st.just((*SV, "ingress", "certificateArn")), bad_acm_arn()),
        st.tuples(st.just((*SV, "ingress", "wafAclArn")), bad_waf_arn()),
        st.tuples(st.just((*SV, "modelVolume", "snapshotId")), bad_hex_id("snap-")),
        st.tuples(st.just((*GP, "imageId")), bad_hex_id("ami-")),
        st.tuples(st.sampled_from([(*KP, "expireAfter"), (*KP, "consolidateAfter")]), bad_duration),
        st.tuples(st.sampled_from([("cluster", "kubernetesVersion"), (*GP, "kubeletVersion")]), bad_kube_version),
        st.tuples(st.sampled_from([("gpuOperator", "driverVersion"), (*KP, "driverVersion")]), bad_driver),
        st.tuples(st.just(("gpuOperator", "version")), bad_operator),
        st.tuples(st.just(("karpenter", "version")), bad_chart),
        st.tuples(st.sampled_from([(*GP, "name"), (*KP, "name"), (*SV, "name")]), bad_name),
    )


def _set(values: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    target: Any = values
    for part in path[:-1]:
        target = target[part]
    last = path[-1]
    if isinstance(target, list) and isinstance(last, int) and last >= len(target):
        target.append(value)
    else:
        target[last] = value
    return values


def _rejected(values: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        load_stack_config(values, stack_file=FILE, today=TODAY)
    return str(caught.value)


def assert_one_message_naming(message: str, path: tuple[str | int, ...]) -> None:
    key = _shown(path)
    assert "Traceback" not in message
    assert "\n" not in message, f"more than one message for one broken key:\n{message}"
    assert message.startswith(f"{FILE}: {key}"), f"the message does not name {key}:\n{message}"
    assert len(re.findall(re.escape(f"{key} ="), message)) <= 1


@FAST
@given(case=wrong_types())
def test_a_value_of_the_wrong_type_is_one_message_naming_its_key(case: Case):
    path, value = case
    assert_one_message_naming(_rejected(_set(full_stack(), path, value)), path)


@FAST
@given(case=out_of_range())
def test_an_out_of_range_number_is_one_message_naming_its_key_and_bound(case: Case):
    path, value = case
    message = _rejected(_set(full_stack(), path, value))
    assert_one_message_naming(message, path)
    low, high = INTS[path]
    assert f"must be >= {low}" in message if value < low else f"must be <= {high}" in message


@FAST
@given(case=malformed())
def test_a_malformed_arn_id_cidr_version_duration_or_name_is_one_message_naming_its_key(case: Case):
    path, value = case
    assert_one_message_naming(_rejected(_set(full_stack(), path, value)), path)


NAMED = [(("gpuNodeGroups",), "name"), (("karpenter", "pools"), "name"), (("inferenceServices",), "name")]


@FAST
@given(where=st.sampled_from(NAMED), copies=st.integers(2, 3))
def test_a_duplicate_name_is_named_at_each_repeat(where: tuple[tuple[str, ...], str], copies: int):
    values = full_stack()
    section: Any = values
    for part in where[0]:
        section = section[part]
    section.extend(copy.deepcopy(section[0]) for _ in range(copies - 1))
    message = _rejected(values)
    lines = message.splitlines()
    repeats = [_shown((*where[0], i, "name")) for i in range(1, copies)]
    assert all(any(f": {key} = " in line for line in lines) for key in repeats), message
    assert "unique" in message and "Traceback" not in message


@FAST
@given(pool=st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=12).filter(
    lambda n: n not in ("l4-spot", "gpu-spot")))
def test_a_dangling_pool_name_in_a_service_is_one_message_naming_it(pool: str):
    values = _set(full_stack(), (*SV, "nodePools", 0), pool)
    message = _rejected(values)
    assert_one_message_naming(message, (*SV, "nodePools", 0))
    assert "nodePools may only name pools defined in gpuNodeGroups or karpenter.pools" in message


@FAST
@given(key=st.text(string.ascii_letters, min_size=1, max_size=12), where=st.sampled_from(SECTIONS))
def test_an_unknown_key_in_any_section_is_named(key: str, where: tuple[str | int, ...]):
    values = full_stack()
    target: Any = values
    for part in where:
        target = target[part]
    if key in target or (key[0].lower() + key[1:]) in target:
        return
    target[key] = "x"
    message = _rejected(values)
    assert_one_message_naming(message, (*where, key))


# --- the whole program: nothing registered --------------------------------------------------------------

@SLOW
@given(case=st.one_of(wrong_types(), out_of_range(), malformed()))
def test_the_program_registers_nothing_for_a_broken_key(case: Case):
    path, value = case
    values = _set(full_stack(), path, value)
    values.pop("karpenter")  # sections whose component has not landed stop the program by name on their own
    values.pop("inferenceServices")
    if path[0] in ("karpenter", "inferenceServices"):
        values = _set(_set(copy.deepcopy(stack_values("dev")), ("cluster", "name"), "gpu-dev"), path[:1],
                      full_stack()[path[0]])
        values = _set(values, path, value)
    result, error = run_rejected(values)
    assert isinstance(error, ConfigError), repr(error)
    assert _shown(path) in str(error) or path[0] in ("karpenter", "inferenceServices")
    assert result.registered == []
