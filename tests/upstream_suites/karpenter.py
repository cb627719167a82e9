"""kubernetes-sigs/karpenter v1.14.1's envtest CEL suites for NodePool and NodeClaim, translated by hand, one case
per `Expect(env.Client.Create|Update(...))`, each with its line (translation rule: tests/upstream_suites/gojson.py).

The suites run against the core CRDs of that tag; the pinned CRDs are karpenter-provider-aws v1.14.1's, which
are the same plus rules restricting the `karpenter.k8s.aws` label domain, which no case here uses.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from tests.upstream_suites.gojson import duration, quantity, seconds

REPO = "kubernetes-sigs/karpenter@v1.14.1"
NODEPOOL = f"{REPO}:pkg/apis/v1/nodepool_validation_cel_test.go"
NODECLAIM = f"{REPO}:pkg/apis/v1/nodeclaim_validation_cel_test.go"

# pkg/apis/v1/labels.go at the tag: RestrictedLabelDomains, RestrictedLabels, WellKnownLabels.
RESTRICTED_LABEL_DOMAINS = ["karpenter.sh"]
RESTRICTED_LABELS = ["kubernetes.io/hostname"]
WELL_KNOWN_LABELS = ["karpenter.sh/nodepool", "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
                     "node.kubernetes.io/instance-type", "kubernetes.io/arch", "kubernetes.io/os",
                     "karpenter.sh/capacity-type", "node.kubernetes.io/windows-build"]
ZONE = "topology.kubernetes.io/zone"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
SILLY = "Tigerbolt"  # randomdata.SillyName()
LONG = "a1b2c3d4e5" * 25  # strings.ToLower(randomdata.Alphanumeric(250))


def _node_pool() -> dict[str, Any]:
    """The suite's BeforeEach NodePool (nodepool_validation_cel_test.go:46-65) as the Go client sends it."""
    return {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": "nodepool-test", "creationTimestamp": None},
        "spec": {
            "template": {"metadata": {}, "spec": {
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "Exists"}],
                "nodeClassRef": {"kind": "TestNodeClass", "name": "default", "group": "karpenter.test.sh"},
                "expireAfter": "Never"}},
            "disruption": {"consolidateAfter": "Never"},
        },
        "status": {},
    }


def _node_claim() -> dict[str, Any]:
    """The suite's BeforeEach NodeClaim (nodeclaim_validation_cel_test.go:40-60) as the Go client sends it."""
    return {
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "nodeclaim-test", "creationTimestamp": None},
        "spec": {
            "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "Exists"}],
            "resources": {},
            "nodeClassRef": {"kind": "TestNodeClaim", "name": "default", "group": "karpenter.test.sh"},
            "expireAfter": "Never",
        },
        "status": {},
    }


Change = Callable[[dict[str, Any]], None]


def _case(source: str, line: int, name: str, expect: str, base: Callable[[], dict[str, Any]], *changes: Change,
          old: dict[str, Any] | None = None) -> dict[str, Any]:
    obj = base()
    for change in changes:
        change(obj)
    case = {"source": f"{source}:{line}", "name": name, "object": obj, "expect": expect}
    if old is not None:
        case["old"] = old
    return case


def _pool_spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["template"]["spec"]  # type: ignore[no-any-return]


def _claim_spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]  # type: ignore[no-any-return]


def _set(where: Callable[[dict[str, Any]], dict[str, Any]], key: str, value: Any) -> Change:
    return lambda obj: where(obj).__setitem__(key, copy.deepcopy(value))


def _list_of(where: Callable[[dict[str, Any]], dict[str, Any]], key: str) -> Callable[..., Change]:
    """A maker of the change that sets `key` (under `where`) to the list of its arguments."""

    def make(*items: Any) -> Change:
        return _set(where, key, list(items))

    return make


def _labels(labels: dict[str, str]) -> Change:
    return _template_meta("labels", labels)


