"""Loading a stack: read the `gpu-platform:` keys, validate them, check the matrix, raise one ConfigError."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import typing
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import pulumi
from pydantic import ValidationError

from components.config.issues import CONFIG_FILE_ENV, PROJECT, ConfigError, Path, PoolOs, _close
from components.config.models import GpuPool, StackConfig
from components.config.pod_sizing import cpu_findings
from components.config.problems import Problem, _problem_from_error, merge_by_key
from components.config.serving import STARTUP_MAX_SECONDS
from components.config.vllm_checks import vllm_advisories, vllm_problems
from components.config.vllm_model import model_advisories
from components.config.wake_checks import wake_node_problems
from components.inference import budget
from policies.gpu_guard.calendar import program_day
from policies.gpu_guard.eks_support import with_support_type
from policies.gpu_guard.matrix import load_matrix

# --------------------------------------------------------------------------------------------------
# Matrix checks at program start


def _matrix_problems(stack: StackConfig, today: date | None) -> tuple[list[Problem], list[Problem]]:
    """(mandatory problems, advisories) from the compatibility matrix for the cluster and every GPU pool."""
    matrix = load_matrix()
    when = today or program_day()
    mandatory: list[Problem] = []
    advisory: list[Problem] = []

    def add(level: str, problem: Problem) -> None:
        target = mandatory if level == "mandatory" else advisory
        if level != "ok" and problem not in target:
            target.append(problem)

    control_plane = stack.cluster.kubernetes_version
    support_type = stack.cluster.support_type.upper()
    for finding in with_support_type(matrix.eks_lifecycle(control_plane, when), support_type):
        add(finding.level, Problem(("cluster", "kubernetesVersion"), control_plane, finding.message, finding.nearest))
    for j, instance_type in enumerate(stack.system_node_group.instance_types):
        if matrix.is_gpu_instance(instance_type):
            add("mandatory", Problem(
                ("systemNodeGroup", "instanceTypes", j), instance_type,
                "the system node group is untainted and must not use GPU instances (GPU nodes carry the "
                "nvidia.com/gpu taint and belong in a GPU pool)",
                ("m7i.large",)))
    operator = stack.gpu_operator.version if stack.gpu_operator else None
    if operator is not None and matrix.operator(operator) is None:
        newer = matrix.newer_operator(operator)
        if newer is not None:  # the matrix predates it: add it, never step down (issue 46)
            add("mandatory", Problem(("gpuOperator", "version"), operator, newer))
            return merge_by_key(mandatory), merge_by_key(advisory)
        choices = tuple(reversed(matrix.operators()))
        add("mandatory", Problem(("gpuOperator", "version"), operator,
                                 "not a GPU Operator release the compatibility matrix knows",
                                 tuple(_close(operator, choices)) or choices[:3]))
        return merge_by_key(mandatory), merge_by_key(advisory)
    for pool in stack.gpu_pools():
        known = [(j, matrix.instance_type(t)) for j, t in enumerate(pool.instance_types)]
        arches = [(j, inst.cpu_arch) for j, inst in known if inst is not None]
        for j, cpu_arch in arches[1:]:
            if cpu_arch != arches[0][1]:
                add("mandatory", Problem(
                    (*pool.path, "instanceTypes", j), pool.instance_types[j],
                    f"a pool boots one image, so its instance types share a CPU architecture; this one is {cpu_arch}, "
                    f"{pool.instance_types[arches[0][0]]} is {arches[0][1]}",
                    fix="move it to a pool of its own"))
        for instance_type in pool.instance_types:
            findings = pool_findings(matrix, pool, operator=operator, kubernetes=control_plane,
                                     instance_type=instance_type, today=when)
            for finding in findings:
                if finding.rule == "kubernetes-version-lifecycle":
                    continue  # reported once for the cluster above
                path, value = _finding_target(stack, pool, finding.rule, finding.nearest, instance_type)
                nearest = tuple(c for c in finding.nearest
                                if _suggestion_passes(matrix, pool, path, c, operator=operator,
                                                      kubernetes=control_plane, today=when))
                add(finding.level, Problem(path, value, finding.message, nearest))
    if stack.karpenter is not None:
        for i, karpenter_pool in enumerate(stack.karpenter.pools):
            problem = _max_gpus_problem(matrix, karpenter_pool.instance_types, karpenter_pool.max_gpus, i)
            if problem is not None:
                add("mandatory", problem)
    return merge_by_key(mandatory), merge_by_key(advisory)


def pool_findings(
    matrix: Any, pool: GpuPool, *, operator: str | None, kubernetes: str, instance_type: str, today: date,
) -> list[Any]:
    """Every matrix finding for one pool and instance type: the one place a pool meets the matrix.

    A Karpenter Bottlerocket / AL2023 pool pins its image release (`imageVersion`), and that release, not
    the calendar, decides the driver its nodes get: the matrix judges the driver and the instance type
    against the pinned release (`Matrix.check(image_version=...)`, per-release facts of the matrix issue).
    """
    return list(matrix.check(
        os=typing.cast(Any, pool.os), driver=pool.driver_version,
        operator=operator if pool.driver_source == "operator" else None,
        kubernetes=kubernetes, kubelet=pool.kubelet_version, instance_type=instance_type,
        precompiled=pool.use_precompiled, image_version=pool.image_version, today=today,
        branch_pin=pool.branch_pin,
        pool_kind="karpenter-nodepool" if pool.kind == "karpenter" else pool.kind,
    ))


def _suggestion_passes(
    matrix: Any, pool: GpuPool, path: Path, candidate: str, *, operator: str | None, kubernetes: str, today: date,
) -> bool:
    """Would the pool pass every matrix check with `candidate` at `path`? A "nearest valid choice" one rule
    offers (the GPU's minimum driver: 575.57.08) may be refused by another (the operator has no R575), so every
    suggestion is re-checked against the whole pool before it is shown. Paths outside the pool keep theirs."""
    key = path[-1] if path else None
    if path[: len(pool.path)] != pool.path:
        return True
    if key == "driverVersion" or path == pool.driver_path:
        changed = dataclasses.replace(pool, driver_version=candidate)
    elif key == "kubeletVersion":
        changed = dataclasses.replace(pool, kubelet_version=candidate)
    elif key == "imageVersion":
        changed = dataclasses.replace(pool, image_version=candidate)
    elif isinstance(key, int) and path[-2:-1] == ("instanceTypes",):
        types = list(pool.instance_types)
        types[key] = candidate
        changed = dataclasses.replace(pool, instance_types=tuple(types))
    else:
        return True
    try:
        return not any(
            f.level == "mandatory" and f.rule != "kubernetes-version-lifecycle"
            for instance_type in changed.instance_types
            for f in pool_findings(matrix, changed, operator=operator, kubernetes=kubernetes,
                                   instance_type=instance_type, today=today)
        )
    except ValueError:  # a candidate that does not parse in that place is no suggestion
        return False


def _max_gpus_problem(matrix: Any, instance_types: Sequence[str], max_gpus: int, index: int) -> Problem | None:
    """`maxGpus` below the GPU count of one of the pool's instance types: Karpenter could never launch that type."""
    counts = [(name, inst.gpus) for name in instance_types if (inst := matrix.instance_type(name)) is not None]
    too_big = [(name, gpus) for name, gpus in counts if gpus > max_gpus]
    if not too_big:
        return None
    name, gpus = max(too_big, key=lambda pair: pair[1])
    return Problem(
        ("karpenter", "pools", index, "maxGpus"), max_gpus,
        f"the NodePool's nvidia.com/gpu limit is below the {gpus} GPUs of one {name}, so Karpenter can never "
        "launch it (a node that would cross spec.limits is not created)",
        (str(max(g for _, g in counts)),), f"raise maxGpus or remove {name} from instanceTypes")


def _finding_target(
    stack: StackConfig, pool: GpuPool, rule: str, nearest: Sequence[str], instance_type: str
) -> tuple[Path, Any]:
    """The key a matrix finding blames: driver, OS, kubelet, operator version or an instance type."""
    if rule == "instance-type-known":
        return (*pool.path, "instanceTypes", pool.instance_types.index(instance_type)), instance_type
    if rule == "node-image-published" and pool.image_version is not None and nearest \
            and all(n.startswith("v") for n in nearest):
        # The suggestions are image releases (v1.68.0): the key to change is the pinned release.
        return (*pool.path, "imageVersion"), pool.image_version
    if rule in ("kubelet-version-skew", "node-image-published"):
        return (*pool.path, "kubeletVersion"), pool.kubelet_version
    if rule in ("operator-kubernetes-supported", "operator-known"):
        return ("gpuOperator", "version"), stack.gpu_operator.version if stack.gpu_operator else None
    if rule == "driver-branch-supported" and nearest and all(n in _OS_CHOICES for n in nearest):
        return (*pool.path, "os"), pool.os
    if rule == "driver-branch-supported" and nearest and all(_OPERATOR_RELEASE.match(n) for n in nearest):
        # the operator release does not list the pool's OS: the fix is another release (matrix/operators.py)
        return ("gpuOperator", "version"), stack.gpu_operator.version if stack.gpu_operator else None
    return pool.driver_path, pool.driver_version


_OS_CHOICES = frozenset(typing.get_args(PoolOs))
_OPERATOR_RELEASE = re.compile(r"^v\d+\.\d+\.\d+$")


def _arn_region(arn: str) -> str:
    return arn.split(":")[3]


def _instance_read_problem(matrix: Any, stack: StackConfig, service: Any, at: Path,
                           *, confirmed: bool = True) -> Problem | None:
    """The model read of a new replica on the slowest instance type it may land on, against startupSeconds.

    The volume's restore rate (components/inference/budget.py) is capped by the instance's EBS bandwidth: its maximum
    for EBS_BURST_SECONDS where it bursts, then its baseline (the matrix's instance_families[].ebs_mbps, AWS's
    "Amazon EBS-optimized instance types" table). A size whose bandwidth the matrix does not hold is not judged.
    `confirmed` picks the sizes judged: those whose row a primary source confirms (a refusal), or the others (an
    advisory that names the fact to confirm: an unconfirmed number never refuses a stack, "Cannot see, cannot
    block")."""
    volume = service.model_volume
    if volume is None:
        return None
    rate, how = volume.restore_rate()
    pools = [p for p in stack.gpu_pools() if not service.node_pools or p.name in service.node_pools]
    worst: tuple[int, int, str, str, Any] | None = None
    for pool in pools:
        for name in pool.instance_types:
            inst = matrix.instance_type(name)
            if inst is None or inst.ebs_mbps is None or bool(inst.ebs_confirmed) != confirmed:
                continue
            baseline, maximum = inst.ebs_mbps
            read_s = budget.instance_read_seconds(volume.snapshot_gib, rate, baseline, maximum)
            if worst is None or read_s > worst[0]:
                worst = (read_s, budget.startup_for_read(read_s), name, pool.name, inst)
    if worst is None or worst[1] <= service.startup_seconds:
        return None
    read_s, needed, name, pool_name, inst = worst
    baseline, maximum = inst.ebs_mbps
    burst = (f", bursting to {maximum} Mbps ({budget.mbps_to_mibps(maximum):.0f} MiB/s) for "
             f"{budget.EBS_BURST_SECONDS // 60} minutes" if maximum > baseline else "")
    why = (f"the volume gives {rate} MiB/s ({how}), but {name}'s EBS bandwidth is {baseline} Mbps "
           f"({budget.mbps_to_mibps(baseline):.0f} MiB/s){burst} (source: {inst.ebs_source})")
    where = f"a new replica on {name} (pool {pool_name!r}) reads its {volume.snapshot_gib} GiB snapshot in {read_s} s"
    if not confirmed:
        return Problem(
            (*at, "startupSeconds"), service.startup_seconds,
            f"{where} if the matrix's EBS bandwidth for {name} holds, {needed} s with the margin, more than the "
            f"startupSeconds {service.startup_seconds} the startup probe allows: {why}. Not refused: no primary "
            f"source read confirms {name}'s baseline of {baseline} Mbps (matrix instance_families[{inst.family}]."
            "ebs_confirmed is false)",
            fix=f"read {name}'s row in AWS's EBS specifications table (https://docs.aws.amazon.com/ec2/latest/"
                f"instancetypes/ac.html) or `aws ec2 describe-instance-types --instance-types {name} --query "
                "InstanceTypes[].EbsInfo.EbsOptimizedInfo`; with the number confirmed, raise startupSeconds to "
                f"{needed} if it holds, or keep {name} out of the service's pools")
    if needed > STARTUP_MAX_SECONDS:
        # No startupSeconds covers it (the field stops there): suggesting `needed` would be refused in turn.
        return Problem(
            (*at, "startupSeconds"), service.startup_seconds,
            f"{where}, {needed} s with the margin, more than the {STARTUP_MAX_SECONDS} s startupSeconds may allow: "
            f"{why}",
            fix=f"keep {name} out of the service's pools (a larger size has more EBS bandwidth), or make the "
                "snapshot smaller")
    return Problem(
        (*at, "startupSeconds"), service.startup_seconds,
        f"{where}, {needed} s with the margin, more than the startupSeconds {service.startup_seconds} the startup "
        f"probe allows: {why}",
        (str(needed),),
        fix=f"raise startupSeconds to {needed}, or keep {name} out of the service's pools (a larger size reads "
            "faster)")


def _read_advisories(stack: StackConfig) -> list[Problem]:
    """The model read judged on instance sizes whose EBS baseline no primary source confirms, and vLLM's dtype
    fallbacks (vllm_checks.vllm_advisories), and catalog facts the stack file overrides (vllm_model.model_advisories):
    advisories only."""
    matrix = load_matrix()
    found = (_instance_read_problem(matrix, stack, service, ("inferenceServices", i), confirmed=False)
             for i, service in enumerate(stack.inference_services))
    vllm = [a for i, service in enumerate(stack.inference_services)
            for a in (*vllm_advisories(matrix, stack, service, ("inferenceServices", i)),
                      *model_advisories(service, ("inferenceServices", i)))]
    cpu = [a for i, service in enumerate(stack.inference_services)
           for a in cpu_findings(matrix, stack, service, ("inferenceServices", i))[1]]
    return [*(p for p in found if p is not None), *vllm, *cpu]


def _service_problems(stack: StackConfig, region: str | None) -> list[Problem]:
    """Inference service keys that only the matrix or the stack's region can judge."""
    matrix = load_matrix()
    problems: list[Problem] = []
    for i, service in enumerate(stack.inference_services):
        at: Path = ("inferenceServices", i)
        revealed = matrix.image_cuda(service.image)
        if service.cuda_version is None and revealed is None:
            problems.append(Problem(
                (*at, "cudaVersion"), None,
                f"the CUDA runtime of {service.image} is unknown (the matrix knows nvidia/cuda, NGC release and "
                "vllm/vllm-openai release tags); the gpu-platform.io/cuda label needs it to judge the service "
                "against each pool's driver",
                fix="set cudaVersion to the CUDA version the image is built on"))
        elif (service.cuda_version is not None and revealed is not None
              and not revealed.cuda.startswith(service.cuda_version)):
            problems.append(Problem(
                (*at, "cudaVersion"), service.cuda_version,
                f"the image tag says CUDA {revealed.cuda} ({revealed.source})", (revealed.cuda,)))
        read = _instance_read_problem(matrix, stack, service, at)
        if read is not None:
            problems.append(read)
        problems += vllm_problems(matrix, stack, service, at)
        problems += wake_node_problems(matrix, stack, service, at)
        problems += cpu_findings(matrix, stack, service, at)[0]
        if service.ingress is None or region is None:
            continue
        # An ALB takes an ACM certificate and a regional web ACL of its own region only.
        # Source: https://docs.aws.amazon.com/elasticloadbalancing/latest/application/https-listener-certificates.html
        # Source: https://docs.aws.amazon.com/waf/latest/developerguide/web-acl-associating-aws-resource.html
        for key, arn in (("certificateArn", service.ingress.certificate_arn),
                         ("wafAclArn", service.ingress.waf_acl_arn)):
            if arn is not None and _arn_region(arn) != region:
                problems.append(Problem(
                    (*at, "ingress", key), arn,
                    f"the ALB is in {region} (aws:region) and can only use a {key.removesuffix('Arn')} of its "
                    f"own region, not {_arn_region(arn)}",
                    fix=f"create or import it in {region} and use that ARN"))
    return problems


# --------------------------------------------------------------------------------------------------
# Loading


def stack_file_name() -> str:
    """The file the user edits: $GPU_PLATFORM_CONFIG_FILE, else `Pulumi.<stack>.yaml`."""
    override = os.environ.get(CONFIG_FILE_ENV)
    if override:
        return override
    return f"Pulumi.{pulumi.get_stack()}.yaml"


def _raw_values(cfg: pulumi.Config | Mapping[str, Any]) -> dict[str, Any]:
    """Every `gpu-platform:` key with its value, the prefix stripped."""
    raw: dict[str, Any] = {}
    if isinstance(cfg, pulumi.Config):
        from pulumi.runtime import config as runtime_config  # noqa: PLC0415

        keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
        items = {k: runtime_config.get_config(k) for k in keys}
    else:
        items = dict(cfg)
    for full_key, value in items.items():
        namespace, _, bare = full_key.rpartition(":")
        if namespace and namespace != PROJECT:
            continue
        raw[bare] = value
    return {k: _decode(v) for k, v in raw.items()}


def _aws_region(cfg: pulumi.Config | Mapping[str, Any]) -> str | None:
    """The stack's `aws:region`, where it is set."""
    if isinstance(cfg, pulumi.Config):
        return pulumi.Config("aws").get("region")
    region = cfg.get("aws:region")
    return str(region) if region else None


def _decode(value: Any) -> Any:
    """Pulumi hands object and list values over as JSON strings."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                return value
    return value


def parse_stack_config(raw: Mapping[str, Any]) -> tuple[StackConfig | None, list[Problem]]:
    """Validate the decoded `gpu-platform:` values; (config, []) or (None, problems)."""
    try:
        return StackConfig.model_validate(dict(raw)), []
    except ValidationError as exc:
        problems: list[Problem] = []
        for error in exc.errors(include_url=False):
            for problem in _problem_from_error(typing.cast(Mapping[str, Any], error)):
                if problem not in problems:
                    problems.append(problem)
        return None, merge_by_key(problems)


# What a problem of the stack file's schema keeps from running: the later stages read the validated model.
SCHEMA_HOLDS_BACK = "the service and matrix checks, which run once the stack file's keys are valid"


def problems_message(problems: Sequence[Problem], stack_file: str) -> str:
    """One message listing every problem, one line each with its key (what `raise_problems` raises), and the
    checks that schema problems held back (`Problem.holds_back`)."""
    lines = [p.render(stack_file) for p in problems]
    held = any(p.holds_back for p in problems)
    if len(lines) == 1:
        return lines[0] + (f" (this held back {SCHEMA_HOLDS_BACK})" if held else "")
    header = f"{stack_file}: the stack configuration has {len(lines)} problems; nothing was created:"
    return "\n".join([header, *(f"  - {line}" for line in lines),
                      *([f"  (these held back {SCHEMA_HOLDS_BACK})"] if held else [])])


def raise_problems(problems: Sequence[Problem], stack_file: str) -> typing.NoReturn:
    """Raise one ConfigError listing every problem (the message `pulumi up` prints)."""
    raise ConfigError(problems_message(problems, stack_file))


def load_stack_config(
    cfg: pulumi.Config | Mapping[str, Any],
    *,
    stack_file: str | None = None,
    check_matrix: bool = True,
    today: date | None = None,
) -> StackConfig:
    """Read, validate and matrix-check every `gpu-platform:*` key; raise ConfigError on the first bad stack.

    `cfg` is a `pulumi.Config` (inside a Pulumi program) or a mapping of config keys (`gpu-platform:cluster`
    or bare `cluster`) to values (JSON strings or already-decoded objects). Matrix advisories (an EOL
    driver branch, extended-support Kubernetes) are logged as warnings, never raised.
    """
    file_name = stack_file or stack_file_name()
    config, problems, advisories = check_stack(_raw_values(cfg), region=_aws_region(cfg), check_matrix=check_matrix,
                                               today=today)
    if config is None:
        raise_problems(problems, file_name)
    for advisory in advisories:
        pulumi.log.warn(advisory.render(file_name))
    return config


def check_stack(
    raw: Mapping[str, Any], *, region: str | None, check_matrix: bool = True, today: date | None = None,
) -> tuple[StackConfig | None, list[Problem], list[Problem]]:
    """Every check of `load_stack_config`, without raising: (config or None, problems, advisories).

    The one validation path: the stack file (`load_stack_config`) and the component package (provider/, each
    component's Args as the stack sections they stand for) both call it and render its problems.
    """
    config, problems = parse_stack_config(raw)
    if config is None:
        # The later stages read the validated model: the problems say which checks they held back.
        return None, [dataclasses.replace(p, holds_back=True) for p in problems], []
    # The service and matrix stages read the same valid model and not each other's results: both run, so one
    # run names every problem of both (issue 56).
    service_problems = _service_problems(config, region)
    mandatory, advisories = _matrix_problems(config, today) if check_matrix else ([], [])
    if service_problems or mandatory:
        return None, [*service_problems, *mandatory], []
    if not check_matrix:
        return config, [], []
    return config, [], [*advisories, *_read_advisories(config)]


def matrix_advisories(config: StackConfig, *, stack_file: str, today: date | None = None) -> list[str]:
    """The advisory matrix findings for a valid stack, rendered (for tests and the preview summary)."""
    return [p.render(stack_file) for p in _matrix_problems(config, today)[1]]

