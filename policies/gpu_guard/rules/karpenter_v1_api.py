"""karpenter-v1-api: NodePools and EC2NodeClasses are Karpenter v1 and validate against the v1 CRD schemas.

The structural rules the pack needs are encoded below, each under a `# Source:` line naming the
upstream CRD (aws/karpenter-provider-aws v1.14.1). tests/policies/test_karpenter_schema.py reads
the same CRDs from the pinned upstream cache (upstream.lock.json, `make upstream`) and fails when an encoded enum /
required list / key list
drifts from them. The CRDs themselves are not shipped in the pack.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from ..base import EnforcementLevel, ReportViolation, resource_policy
from ..inventory import as_list, as_str_map, get

NODEPOOL_CRD = "https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/crds/karpenter.sh_nodepools.yaml"
EC2NODECLASS_CRD = (
    "https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml"
)

# Both CRDs serve and store only v1.
# Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/crds/karpenter.sh_nodepools.yaml
# Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml
SERVED_VERSIONS = {"karpenter.sh": ("v1",), "karpenter.k8s.aws": ("v1",)}

# --- NodePool -------------------------------------------------------------------------------------------------
# Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/crds/karpenter.sh_nodepools.yaml
NODEPOOL_SPEC_REQUIRED = ("template",)
NODEPOOL_TEMPLATE_REQUIRED = ("spec",)
NODEPOOL_TEMPLATE_SPEC_REQUIRED = ("nodeClassRef", "requirements")
NODE_CLASS_REF_REQUIRED = ("group", "kind", "name")
DISRUPTION_REQUIRED = ("consolidateAfter",)
CONSOLIDATION_POLICIES = ("WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced")
BUDGET_REASONS = ("Underutilized", "Empty", "Drifted")
REQUIREMENT_OPERATORS = ("Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
DURATION_PATTERN = r"^(([0-9]+(s|m|h))+|Never)$"  # consolidateAfter, expireAfter
# The CEL rules on requirement keys (and template labels): the karpenter.sh domain allows only these keys
# (karpenter.sh/nodepool is then restricted on its own), the karpenter.k8s.aws domain only the list below.
KARPENTER_SH_ALLOWED_KEYS = ("karpenter.sh/capacity-type", "karpenter.sh/nodepool")
RESTRICTED_KEYS = ("karpenter.sh/nodepool", "kubernetes.io/hostname")
KARPENTER_AWS_KEYS = (
    "karpenter.k8s.aws/instance-tenancy",
    "karpenter.k8s.aws/capacity-reservation-type",
    "karpenter.k8s.aws/capacity-reservation-id",
    "karpenter.k8s.aws/capacity-reservation-interruptible",
    "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-capability-flex",
    "karpenter.k8s.aws/placement-group-id",
    "karpenter.k8s.aws/placement-group-partition",
)

# Keys of the kubernetes.io / k8s.io domains Karpenter accepts (WellKnownLabels); other keys of those domains
# are restricted unless their domain ends in one of the exception domains.
# Source: https://github.com/kubernetes-sigs/karpenter/blob/main/pkg/apis/v1/labels.go
#         (RestrictedLabelDomains, LabelDomainExceptions, WellKnownLabels, RestrictedLabels)
RESTRICTED_DOMAINS = ("kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws")
DOMAIN_EXCEPTIONS = ("kops.k8s.io", "node.kubernetes.io", "node-restriction.kubernetes.io")
KUBERNETES_WELL_KNOWN_KEYS = (
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "node.kubernetes.io/windows-build",
)
# Provider labels outside the restricted domains that Karpenter also knows (AWS zone id).
# Source: https://karpenter.sh/docs/concepts/scheduling/#well-known-labels
AWS_WELL_KNOWN_KEYS = ("topology.k8s.aws/zone-id",)

# --- EC2NodeClass ---------------------------------------------------------------------------------------------
# Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml
EC2NODECLASS_SPEC_REQUIRED = ("amiSelectorTerms", "securityGroupSelectorTerms", "subnetSelectorTerms")
AMI_FAMILIES = ("AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019", "Windows2022", "Windows2025")
AMI_ALIAS_FAMILIES = ("al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025")
AMI_SELECTOR_FIELDS = ("tags", "id", "name", "alias", "ssmParameter")
HTTP_TOKENS = ("required", "optional")
VOLUME_TYPES = ("standard", "io1", "io2", "gp2", "sc1", "st1", "gp3")

# The v1beta1 -> v1 renames users hit most.
# Source: https://karpenter.sh/docs/upgrading/v1-migration/
RENAMED_CONSOLIDATION_POLICIES = {"WhenUnderutilized": "WhenEmptyOrUnderutilized"}

_AWS_NODE_CLASS = ("karpenter.k8s.aws", "EC2NodeClass")
# EKS Auto Mode runs Karpenter itself; its NodePools are karpenter.sh/v1 and reference Auto Mode's own node class
# (the built-in `default`, or a custom one), which is not Karpenter's AWS provider's EC2NodeClass.
# Source: https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html (nodeClassRef: group
#         eks.amazonaws.com, kind NodeClass) and https://docs.aws.amazon.com/eks/latest/userguide/create-node-class.html
_AUTO_MODE_NODE_CLASS = ("eks.amazonaws.com", "NodeClass")
NODE_CLASSES = (_AWS_NODE_CLASS, _AUTO_MODE_NODE_CLASS)


def _domain(key: str) -> str:
    return key.split("/", 1)[0] if "/" in key else ""


def known_keys() -> tuple[str, ...]:
    allowed_sh = tuple(k for k in KARPENTER_SH_ALLOWED_KEYS if k not in RESTRICTED_KEYS)
    return allowed_sh + KARPENTER_AWS_KEYS + KUBERNETES_WELL_KNOWN_KEYS + AWS_WELL_KNOWN_KEYS


def _nearest(value: str, choices: tuple[str, ...]) -> str:
    match = difflib.get_close_matches(value, choices, n=1, cutoff=0.5)
    return f"; nearest valid key: {match[0]}" if match else ""


def key_problem(key: str) -> str | None:
    """Why a requirement key / template label does not exist for Karpenter v1 (None when it is fine)."""
    domain = _domain(key)
    if key in RESTRICTED_KEYS:
        return f"'{key}' is restricted (Karpenter sets it itself)"
    if domain.endswith("karpenter.sh"):
        if key in KARPENTER_SH_ALLOWED_KEYS:
            return None
        return f"'{key}' does not exist: the karpenter.sh label domain is restricted{_nearest(key, known_keys())}"
    if domain.endswith("karpenter.k8s.aws"):
        if key in KARPENTER_AWS_KEYS:
            return None
        return (f"'{key}' does not exist: the karpenter.k8s.aws label domain is restricted"
                f"{_nearest(key, known_keys())}")
    if key in KUBERNETES_WELL_KNOWN_KEYS or any(domain.endswith(d) for d in DOMAIN_EXCEPTIONS):
        return None
    if domain.endswith(("kubernetes.io", "k8s.io")):
        return f"'{key}' is not a well-known label of the restricted {domain} domain{_nearest(key, known_keys())}"
    return None


def _missing(obj: Any, required: tuple[str, ...]) -> list[str]:
    return [k for k in required if get(obj, k) is None]


def _version(resource_type: str) -> tuple[str, str, str]:
    # kubernetes:<group>/<version>:<Kind>
    _, _, rest = resource_type.partition(":")
    group_version, _, kind = rest.partition(":")
    group, _, version = group_version.rpartition("/")
    return group, version, kind


def _nodepool(name: str, props: Any) -> list[str]:
    out: list[str] = []
    where = f"NodePool '{name}'"
    spec = get(props, "spec")
    if spec is None:
        return [f"{where} has no spec; the v1 CRD requires spec.template ({NODEPOOL_CRD})"]
    out += [f"{where} is missing required spec.{k}" for k in _missing(spec, NODEPOOL_SPEC_REQUIRED)]
    template = get(spec, "template", default={})
    out += [f"{where} is missing required spec.template.{k}" for k in _missing(template, NODEPOOL_TEMPLATE_REQUIRED)]
    tspec = get(template, "spec", default={})
    if get(spec, "template") is not None and get(template, "spec") is not None:
        for k in _missing(tspec, NODEPOOL_TEMPLATE_SPEC_REQUIRED):
            fix = (" Fix: nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: <EC2NodeClass>}"
                   if k == "nodeClassRef" else " Fix: requirements: [] or the instance constraints")
            out.append(f"{where} is missing required spec.template.spec.{k}.{fix}")
    ref = get(tspec, "nodeClassRef")
    if ref is not None:
        missing = [k for k in NODE_CLASS_REF_REQUIRED if not get(ref, k)]
        if missing:
            out.append(
                f"{where}: spec.template.spec.nodeClassRef lacks {missing} (v1 requires group, kind and name; "
                f"v1beta1 had only name). Fix: nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, "
                f"name: {get(ref, 'name', default='<EC2NodeClass>')}}}"
            )
        elif (str(get(ref, "group")), str(get(ref, "kind"))) not in NODE_CLASSES:
            out.append(
                f"{where}: nodeClassRef {get(ref, 'group')}/{get(ref, 'kind')} is neither the AWS provider's node "
                "class nor EKS Auto Mode's. Fix: group: karpenter.k8s.aws, kind: EC2NodeClass (self-managed "
                "Karpenter), or group: eks.amazonaws.com, kind: NodeClass (EKS Auto Mode)"
            )
    out += _disruption(where, get(spec, "disruption"))
    expire = get(tspec, "expireAfter")
    if expire is not None and not re.match(DURATION_PATTERN, str(expire)):
        out.append(f"{where}: spec.template.spec.expireAfter {expire!r} is not a duration (e.g. 720h) or Never")
    for i, req in enumerate(as_list(get(tspec, "requirements"))):
        out += _requirement(where, i, req)
    for field in ("taints", "startupTaints"):
        for taint in as_list(get(tspec, field)):
            effect = str(get(taint, "effect", default=""))
            if effect not in TAINT_EFFECTS:
                out.append(f"{where}: spec.template.spec.{field} effect {effect!r} is not one of {list(TAINT_EFFECTS)}"
                           f"{_nearest_value(effect, TAINT_EFFECTS)}")
    for key in as_str_map(get(template, "metadata", "labels")):
        problem = key_problem(key)
        if problem:
            out.append(f"{where}: template label {problem}. Fix: use a custom label domain (gpu-platform.io/...)")
    return out


def _nearest_value(value: str, choices: tuple[str, ...]) -> str:
    def norm(text: str) -> str:
        return text.replace("_", "").replace("-", "").lower()

    by_norm = {norm(c): c for c in choices}
    match = difflib.get_close_matches(norm(value), list(by_norm), n=1, cutoff=0.4)
    return f"; nearest valid value: {by_norm[match[0]]}" if match else ""


def _disruption(where: str, disruption: Any) -> list[str]:
    if disruption is None:
        return []
    out: list[str] = []
    policy = get(disruption, "consolidationPolicy")
    if policy is not None and str(policy) not in CONSOLIDATION_POLICIES:
        nearest = RENAMED_CONSOLIDATION_POLICIES.get(str(policy))
        hint = (f"; {policy} is the v1beta1 name, v1 calls it {nearest}" if nearest
                else _nearest_value(str(policy), CONSOLIDATION_POLICIES))
        out.append(f"{where}: spec.disruption.consolidationPolicy {policy!r} is not one of "
                   f"{list(CONSOLIDATION_POLICIES)}{hint}. Fix: consolidationPolicy: "
                   f"{nearest or 'WhenEmptyOrUnderutilized'}")
    after = get(disruption, "consolidateAfter")
    if after is None:
        out.append(f"{where}: spec.disruption is set without its required consolidateAfter. "
                   "Fix: consolidateAfter: 1m (or Never to disable consolidation)")
    elif not re.match(DURATION_PATTERN, str(after)):
        out.append(f"{where}: spec.disruption.consolidateAfter {after!r} is not a duration (e.g. 10m) or Never")
    for budget in as_list(get(disruption, "budgets")):
        for reason in as_list(get(budget, "reasons")):
            if str(reason) not in BUDGET_REASONS:
                out.append(f"{where}: disruption budget reason {reason!r} is not one of {list(BUDGET_REASONS)}"
                           f"{_nearest_value(str(reason), BUDGET_REASONS)}")
        if (get(budget, "schedule") is None) != (get(budget, "duration") is None):
            out.append(f"{where}: a disruption budget sets schedule without duration (or the reverse); "
                       "the CRD requires both together. Fix: add the missing one (e.g. duration: 10m)")
    return out


def _requirement(where: str, index: int, req: Any) -> list[str]:
    out: list[str] = []
    at = f"{where}: spec.template.spec.requirements[{index}]"
    key = get(req, "key")
    operator = get(req, "operator")
    if key is None or operator is None:
        return [f"{at} needs both key and operator"]
    problem = key_problem(str(key))
    if problem:
        out.append(f"{at}: key {problem}. Fix: use an existing key")
    if str(operator) not in REQUIREMENT_OPERATORS:
        out.append(f"{at}: operator {operator!r} is not one of {list(REQUIREMENT_OPERATORS)}"
                   f"{_nearest_value(str(operator), REQUIREMENT_OPERATORS)}")
        return out
    values = [str(v) for v in as_list(get(req, "values"))]
    if operator == "In" and not values:
        out.append(f"{at}: operator In needs at least one value")
    if operator in ("Gt", "Lt", "Gte", "Lte") and (len(values) != 1 or not values[0].isdigit()):
        out.append(f"{at}: operator {operator} needs exactly one non-negative integer value, got {values}")
    return out


def _node_class(name: str, props: Any) -> list[str]:
    where = f"EC2NodeClass '{name}'"
    spec = get(props, "spec")
    if spec is None:
        return [f"{where} has no spec; the v1 CRD requires {list(EC2NODECLASS_SPEC_REQUIRED)} ({EC2NODECLASS_CRD})"]
    out: list[str] = []
    for k in EC2NODECLASS_SPEC_REQUIRED:
        if not as_list(get(spec, k)):
            fix = (" Fix: amiSelectorTerms: [{alias: bottlerocket@<pinned version>}] (or al2023@...), or "
                   "id/name/ssmParameter terms with amiFamily" if k == "amiSelectorTerms"
                   else f" Fix: set {k} (tags or ids)")
            out.append(f"{where} is missing required spec.{k}.{fix}")
    if (get(spec, "role") is None) == (get(spec, "instanceProfile") is None):
        out.append(f"{where} must set exactly one of spec.role and spec.instanceProfile")
    family = get(spec, "amiFamily")
    if family is not None and str(family) not in AMI_FAMILIES:
        out.append(f"{where}: spec.amiFamily {family!r} is not one of {list(AMI_FAMILIES)}"
                   f"{_nearest_value(str(family), AMI_FAMILIES)}"
                   + (" (Ubuntu was dropped in v1: select the AMI by id/name and use Custom)"
                      if str(family).lower().startswith("ubuntu") else ""))
    terms = as_list(get(spec, "amiSelectorTerms"))
    aliases = [str(get(t, "alias")) for t in terms if get(t, "alias") is not None]
    for term in terms:
        if not any(get(term, f) is not None for f in AMI_SELECTOR_FIELDS):
            out.append(f"{where}: an amiSelectorTerms entry sets none of {list(AMI_SELECTOR_FIELDS)}")
    for alias in aliases:
        alias_family, at, version = alias.partition("@")
        if not at or not version:
            out.append(f"{where}: amiSelectorTerms alias {alias!r} must be family@version (e.g. al2023@v20240807)")
        elif alias_family not in AMI_ALIAS_FAMILIES:
            out.append(f"{where}: amiSelectorTerms alias family {alias_family!r} is not one of "
                       f"{list(AMI_ALIAS_FAMILIES)}{_nearest_value(alias_family, AMI_ALIAS_FAMILIES)}")
    if aliases and len(terms) != 1:
        out.append(f"{where}: an alias amiSelectorTerm must be the only term")
    if terms and not aliases and family is None:
        out.append(f"{where}: spec.amiFamily is required when amiSelectorTerms has no alias. Fix: amiFamily: Custom "
                   "(or the family of the selected AMI)")
    tokens = get(spec, "metadataOptions", "httpTokens")
    if tokens is not None and str(tokens) not in HTTP_TOKENS:
        out.append(f"{where}: metadataOptions.httpTokens {tokens!r} is not one of {list(HTTP_TOKENS)}")
    for mapping in as_list(get(spec, "blockDeviceMappings")):
        volume_type = get(mapping, "ebs", "volumeType")
        if volume_type is not None and str(volume_type) not in VOLUME_TYPES:
            out.append(f"{where}: blockDeviceMappings volumeType {volume_type!r} is not one of {list(VOLUME_TYPES)}"
                       f"{_nearest_value(str(volume_type), VOLUME_TYPES)}")
    return out


def validate(args: Any, report_violation: ReportViolation) -> None:
    group, version, kind = _version(args.resource_type)
    if group not in SERVED_VERSIONS:
        return
    name = str(get(args.props, "metadata", "name", default=args.name))
    if version not in SERVED_VERSIONS[group]:
        report_violation(
            f"{kind} '{name}' uses {group}/{version}; Karpenter v1 serves only {group}/v1 (the v1 CRD has no "
            f"{version}), so the object is rejected. Fix: apiVersion: {group}/v1 and migrate the spec "
            "(https://karpenter.sh/docs/upgrading/v1-migration/).",
            args.urn,
        )
    if kind == "NodePool":
        problems = _nodepool(name, args.props)
    elif kind == "EC2NodeClass":
        problems = _node_class(name, args.props)
    else:
        problems = []
    for problem in problems:
        report_violation(f"{problem} (Karpenter v1 CRD schema).", args.urn)


POLICY = resource_policy(
    "karpenter-v1-api",
    "NodePools and EC2NodeClasses are karpenter.sh/v1 / karpenter.k8s.aws/v1 and validate against their v1 CRD "
    "schemas.",
    validate,
    enforcement=EnforcementLevel.MANDATORY,
)
