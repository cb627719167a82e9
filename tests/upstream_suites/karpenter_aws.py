"""aws/karpenter-provider-aws v1.14.1's envtest CEL suites for EC2NodeClass and NodePool, translated by hand, one
case per `Expect(env.Client.Create|Update(...))`, each with its line (translation rule:
tests/upstream_suites/gojson.py). The suites run against that tag's CRDs, which are the pinned ones.

Every EC2NodeClass the Go client sends carries `capacityReservationSelectorTerms: null`: the field is a slice
without `omitempty` (pkg/apis/v1/ec2nodeclass.go:55), nil in the suite's BeforeEach.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from tests.upstream_suites.gojson import duration, seconds

REPO = "aws/karpenter-provider-aws@v1.14.1"
NODECLASS = f"{REPO}:pkg/apis/v1/ec2nodeclass_validation_cel_test.go"
NODEPOOL = f"{REPO}:pkg/apis/v1/nodepool_validation_cel_test.go"

FAMILIES = ["AL2", "AL2023", "Bottlerocket", "Windows2019", "Windows2022", "Windows2025", "Custom"]
# karpenter's WellKnownLabels with the provider's additions (pkg/apis/v1/labels.go init at the tag).
WELL_KNOWN_LABELS = [
    "karpenter.sh/nodepool", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type", "kubernetes.io/arch", "kubernetes.io/os", "karpenter.sh/capacity-type",
    "node.kubernetes.io/windows-build",
    *(f"karpenter.k8s.aws/{name}" for name in (
        "capacity-reservation-id", "capacity-reservation-type", "capacity-reservation-interruptible",
        "instance-hypervisor", "instance-encryption-in-transit-supported", "instance-category",
        "instance-capability-flex", "instance-family", "instance-generation", "instance-size", "instance-local-nvme",
        "instance-cpu", "instance-cpu-manufacturer", "instance-cpu-sustained-clock-speed-mhz", "instance-memory",
        "instance-ebs-bandwidth", "instance-network-bandwidth", "instance-gpu-name", "instance-gpu-manufacturer",
        "instance-gpu-count", "instance-gpu-memory", "instance-accelerator-name",
        "instance-accelerator-manufacturer", "instance-accelerator-count", "instance-tenancy", "placement-group-id",
        "placement-group-partition")),
    "topology.k8s.aws/zone-id",
]

Change = Callable[[dict[str, Any]], None]


def _node_class() -> dict[str, Any]:
    """The suite's BeforeEach EC2NodeClass (ec2nodeclass_validation_cel_test.go:41-63) as the Go client sends it
    (test.ObjectMeta: a random name, the discovery label, generation 1, a creation time)."""
    return {
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
        "metadata": {"name": "tigerbolt-1-a1b2c3d4e5", "generation": 1,
                     "creationTimestamp": "2026-12-01T00:00:00Z", "labels": {"testing/cluster": "unspecified"}},
        "spec": {
            "subnetSelectorTerms": [{"tags": {"*": "*"}}],
            "securityGroupSelectorTerms": [{"tags": {"*": "*"}}],
            "capacityReservationSelectorTerms": None,
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "amiFamily": "AL2023",
            "role": "role-1",
        },
        "status": {},
    }


def _term(**fields: Any) -> dict[str, Any]:
    """A selector term: every field is `omitempty`, so "", {} and None are left out."""
    return {k: v for k, v in fields.items() if v not in ("", None, {})}


def _spec(key: str, value: Any) -> Change:
    """Set spec.<key>; a Go `omitempty` field set to its zero value ("", None, an empty map) is left out."""
    def change(obj: dict[str, Any]) -> None:
        if value in ("", {}) or value is None:
            obj["spec"].pop(key, None)
        else:
            obj["spec"][key] = copy.deepcopy(value)

    return change


def _null(key: str) -> Change:
    """A slice without `omitempty` set to nil: `null`."""
    return lambda obj: obj["spec"].__setitem__(key, None)


def _case(source: str, line: int, name: str, expect: str, *changes: Change,
          base: Callable[[], dict[str, Any]] = _node_class, old: dict[str, Any] | None = None) -> dict[str, Any]:
    obj = base()
    for change in changes:
        change(obj)
    case = {"source": f"{source}:{line}", "name": name, "object": obj, "expect": expect}
    if old is not None:
        case["old"] = old
    return case


def _selector_cases(key: str, lines: dict[str, int], ident: str) -> list[dict[str, Any]]:
    """SubnetSelectorTerms and SecurityGroupSelectorTerms share these cases (their own lines)."""
    s = NODECLASS
    return [
        _case(s, lines["tags"], f"{key}: valid selector on tags", "accept",
              _spec(key, [_term(tags={"test": "testvalue"})])),
        _case(s, lines["id"], f"{key}: valid selector on id", "accept", _spec(key, [_term(id=ident)])),
        _case(s, lines["nil"], f"{key}: set to nil (null)", "reject", _null(key)),
        _case(s, lines["empty"], f"{key}: no terms", "reject", _spec(key, [])),
        _case(s, lines["no_values"], f"{key}: a term with no values", "reject", _spec(key, [{}])),
        _case(s, lines["no_tag_values"], f"{key}: a term with an empty tag map (omitted)", "reject",
              _spec(key, [_term(tags={})])),
        _case(s, lines["empty_value"], f"{key}: a tag with an empty value", "reject",
              _spec(key, [_term(tags={"test": ""})])),
        _case(s, lines["empty_key"], f"{key}: a tag with an empty key", "reject",
              _spec(key, [_term(tags={"": "testvalue"})])),
        _case(s, lines["last_invalid"], f"{key}: the last term is invalid", "reject", _spec(key, [
            _term(tags={"test": "testvalue"}), _term(tags={"test2": "testvalue2"}),
            _term(tags={"test3": "testvalue3"}), _term(tags={"": "testvalue4"})])),
        _case(s, lines["id_tags"], f"{key}: id with tags", "reject",
              _spec(key, [_term(id=ident, tags={"test": "testvalue"})])),
    ]


def _kubelet(**fields: Any) -> Change:
    return _spec("kubelet", {k: v for k, v in fields.items() if v not in (None, {})})


EVICTION_KEYS = ("memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available",
                 "imagefs.inodesFree", "pid.available")
VALID_SOFT = dict(zip(EVICTION_KEYS, ("5%", "10%", "15%", "5%", "5%", "5%"), strict=True))
VALID_GRACE = dict(zip(EVICTION_KEYS, (seconds(60), seconds(90), seconds(300), seconds(3600), seconds(86400),
                                       seconds(60)), strict=True))


def _node_class_cases_1() -> list[dict[str, Any]]:
    s = NODECLASS
    out = [
        _case(s, 66, "should succeed if just specifying role", "accept"),
        _case(s, 71, "should succeed if just specifying instance profile", "accept",
              _spec("instanceProfile", "test-instance-profile"), _spec("role", "")),
        _case(s, 75, "should fail if specifying both instance profile and role", "reject",
              _spec("instanceProfile", "test-instance-profile")),
        _case(s, 79, "should fail if not specifying one of instance profile and role", "reject", _spec("role", "")),
        _case(s, 83, "should succeed if user data is empty", "accept"),
    ]
    out += [_case(s, 93, f"should succeed with valid family {f}", "accept",
                  _spec("amiSelectorTerms", [{"id": "ami-0123456789abcdef"}]), _spec("amiFamily", f))
            for f in FAMILIES]
    out += [_case(s, 104, "should fail with the ubuntu family", "reject",
                  _spec("amiSelectorTerms", [{"id": "ami-0123456789abcdef"}]), _spec("amiFamily", "Ubuntu"))]
    named = [f for f in FAMILIES if f != "Custom"]
    out += [_case(s, 110, f"amiFamily {f} matches alias {f.lower()}@latest", "accept",
                  _spec("amiSelectorTerms", [{"alias": f"{f.lower()}@latest"}]), _spec("amiFamily", f))
            for f in named]
    out += [_case(s, 129, f"amiFamily Custom with alias {f.lower()}@latest", "accept",
                  _spec("amiSelectorTerms", [{"alias": f"{f.lower()}@latest"}]), _spec("amiFamily", "Custom"))
            for f in named]
    out += [_case(s, 147, f"amiFamily {f} does not match alias {g.lower()}@latest", "reject",
                  _spec("amiSelectorTerms", [{"alias": f"{g.lower()}@latest"}]), _spec("amiFamily", f))
            for f in named for g in named if f != g]
    out += [
        _case(s, 172, "should fail when neither amiFamily nor an alias are specified", "reject",
              _spec("amiSelectorTerms", [{"id": "ami-01234567890abcdef"}]), _spec("amiFamily", None)),
        _case(s, 178, "should succeed when tags are empty (an empty map is omitted)", "accept", _spec("tags", {})),
        _case(s, 186, "should succeed if tags aren't in restricted tag keys", "accept", _spec("tags", {
            "karpenter.sh/custom-key": "value", "karpenter.sh/managed": "true", "kubernetes.io/role/key": "value"})),
    ]
    out += [_case(s, line, f"should fail if tags contain a restricted key ({key})", "reject",
                  _spec("tags", {key: value}))
            for line, key, value in ((192, "karpenter.sh/nodepool", "value"),
                                     (196, "kubernetes.io/cluster/test", "value"),
                                     (200, "eks:eks-cluster-name", "test"),
                                     (204, "karpenter.k8s.aws/ec2nodeclass", "test"),
                                     (208, "karpenter.sh/nodeclaim", "test"))]
    out += _selector_cases("subnetSelectorTerms", {
        "tags": 220, "id": 228, "nil": 232, "empty": 236, "no_values": 242, "no_tag_values": 250,
        "empty_value": 260, "empty_key": 270, "last_invalid": 295, "id_tags": 306}, "subnet-12345749")
    out += _selector_cases("securityGroupSelectorTerms", {
        "tags": 318, "id": 326, "nil": 338, "empty": 342, "no_values": 348, "no_tag_values": 356,
        "empty_value": 366, "empty_key": 376, "last_invalid": 401, "id_tags": 412}, "sg-12345749")
    sg = "securityGroupSelectorTerms"
    out += [
        _case(s, 334, "securityGroupSelectorTerms: valid selector on name", "accept",
              _spec(sg, [_term(name="testname")])),
        _case(s, 421, "securityGroupSelectorTerms: id with name", "reject",
              _spec(sg, [_term(id="sg-12345749", name="my-security-group")])),
        _case(s, 432, "securityGroupSelectorTerms: name with tags", "reject",
              _spec(sg, [_term(name="my-security-group", tags={"test": "testvalue"})])),
    ]
    cr = "capacityReservationSelectorTerms"
    out += [
        _case(s, 442, "capacity reservation selector on tags", "accept",
              _spec(cr, [_term(tags={"test": "testvalue"})])),
        _case(s, 448, "capacity reservation selector on id", "accept", _spec(cr, [_term(id="cr-12345749")])),
        _case(s, 457, "a valid ownerID", "accept",
              _spec(cr, [_term(ownerID="012345678901", tags={"test": "testvalue"})])),
        _case(s, 463, "a capacity reservation selector on a malformed id", "reject",
              _spec(cr, [_term(id="r-12345749")])),
        _case(s, 467, "capacity reservation selector terms set to nil (null)", "accept", _null(cr)),
        _case(s, 471, "a capacity reservation term with no values", "reject", _spec(cr, [{}])),
        _case(s, 477, "a capacity reservation term with an empty tag map (omitted)", "reject",
              _spec(cr, [_term(tags={})])),
        _case(s, 485, "a capacity reservation tag with an empty value", "reject",
              _spec(cr, [_term(tags={"test": ""})])),
        _case(s, 493, "a capacity reservation tag with an empty key", "reject",
              _spec(cr, [_term(tags={"": "testvalue"})])),
        _case(s, 518, "the last capacity reservation term is invalid", "reject", _spec(cr, [
            _term(tags={"test": "testvalue"}), _term(tags={"test2": "testvalue2"}),
            _term(tags={"test3": "testvalue3"}), _term(tags={"": "testvalue4"})])),
        _case(s, 527, "capacity reservation id with tags", "reject",
              _spec(cr, [_term(id="cr-12345749", tags={"test": "testvalue"})])),
        _case(s, 534, "capacity reservation id with ownerID", "reject",
              _spec(cr, [_term(ownerID="012345678901", id="cr-12345749")])),
        _case(s, 543, "a malformed ownerID", "reject",
              _spec(cr, [_term(ownerID="01234567890", tags={"test": "testvalue"})])),
        _case(s, 549, "an ownerID by itself", "reject", _spec(cr, [_term(ownerID="012345678901")])),
        _case(s, 555, "instanceMatchCriteria open", "accept", _spec(cr, [_term(instanceMatchCriteria="open")])),
        _case(s, 561, "instanceMatchCriteria targeted", "accept", _spec(cr, [_term(instanceMatchCriteria="targeted")])),
        _case(s, 570, "instanceMatchCriteria with tags", "accept",
              _spec(cr, [_term(instanceMatchCriteria="open", tags={"test": "testvalue"})])),
        _case(s, 580, "instanceMatchCriteria with ownerID and tags", "accept", _spec(cr, [_term(
            instanceMatchCriteria="targeted", ownerID="012345678901", tags={"test": "testvalue"})])),
        _case(s, 586, "an invalid instanceMatchCriteria", "reject",
              _spec(cr, [_term(instanceMatchCriteria="invalid")])),
        _case(s, 593, "id with instanceMatchCriteria", "reject",
              _spec(cr, [_term(id="cr-12345749", instanceMatchCriteria="open")])),
    ]
    ami = "amiSelectorTerms"
    out += [
        _case(s, 601, "ami selector on alias", "accept", _spec(ami, [_term(alias="al2023@latest")])),
        _case(s, 611, "ami selector on tags", "accept", _spec(ami, [_term(tags={"test": "testvalue"})])),
        _case(s, 619, "ami selector on id", "accept", _spec(ami, [_term(id="ami-12345749")])),
        _case(s, 627, "ami selector on name", "accept", _spec(ami, [_term(name="testname")])),
        _case(s, 636, "ami selector on name and owner", "accept",
              _spec(ami, [_term(name="testname", owner="testowner")])),
        _case(s, 647, "ami selector with owner and tags", "accept",
              _spec(ami, [_term(owner="testowner", tags={"test": "testvalue"})])),
        _case(s, 653, "an ami term with no values", "reject", _spec(ami, [{}])),
        _case(s, 661, "an ami term with an empty tag map (omitted)", "reject", _spec(ami, [_term(tags={})])),
        _case(s, 671, "an ami tag with an empty value", "reject", _spec(ami, [_term(tags={"test": ""})])),
        _case(s, 681, "an ami tag with an empty key", "reject", _spec(ami, [_term(tags={"": "testvalue"})])),
        _case(s, 706, "the last ami term is invalid", "reject", _spec(ami, [
            _term(tags={"test": "testvalue"}), _term(tags={"test2": "testvalue2"}),
            _term(tags={"test3": "testvalue3"}), _term(tags={"": "testvalue4"})])),
    ]
    others = {"alias": "al2023@latest", "tags": {"test": "testvalue"}, "name": "my-custom-ami", "owner": "123456789"}
    out += [_case(s, 714, f"ami id with {k}", "reject", _spec(ami, [_term(id="ami-1234749", **{k: v})]))
            for k, v in others.items()]
    others = {"id": "ami-1234749", "tags": {"test": "testvalue"}, "name": "my-custom-ami", "owner": "123456789"}
    out += [_case(s, 729, f"ami alias with {k}", "reject", _spec(ami, [_term(alias="al2023@latest", **{k: v})]))
            for k, v in others.items()]
    out += [_case(s, 743, "alias with other terms", "reject",
                  _spec(ami, [{"alias": "al2023@latest"}, {"id": "ami-1234749"}]))]
    out += [_case(s, 750, f"valid alias {alias}", "accept", _spec("amiFamily", family), _spec(ami, [{"alias": alias}]))
            for alias, family in (("al2@latest", "AL2"), ("al2@v20240625", "AL2"), ("al2023@latest", "AL2023"),
                                  ("al2023@v20240625", "AL2023"), ("bottlerocket@latest", "Bottlerocket"),
                                  ("bottlerocket@1.10.0", "Bottlerocket"), ("windows2019@latest", "Windows2019"),
                                  ("windows2022@latest", "Windows2022"), ("windows2025@latest", "Windows2025"))]
    out += [_case(s, 767, f"incorrectly formatted alias {alias!r}", "reject", _spec(ami, [{"alias": alias}]))
            for alias in ("@latest", "al2023", "al2023@", "al2023-latest")]
    out += [_case(s, 776, "an alias with an invalid family", "reject", _spec(ami, [{"alias": "ubuntu@latest"}]))]
    out += [_case(s, 782, f"non-latest Windows alias {alias}", "reject", _spec(ami, [{"alias": alias}]))
            for alias in ("windows2019@v1.0.0", "windows2022@v1.0.0", "windows2025@v1.0.0")]
    out += [
        _case(s, 796, "kubeReserved with invalid keys", "reject", _kubelet(kubeReserved={"pods": "2"})),
        _case(s, 804, "systemReserved with invalid keys", "reject", _kubelet(systemReserved={"pods": "2"})),
        _case(s, 819, "evictionHard with valid keys", "accept", _kubelet(evictionHard=VALID_SOFT)),
        _case(s, 827, "evictionHard with invalid keys", "reject", _kubelet(evictionHard={"memory": "5%"})),
        _case(s, 835, "evictionHard: invalid formatted percentage", "reject",
              _kubelet(evictionHard={"memory.available": "5%3"})),
        _case(s, 843, "evictionHard: percentage too large", "reject",
              _kubelet(evictionHard={"memory.available": "110%"})),
        _case(s, 851, "evictionHard: invalid quantity", "reject", _kubelet(evictionHard={"memory.available": "110GB"})),
        _case(s, 875, "evictionSoft with valid keys", "accept",
              _kubelet(evictionSoft=VALID_SOFT, evictionSoftGracePeriod=VALID_GRACE)),
        _case(s, 886, "evictionSoft with invalid keys", "reject",
              _kubelet(evictionSoft={"memory": "5%"}, evictionSoftGracePeriod={"memory": seconds(60)})),
        _case(s, 897, "evictionSoft: invalid formatted percentage", "reject", _kubelet(
            evictionSoft={"memory.available": "5%3"}, evictionSoftGracePeriod={"memory.available": seconds(60)})),
        _case(s, 908, "evictionSoft: percentage too large", "reject", _kubelet(
            evictionSoft={"memory.available": "110%"}, evictionSoftGracePeriod={"memory.available": seconds(60)})),
        _case(s, 919, "evictionSoft: invalid quantity", "reject", _kubelet(
            evictionSoft={"memory.available": "110GB"}, evictionSoftGracePeriod={"memory.available": seconds(60)})),
        _case(s, 927, "evictionSoft without a matching grace period", "reject",
              _kubelet(evictionSoft={"memory.available": "200Mi"})),
        _case(s, 935, "a valid imageGCHighThresholdPercent", "accept", _kubelet(imageGCHighThresholdPercent=10)),
        _case(s, 942, "imageGCHighThresholdPercent less than imageGCLowThresholdPercent", "reject",
              _kubelet(imageGCHighThresholdPercent=50, imageGCLowThresholdPercent=60)),
        _case(s, 949, "imageGCLowThresholdPercent greater than imageGCHighThresholdPercent", "reject",
              _kubelet(imageGCHighThresholdPercent=50, imageGCLowThresholdPercent=60)),
        _case(s, 972, "evictionSoftGracePeriod with valid keys", "accept",
              _kubelet(evictionSoft=VALID_SOFT, evictionSoftGracePeriod=VALID_GRACE)),
        _case(s, 980, "evictionSoftGracePeriod with invalid keys", "reject",
              _kubelet(evictionSoftGracePeriod={"memory": seconds(60)})),
        _case(s, 988, "evictionSoftGracePeriod without a matching threshold", "reject",
              _kubelet(evictionSoftGracePeriod={"memory.available": seconds(60)})),
    ]
    return out


def _bare_node_class(*mappings: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    """The BlockDeviceMappings context's own EC2NodeClass: the BeforeEach's selector terms and role, no
    amiFamily, the given mappings (ec2nodeclass_validation_cel_test.go:1028-1055)."""

    def make() -> dict[str, Any]:
        obj = _node_class()
        del obj["spec"]["amiFamily"]
        obj["spec"]["blockDeviceMappings"] = copy.deepcopy(list(mappings))
        return obj

    return make


def _mapping(device: str, size: str, *, root: bool = False, **ebs: Any) -> dict[str, Any]:
    """A BlockDeviceMapping; rootVolume false is omitted (omitempty), volumeSize a canonical Quantity."""
    out: dict[str, Any] = {"deviceName": device, "ebs": {"volumeSize": size, **ebs}}
    if root:
        out["rootVolume"] = True
    return out


def _nic(card: int, device: int, kind: str) -> dict[str, Any]:
    return {"networkCardIndex": card, "deviceIndex": device, "interfaceType": kind}


def _role(value: str) -> Change:
    return _spec("role", value)


def _profile(value: str | None) -> Change:
    return _spec("instanceProfile", value)


def _struct(key: str, value: dict[str, Any]) -> Change:
    """A pointer to a struct whose fields are all omitempty: `{}` when they are all zero, never left out."""
    return lambda obj: obj["spec"].__setitem__(key, dict(value))


def _set_labels(label: str) -> Change:
    return lambda obj: obj["spec"]["template"]["metadata"].__setitem__("labels", {label: "test"})


def _node_class_cases_2() -> list[dict[str, Any]]:
    s = NODECLASS
    meta = "metadataOptions"
    out = [
        _case(s, 1000, "valid metadataOptions", "accept", _spec(meta, {
            "httpEndpoint": "disabled", "httpProtocolIPv6": "enabled", "httpPutResponseHopLimit": 34,
            "httpTokens": "optional"})),
        _case(s, 1006, "invalid httpEndpoint", "reject", _spec(meta, {"httpEndpoint": "test"})),
        _case(s, 1012, "invalid httpProtocolIPv6", "reject", _spec(meta, {"httpProtocolIPv6": "test"})),
        _case(s, 1018, "invalid httpPutResponseHopLimit", "reject", _spec(meta, {"httpPutResponseHopLimit": -5})),
        _case(s, 1024, "invalid httpTokens", "reject", _spec(meta, {"httpTokens": "test"})),
    ]
    bdm = [
        (1056, "more than one mapping, one root volume", "accept",
         [_mapping("map-device-1", "500G", root=True), _mapping("map-device-2", "50T")]),
        (1077, "valid VolumeSize in G", "accept", [_mapping("map-device-1", "58G")]),
        (1098, "valid VolumeSize in T", "accept", [_mapping("map-device-1", "45T")]),
        (1126, "more than one root volume", "reject",
         [_mapping("map-device-1", "50G", root=True), _mapping("map-device-2", "50G", root=True)]),
        (1147, "VolumeSize less than 1Gi/1G", "reject", [_mapping("map-device-1", "1m")]),
        (1168, "VolumeSize greater than 64T", "reject", [_mapping("map-device-1", "100T")]),
        (1189, "a zero Quantity VolumeSize", "reject", [_mapping("map-device-1", "0")]),
        (1211, "volumeInitializationRate without snapshotID", "reject",
         [_mapping("map-device-1", "0", volumeInitializationRate=100)]),
        (1234, "volumeInitializationRate too low", "reject",
         [_mapping("map-device-1", "0", snapshotID="snap-1", volumeInitializationRate=99)]),
        (1257, "volumeInitializationRate too high", "reject",
         [_mapping("map-device-1", "0", snapshotID="snap-1", volumeInitializationRate=888)]),
    ]
    out += [_case(s, line, name, expect, base=_bare_node_class(*mappings)) for line, name, expect, mappings in bdm]
    nics = "networkInterfaces"
    out += [
        _case(s, 1284, "valid multiple network interfaces", "accept", _spec(nics, [
            _nic(0, 0, "interface"), _nic(0, 1, "efa-only"), _nic(1, 0, "efa-only"), _nic(1, 1, "interface")])),
        _case(s, 1288, "empty network interfaces (omitted)", "accept", _spec(nics, None)),
        _case(s, 1298, "an invalid interface type", "reject", _spec(nics, [_nic(0, 0, "efa")])),
        _case(s, 1313, "a negative networkCardIndex", "reject",
              _spec(nics, [_nic(0, 0, "interface"), _nic(-1, 0, "interface")])),
        _case(s, 1328, "a negative deviceIndex", "reject",
              _spec(nics, [_nic(-1, 0, "interface"), _nic(0, -1, "interface")])),
        _case(s, 1353, "duplicate network card and device index", "reject", _spec(nics, [
            _nic(0, 0, "interface"), _nic(0, 1, "efa-only"), _nic(1, 0, "interface"), _nic(1, 0, "efa-only")])),
        _case(s, 1363, "no primary network interface", "reject", _spec(nics, [_nic(0, 1, "interface")])),
        _case(s, 1373, "primary network interface not ENA", "reject", _spec(nics, [_nic(0, 0, "efa-only")])),
        _case(s, 1393, "multiple EFA devices on one network card", "reject", _spec(nics, [
            _nic(0, 0, "interface"), _nic(1, 0, "efa-only"), _nic(1, 1, "efa-only")])),
    ]
    ct = "connectionTracking"
    conntrack: tuple[tuple[int, str, str, dict[str, int]], ...] = (
        (1399, "connectionTracking with no fields", "reject", {}),
        (1405, "valid tcpEstablishedTimeout", "accept", {"tcpEstablishedTimeout": 60}),
        (1411, "valid udpStreamTimeout", "accept", {"udpStreamTimeout": 120}),
        (1417, "valid udpTimeout", "accept", {"udpTimeout": 45}),
        (1425, "all valid connection tracking settings", "accept",
         {"tcpEstablishedTimeout": 432000, "udpStreamTimeout": 180, "udpTimeout": 60}),
        (1431, "tcpEstablishedTimeout below 60", "reject", {"tcpEstablishedTimeout": 59}),
        (1437, "tcpEstablishedTimeout above 432000", "reject", {"tcpEstablishedTimeout": 432001}),
        (1443, "udpStreamTimeout below 60", "reject", {"udpStreamTimeout": 59}),
        (1449, "udpStreamTimeout above 180", "reject", {"udpStreamTimeout": 181}),
        (1455, "udpTimeout below 30", "reject", {"udpTimeout": 29}),
        (1461, "udpTimeout above 60", "reject", {"udpTimeout": 61}),
    )
    # a pointer to an empty struct is `{}` (its fields are omitempty): set it as is
    out += [_case(s, line, name, expect, _struct(ct, value)) for line, name, expect, value in conntrack]
    role = _role
    profile = _profile
    created_role = _case(s, 1471, "", "accept", role("test-role"))["object"]
    created_profile = _case(s, 1479, "", "accept", role(""), profile("test-instance-profile"))["object"]
    out += [
        _case(s, 1467, "should fail if role is not defined", "reject", role("")),
        _case(s, 1471, "role: the create", "accept", role("test-role")),
        _case(s, 1474, "should succeed when updating the role", "accept", role("test-role2"), old=created_role),
        _case(s, 1479, "unmanaged instance profile: the create", "accept", role(""), profile("test-instance-profile")),
        _case(s, 1483, "switch from an unmanaged to a managed instance profile", "accept", role("test-role"),
              profile(None), old=created_profile),
        _case(s, 1488, "managed instance profile: the create", "accept", role("test-role"), profile(None)),
        _case(s, 1492, "switch from a managed to an unmanaged instance profile", "accept", role(""),
              profile("test-instance-profile"), old=created_role),
        _case(s, 1501, "nestedVirtualization enabled", "accept",
              _spec("cpuOptions", {"nestedVirtualization": "enabled"})),
        _case(s, 1507, "nestedVirtualization disabled", "accept",
              _spec("cpuOptions", {"nestedVirtualization": "disabled"})),
        _case(s, 1513, "invalid nestedVirtualization", "reject",
              _spec("cpuOptions", {"nestedVirtualization": "invalid"})),
        _case(s, 1517, "empty CPUOptions", "accept", _struct("cpuOptions", {})),
    ]
    return out


def _node_pool() -> dict[str, Any]:
    """The suite's BeforeEach NodePool (nodepool_validation_cel_test.go:34-52) as the Go client sends it."""
    return {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": "tigerbolt-2-a1b2c3d4e5", "creationTimestamp": None},
        "spec": {
            "template": {"metadata": {}, "spec": {
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "Exists"}],
                "nodeClassRef": {"kind": "EC2NodeClass", "name": "default", "group": "karpenter.k8s.aws"},
                "expireAfter": "Never"}},
            "disruption": {"consolidateAfter": "Never"},
        },
        "status": {},
    }