def _ref(key: str, value: str) -> Change:
    return lambda obj: _pool_spec(obj)["nodeClassRef"].__setitem__(key, value)


def _budgets(*budgets: dict[str, Any]) -> Change:
    return lambda obj: obj["spec"]["disruption"].__setitem__("budgets", copy.deepcopy(list(budgets)))


def _budget(nodes: str, schedule: str | None = None, span: str | None = None,
            reasons: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"nodes": nodes}
    if reasons:
        out["reasons"] = reasons
    if schedule is not None:
        out["schedule"] = schedule
    if span is not None:
        out["duration"] = duration(span)
    return out


def _req(key: str, operator: str, values: list[str] | None = None, min_values: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key}
    if operator:
        out["operator"] = operator
    if values:
        out["values"] = values
    if min_values is not None:
        out["minValues"] = min_values
    return out


def _taint(key: str = "", effect: str = "", value: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"key": key}
    if value:
        out["value"] = value
    out["effect"] = effect
    return out


def _requirement_cases(source: str, base: Callable[[], dict[str, Any]],
                       where: Callable[[dict[str, Any]], dict[str, Any]],
                       lines: dict[str, Any]) -> list[dict[str, Any]]:
    """The Requirements context both suites share (same cases, their own lines)."""
    reqs = _list_of(where, "requirements")
    out = [
        _case(source, lines["supported"], "should allow supported ops", "accept", base, reqs(
            _req(ZONE, "In", ["test"]), _req(ZONE, "Gt", ["1"]), _req(ZONE, "Lt", ["1"]), _req(ZONE, "NotIn"),
            _req(ZONE, "Exists"))),
        _case(source, lines["unsupported"], "should fail for unsupported ops (unknown)", "reject", base,
              reqs(_req(ZONE, "unknown", ["test"]))),
    ]
    out += [_case(source, lines["domains"], f"should fail for restricted domains ({d})", "reject", base,
                  reqs(_req(f"{d}/test", "In", ["test"]))) for d in RESTRICTED_LABEL_DOMAINS]
    out += [_case(source, lines["labels"], f"should fail for restricted labels ({label})", "reject", base,
                  reqs(_req(f"{label}/test", "In", ["test"]))) for label in RESTRICTED_LABELS]
    out += [_case(source, lines["k8s"], f"should allow kubernetes domains ({d})", "accept", base,
                  reqs(_req(f"{d}/test", "In", ["test"]))) for d in ("kubernetes.io", "k8s.io")]
    out += [_case(source, lines["k8s_sub"], f"should allow kubernetes subdomains ({d})", "accept", base,
                  reqs(_req(f"subdomain.{d}/test", "In", ["test"]))) for d in ("kubernetes.io", "k8s.io")]
    out += [_case(source, lines["well_known"], f"should allow well known label exceptions ({label})", "accept", base,
                  reqs(_req(label, "In", ["test"])))
            for label in WELL_KNOWN_LABELS if label not in ("karpenter.sh/nodepool", "karpenter.sh/capacity-type")]
    out += [
        _case(source, lines["overlap"], "should allow non-empty set after removing overlapped value", "accept", base,
              reqs(_req(ZONE, "In", ["test", "foo"]), _req(ZONE, "NotIn", ["test", "bar"]))),
        # an empty Go slice without omitempty is `[]`
        _case(source, lines["empty"], "should allow empty requirements", "accept", base, reqs()),
    ]
    for key, ops in (("gt_lt", ("Gt", "Lt")), ("gte_lte", ("Gte", "Lte"))):
        for op in ops:
            for values in ([], ["1", "2"], ["a"], ["-1"]):
                out.append(_case(source, lines[key], f"should fail with invalid {op} values {values}", "reject",
                                 base, reqs(_req(ZONE, op, values))))
    out += [
        _case(source, lines["min_negative"], "should error when minValues is negative", "reject", base,
              reqs(_req(INSTANCE_TYPE, "In", ["insance-type-1"], -1))),
        _case(source, lines["min_zero"], "should error when minValues is zero", "reject", base,
              reqs(_req(INSTANCE_TYPE, "In", ["insance-type-1"], 0))),
        _case(source, lines["min_51"], "should error when minValues is more than 50", "reject", base,
              reqs(_req(INSTANCE_TYPE, "Exists", None, 51))),
        _case(source, lines["values_90"], "should allow more than 50 values if minValues is not specified", "accept",
              base, reqs(_req(INSTANCE_TYPE, "In", [f"instance{i}" for i in range(90)]))),
        _case(source, lines["min_gt_values"], "should error when minValues is greater than the number of unique "
              "values specified within In operator", "reject", base,
              reqs(_req(INSTANCE_TYPE, "In", ["insance-type-1"], 2))),
    ]
    return out


def _duration_cases(source: str, base: Callable[[], dict[str, Any]], where: Callable[[dict[str, Any]], dict[str, Any]],
                    key: str, good: tuple[int, list[str]], bad: tuple[int, list[str]]) -> list[dict[str, Any]]:
    return ([_case(source, good[0], f"should succeed on a valid {key} ({v!r})", "accept", base, _set(where, key, v))
             for v in good[1]]
            + [_case(source, bad[0], f"should fail on an invalid {key} ({v!r})", "reject", base, _set(where, key, v))
               for v in bad[1]])


def _disruption(key: str, value: Any) -> Change:
    return lambda obj: obj["spec"]["disruption"].__setitem__(key, value)


def _spec(key: str, value: Any) -> Change:
    return lambda obj: obj["spec"].__setitem__(key, copy.deepcopy(value))


def _template_meta(key: str, value: Any) -> Change:
    return lambda obj: obj["spec"]["template"]["metadata"].__setitem__(key, copy.deepcopy(value))


def _node_pool_cases() -> list[dict[str, Any]]:
    s, base, spec = NODEPOOL, _node_pool, _pool_spec
    taints = _list_of(spec, "taints")
    labels = _labels
    cron = "* * * * *"
    out = [_case(s, 73, "should succeed on a disabled expireAfter", "accept", base, _set(spec, "expireAfter", "Never"))]
    out += _duration_cases(s, base, spec, "expireAfter", (82, ["30s", "1h30m5s", "Never"]),
                           (94, ["-1s", "1hr", "FooNever"]))
    out += [_case(s, 102, "should succeed on a disabled consolidateAfter", "accept", base,
                  _disruption("consolidateAfter", "Never"))]
    out += _duration_cases(s, base, lambda o: o["spec"]["disruption"], "consolidateAfter",
                           (110, ["30s", "1h30m5s", "Never"]), (122, ["-1s", "1hr", "FooNever"]))
    out += [
        _case(s, 131, "consolidateAfter with consolidationPolicy=WhenEmpty", "accept", base,
              _disruption("consolidateAfter", "30s"), _disruption("consolidationPolicy", "WhenEmpty")),
        _case(s, 136, "consolidateAfter with consolidationPolicy=WhenEmptyOrUnderutilized", "accept", base,
              _disruption("consolidateAfter", "30s"), _disruption("consolidationPolicy", "WhenEmptyOrUnderutilized")),
        _case(s, 141, "consolidateAfter Never with WhenEmptyOrUnderutilized", "accept", base,
              _disruption("consolidateAfter", "Never"), _disruption("consolidationPolicy", "WhenEmptyOrUnderutilized")),
        _case(s, 146, "consolidateAfter Never with WhenEmpty", "accept", base,
              _disruption("consolidateAfter", "Never"), _disruption("consolidationPolicy", "WhenEmpty")),
    ]
    out += [_case(s, 154, f"should succeed on a valid consolidationPolicy ({v})", "accept", base,
                  _disruption("consolidationPolicy", v)) for v in ("WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced")]
    out += [_case(s, 166, f"should fail on an invalid consolidationPolicy ({v!r})", "reject", base,
                  _disruption("consolidationPolicy", v))
            for v in ("1", "2", "3", "0", "4", "10", "balanced", "whenempty", "", "WhenUnderutilized", "foo")]
    out += [
        _case(s, 195, "should fail when creating a budget with an invalid cron", "reject", base,
              _budgets(_budget("10", "*", "20m"))),
        _case(s, 203, "should fail when creating a schedule with less than 5 entries", "reject", base,
              _budgets(_budget("10", "* * * * ", "20m"))),
        _case(s, 211, "should fail when creating a budget with a negative duration", "reject", base,
              _budgets(_budget("10", cron, "-20m"))),
        _case(s, 219, "should fail when creating a budget with a seconds duration", "reject", base,
              _budgets(_budget("10", cron, "30s"))),
        _case(s, 225, "should fail when creating a budget with a negative value int", "reject", base,
              _budgets(_budget("-10"))),
        _case(s, 231, "should fail when creating a budget with a negative value percent", "reject", base,
              _budgets(_budget("-10%"))),
        _case(s, 237, "should fail when creating a budget with a value percent with more than 3 digits", "reject",
              base, _budgets(_budget("1000%"))),
        _case(s, 244, "should fail when creating a budget with a cron but no duration", "reject", base,
              _budgets(_budget("10", cron))),
        _case(s, 251, "should fail when creating a budget with a duration but no cron", "reject", base,
              _budgets(_budget("10", None, "20m"))),
        _case(s, 259, "should succeed when creating a budget with both duration and cron", "accept", base,
              _budgets(_budget("10", cron, "20m"))),
        _case(s, 267, "should succeed when creating a budget with hours and minutes in duration", "accept", base,
              _budgets(_budget("10", cron, "2h20m"))),
        _case(s, 273, "should succeed when creating a budget with neither duration nor cron", "accept", base,
              _budgets(_budget("10"))),
        _case(s, 281, "should succeed when creating a budget with special cased crons", "accept", base,
              _budgets(_budget("10", "@annually", "20m"))),
        _case(s, 295, "should fail when creating two budgets where one has an invalid crontab", "reject", base,
              _budgets(_budget("10", "@annually", "20m"), _budget("10", "*", "20m"))),
        _case(s, 312, "should fail when creating multiple budgets where one doesn't have both schedule and duration",
              "reject", base, _budgets(_budget("10", None, "20m"), _budget("10", cron, "20m"), _budget("10"))),
    ]
    out += [_case(s, 321, f"should allow disruption reason {r}", "accept", base,
                  _budgets(_budget("10", cron, "20m", [r]))) for r in ("Drifted", "Underutilized", "Empty")]
    # an empty DisruptionReason is "" in the list (the slice is not empty)
    out += [_case(s, 335, f"should not allow reason {r!r}", "reject", base, _budgets(
        {"nodes": "10", "reasons": [r], "schedule": cron, "duration": duration("20m")}))
        for r in ("invalid", "expired", "")]
    out += [_case(s, 349, "should allow setting multiple reasons", "accept", base,
                  _budgets(_budget("10", cron, "20m", ["Drifted", "Empty"])))]
    out += [
        _case(s, 363, "should succeed for valid taints", "accept", base, taints(
            _taint("a", "NoSchedule", "b"), _taint("c", "NoExecute", "d"), _taint("e", "PreferNoSchedule", "f"),
            _taint("Test", "PreferNoSchedule", "f"), _taint("test.com/Test", "PreferNoSchedule", "f"),
            _taint("test.com.com/test", "PreferNoSchedule", "f"), _taint("key-only", "NoExecute"))),
    ]
    out += [_case(s, line, f"should fail for invalid taint keys ({key})", "reject", base,
                  taints(_taint(key, "NoSchedule")))
            for line, key in ((368, "test.com.com}"), (371, "Test.com/test"), (374, "test/test/test"),
                              (377, "test/"), (380, "/test"))]
    out += [
        _case(s, 386, "taint key too long: accepted by the API server", "accept", base,
              taints(_taint(f"test.com.test.{LONG}/test", "NoSchedule"))),
        _case(s, 391, "taint key name too long: accepted by the API server", "accept", base,
              taints(_taint(f"test.com.test/test-{LONG}", "NoSchedule"))),
        _case(s, 396, "should fail for missing taint key", "reject", base, taints(_taint("", "NoSchedule"))),
        _case(s, 401, "should fail for invalid taint value", "reject", base,
              taints(_taint("invalid-value", "NoSchedule", "???"))),
        _case(s, 406, "should fail for invalid taint effect", "reject", base, taints(_taint("invalid-effect", "???"))),
        _case(s, 414, "should not fail for same key with different effects", "accept", base,
              taints(_taint("a", "NoSchedule"), _taint("a", "NoExecute"))),
    ]
    reqs = _list_of(spec, "requirements")
    out += [_case(s, 426, "should succeed for valid requirement keys", "accept", base, reqs(
        _req("Test", "Exists"), _req("test.com/Test", "Exists"), _req("test.com.com/test", "Exists"),
        _req("key-only", "Exists")))]
    out += [_case(s, line, f"should fail for invalid requirement keys ({key})", "reject", base,
                  reqs(_req(key, "Exists")))
            for line, key in ((431, "test.com.com}"), (434, "Test.com/test"), (437, "test/test/test"),
                              (440, "test/"), (443, "/test"))]
    out += [
        _case(s, 449, "requirement key too long: accepted by the API server", "accept", base,
              reqs(_req(f"test.com.test.{LONG}/test", "Exists"))),
        _case(s, 454, "requirement key name too long: accepted by the API server", "accept", base,
              reqs(_req(f"test.com.test/test-{LONG}", "Exists"))),
        _case(s, 460, "should fail for the karpenter.sh/nodepool label", "reject", base,
              reqs(_req("karpenter.sh/nodepool", "In", [SILLY]))),
    ]
    out += _requirement_cases(s, base, spec, {
        "supported": 471, "unsupported": 479, "domains": 488, "labels": 497, "k8s": 507, "k8s_sub": 519,
        "well_known": 532, "overlap": 543, "empty": 548, "gt_lt": 563, "gte_lte": 579, "min_negative": 587,
        "min_zero": 593, "min_51": 599, "values_90": 609, "min_gt_values": 615})
    out += [
        _case(s, 621, "should allow unrecognized labels", "accept", base, labels({"foo": SILLY})),
        _case(s, 626, "should fail for the karpenter.sh/nodepool label", "reject", base,
              labels({"karpenter.sh/nodepool": SILLY})),
        _case(s, 631, "invalid label keys: accepted by the API server (RuntimeValidate refuses)", "accept", base,
              labels({"spaces are not allowed": SILLY})),
        _case(s, 637, "label key too long: accepted by the API server", "accept", base,
              labels({f"test.com.test.{LONG}/test": SILLY})),
        _case(s, 642, "label key name too long: accepted by the API server", "accept", base,
              labels({f"test.com.test/test-{LONG}": SILLY})),
        _case(s, 647, "should fail for invalid label values", "reject", base, labels({SILLY: "/ is not allowed"})),
    ]
    out += [_case(s, 653, f"should fail for restricted label domains ({d})", "reject", base,
                  labels({f"{d}/unknown": SILLY})) for d in RESTRICTED_LABEL_DOMAINS]
    out += [_case(s, 662, "should allow labels kOps require", "accept", base,
                  labels({"kops.k8s.io/instancegroup": "karpenter-nodes", "kops.k8s.io/gpu": "1"}))]
    for line, shape in ((671, "{}"), (683, "{}/key"), (695, "subdomain.{}"), (707, "subdomain.{}/key")):
        out += [_case(s, line, f"should allow label {shape.format(d)}", "accept", base,
                      labels({shape.format(d): "test-value"})) for d in ("kubernetes.io", "k8s.io")]
    out += _duration_cases(s, base, spec, "terminationGracePeriod", (721, ["30s", "1h30m5s"]),
                           (732, ["-1s", "1hr", "Never", "FooNever"]))
    ref = _ref
    out += [
        _case(s, 742, "should fail to mutate group: the first create", "accept", base),
        _case(s, 747, "should fail to mutate kind: the first create", "accept", base),
        _case(s, 753, "should fail if group is unset", "reject", base, ref("group", "")),
        _case(s, 757, "should fail if kind is unset", "reject", base, ref("kind", "")),
        _case(s, 761, "should fail if name is unset", "reject", base, ref("name", "")),
        _case(s, 768, "replicas positive", "accept", base, _spec("replicas", 5)),
        _case(s, 774, "replicas zero", "accept", base, _spec("replicas", 0)),
        _case(s, 780, "replicas large", "accept", base, _spec("replicas", 1000)),
        _case(s, 788, "replicas negative", "reject", base, _spec("replicas", -100)),
    ]
    replicas = _spec("replicas", 10)
    for line_name, change in (("limits.cpu", _spec("limits", {"cpu": quantity("1000")})),
                              ("limits.memory", _spec("limits", {"memory": quantity("2000Gi")})),
                              ("limits.pods", _spec("limits", {"pods": quantity("10")})),
                              ("limits.ephemeral-storage", _spec("limits", {"ephemeral-storage": quantity("10Gi")})),
                              ("weight", _spec("weight", 25))):
        out.append(_case(s, 796, f"should fail for incompatible fields ({line_name})", "reject", base, change,
                         replicas))
    compatible: list[tuple[str, Change]] = [
        ("limits.nodes", _spec("limits", {"nodes": quantity("100")})),
        ("disruption with multiple budgets", _spec("disruption", {
            "consolidateAfter": "5m", "consolidationPolicy": "WhenEmptyOrUnderutilized", "budgets": [
                _budget("20%", "0 9 * * mon-fri", "8h", ["Drifted", "Empty"]),
                _budget("30%", "0 22 * * sat,sun", "4h", ["Underutilized"]), _budget("5")]})),
        ("template labels", labels({"environment": "production"})),
        ("template annotations", _template_meta("annotations", {"example.com/last-updated": "2024-01-01"})),
        ("taints", taints(_taint("gpu-workload", "NoSchedule", "enabled"))),
        ("startup taints", _set(spec, "startupTaints", [_taint("example.com/initializing", "NoSchedule", "true")])),
        ("requirements", reqs(
            _req(INSTANCE_TYPE, "In", ["m5.large", "m5.xlarge", "m5.2xlarge", "c5.large", "c5.xlarge", "r5.large",
                                       "r5.xlarge"], 3),
            _req(ZONE, "In", ["us-west-2a", "us-west-2b", "us-west-2c"]),
            _req("karpenter.sh/capacity-type", "In", ["on-demand", "spot"]),
            _req("kubernetes.io/arch", "In", ["amd64"]),
            _req("karpenter.k8s.aws/instance-memory", "Gt", ["8192"]),
            _req("karpenter.k8s.aws/instance-cpu", "Lt", ["64"]))),
        ("expireAfter", _set(spec, "expireAfter", "72h")),
        ("terminationGracePeriod", _set(spec, "terminationGracePeriod", seconds(300))),
    ]
    out += [_case(s, 827, f"should succeed for compatible fields ({n})", "accept", base, change, replicas)
            for n, change in compatible]
    static3 = _case(s, 898, "", "accept", base, _spec("replicas", 3))["object"]
    dynamic = base()
    limits10 = _case(s, 932, "", "accept", base, _spec("replicas", 3), _spec("limits", {"nodes": "10"}))["object"]
    out += [
        _case(s, 898, "increasing replicas: the create", "accept", base, _spec("replicas", 3)),
        _case(s, 902, "should succeed when increasing replicas in a NodePool", "accept", base, _spec("replicas", 5),
              old=static3),
        _case(s, 913, "should fail when changing the NodePool from static to dynamic", "reject", base, old=static3),
        _case(s, 918, "dynamic to static: the create", "accept", base),
        _case(s, 922, "should fail when changing the NodePool from dynamic to static", "reject", base,
              _spec("replicas", 3), old=dynamic),
        _case(s, 932, "static nodes limit: the create", "accept", base, _spec("replicas", 3),
              _spec("limits", {"nodes": quantity("10")})),
        _case(s, 938, "should succeed when changing the static NodePool nodes limit", "accept", base,
              _spec("replicas", 3), _spec("limits", {"nodes": quantity("100")}), old=limits10),
    ]
    return out