def _requirement(key: str, values: list[str]) -> Change:
    return lambda obj: obj["spec"]["template"]["spec"].__setitem__(
        "requirements", [{"key": key, "operator": "In", "values": values}])


def _replace_requirement(key: str, values: list[str]) -> Change:
    """karpenter's test.ReplaceRequirements: drop the requirements of that key, append the new one
    (kubernetes-sigs/karpenter@v1.14.1:pkg/test/nodepool.go:88-95)."""

    def change(obj: dict[str, Any]) -> None:
        spec = obj["spec"]["template"]["spec"]
        spec["requirements"] = [r for r in spec["requirements"] if r["key"] != key]
        spec["requirements"].append({"key": key, "operator": "In", "values": values})

    return change


def _node_pool_cases() -> list[dict[str, Any]]:
    s = NODEPOOL
    tenancy = "karpenter.k8s.aws/instance-tenancy"
    capacity = "karpenter.sh/capacity-type"
    out = [_case(s, 64, f"should allow well known label exceptions ({label})", "accept",
                 _requirement(label, ["test"]), base=_node_pool)
           for label in WELL_KNOWN_LABELS if label not in ("karpenter.sh/nodepool", capacity, tenancy)]
    out += [
        _case(s, 77, "only invalid capacity types: accepted (RuntimeValidate refuses)", "accept",
              _replace_requirement(capacity, ["xspot"]), base=_node_pool),
        _case(s, 89, "valid capacity types", "accept", _replace_requirement(capacity, ["on-demand"]), base=_node_pool),
        _case(s, 101, "invalid and valid capacity types", "accept",
              _replace_requirement(capacity, ["on-demand", "xspot"]), base=_node_pool),
        _case(s, 114, "only invalid tenancy types: accepted (RuntimeValidate refuses)", "accept",
              _replace_requirement(tenancy, ["xdedicated"]), base=_node_pool),
        _case(s, 126, "valid tenancy types", "accept", _replace_requirement(tenancy, ["default"]), base=_node_pool),
        _case(s, 138, "invalid and valid tenancy types", "accept",
              _replace_requirement(tenancy, ["default", "xdedicated"]), base=_node_pool),
    ]
    out += [_case(s, 152, f"should allow well known label exceptions as labels ({label})", "accept",
                  _set_labels(label), base=_node_pool)
            for label in WELL_KNOWN_LABELS if label != "karpenter.sh/nodepool"]
    return out


SUITES = [
    {"suite": f"{NODECLASS} (envtest)", "license": "Apache-2.0", "field_validation": "Warn",
     "cases": _node_class_cases_1() + _node_class_cases_2(), "not_translated": []},
    {"suite": f"{NODEPOOL} (envtest)", "license": "Apache-2.0", "field_validation": "Warn",
     "cases": _node_pool_cases(), "not_translated": []},
]

_ = duration  # the rule's helper, for cases that set a metav1.Duration by text