def _node_claim_cases() -> list[dict[str, Any]]:
    s, base, spec = NODECLAIM, _node_claim, _claim_spec
    taints = _list_of(spec, "taints")
    out = [
        _case(s, 71, "should succeed for valid taints", "accept", base, taints(
            _taint("a", "NoSchedule", "b"), _taint("c", "NoExecute", "d"), _taint("e", "PreferNoSchedule", "f"),
            _taint("key-only", "NoExecute"))),
        _case(s, 75, "should fail for invalid taint keys", "reject", base, taints(_taint("???"))),
        _case(s, 79, "should fail for missing taint key", "reject", base, taints(_taint("", "NoSchedule"))),
        _case(s, 83, "should fail for invalid taint value", "reject", base,
              taints(_taint("invalid-value", "NoSchedule", "???"))),
        _case(s, 87, "should fail for invalid taint effect", "reject", base, taints(_taint("invalid-effect", "???"))),
        _case(s, 94, "should not fail for same key with different effects", "accept", base,
              taints(_taint("a", "NoSchedule"), _taint("a", "NoExecute"))),
        _case(s, 104, "should succeed for valid group", "accept", base, _set(spec, "nodeClassRef", {
            "kind": "TestNodeClass", "name": "nodeclass-test", "group": "karpenter.test.sh"})),
        _case(s, 112, "should fail for invalid group", "reject", base, _set(spec, "nodeClassRef", {
            "kind": "TestNodeClass", "name": "nodeclass-test", "group": "karpenter.test.sh/v1"})),
    ]
    out += _requirement_cases(s, base, spec, {
        "supported": 124, "unsupported": 131, "domains": 139, "labels": 147, "k8s": 156, "k8s_sub": 167,
        "well_known": 178, "overlap": 188, "empty": 192, "gt_lt": 206, "gte_lte": 221, "min_negative": 228,
        "min_zero": 234, "min_51": 240, "values_90": 250, "min_gt_values": 256})
    out += [_case(s, 264, "should error when requirements is greater than 100", "reject", base,
                  _set(spec, "requirements", [_req(f"key-{i}", "In", [f"value-{i}"]) for i in range(101)]))]
    out += _duration_cases(s, base, spec, "terminationGracePeriod", (274, ["30s", "1h30m5s"]),
                           (285, ["-1s", "1hr", "Never", "FooNever"]))
    out += _duration_cases(s, base, spec, "expireAfter", (300, ["30s", "1h30m5s", "Never"]),
                           (312, ["-1s", "1hr", "FooNever"]))
    return out


SUITES = [
    {"suite": f"{NODEPOOL} (envtest)", "license": "Apache-2.0", "field_validation": "Warn",
     "cases": _node_pool_cases(),
     "not_translated": [
         {"source": f"{NODEPOOL}:744", "why": "the second Create of the same name fails with AlreadyExists, not a "
                                              "validation rule (the test's own mutation is never sent as an update)"},
         {"source": f"{NODEPOOL}:749", "why": "as :744"},
         {"source": f"{NODEPOOL}:183", "why": "RuntimeValidate only: no API request"}]},
    {"suite": f"{NODECLAIM} (envtest)", "license": "Apache-2.0", "field_validation": "Warn",
     "cases": _node_claim_cases(), "not_translated": []},
]
