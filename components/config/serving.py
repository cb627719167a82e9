"""The serving part of the stack schema: `inferenceServices` and the pinned `addons` they install.

Sources:
- Triton's default ports (HTTP 8000, gRPC 8001, metrics 8002):
  https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/customization_guide/deploy.html
- KEDA Prometheus scaler (`query`, `threshold`, `activationThreshold` as strings):
  https://keda.sh/docs/2.20/scalers/prometheus/
- PromQL structure (components/config/promql.py): https://prometheus.io/docs/prometheus/latest/querying/basics/
- ALB idle timeout 1-4000 seconds:
  https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-load-balancer-attributes.html
- EBS volume initialization rate 100-300 MiB/s (StorageClass `volumeInitializationRate`):
  https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/master/docs/parameters.md
- EKS add-on versions (`v<driver version>-eksbuild.<n>`):
  https://docs.aws.amazon.com/eks/latest/userguide/managing-add-ons.html
"""

from __future__ import annotations

import re
import zoneinfo
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from components.config.base import _Model
from components.config.fields import (
    AcmArn,
    ChartVersion,
    CudaVersionStr,
    Host,
    Image,
    KmsKeyArn,
    MountPath,
    NumberString,
    PoolName,
    ServiceName,
    SnapshotId,
    WafArn,
    _unique,
)
from components.config.issues import ConfigIssue
from components.config.promql import check as check_promql
from components.config.vllm import OidcConfig, VllmConfig
from components.inference import budget
from components.inference import vllm as vllm_facts
from policies.gpu_guard.wakes import wake_message

DEFAULT_MODEL_REPOSITORY = "/models"
STARTUP_MAX_SECONDS = 7200  # the most `startupSeconds` may be (its field's bound)
_EKS_ADDON_VERSION_RE = re.compile(r"^v\d+\.\d+\.\d+-eksbuild\.\d+$")


def _promql(value: str) -> str:
    if not value.strip():
        raise ConfigIssue("the autoscaling query is empty; KEDA needs a PromQL expression that returns one number",
                          nearest=['sum(rate(nv_inference_request_success{service="<name>"}[1m]))'])
    try:
        check_promql(value)
    except ValueError as exc:
        raise ConfigIssue(f"not a PromQL expression Prometheus can parse ({exc})",
                          fix="try the query in Prometheus's expression browser first") from exc
    return value


def _eks_addon_version(value: str) -> str:
    if not _EKS_ADDON_VERSION_RE.match(value):
        bare = value.strip().lstrip("vV")
        nearest = [f"v{bare}-eksbuild.1"] if re.fullmatch(r"\d+\.\d+\.\d+", bare) else []
        raise ConfigIssue("an EKS add-on version is v<version>-eksbuild.<n>, such as v1.64.0-eksbuild.1",
                          nearest=nearest,
                          fix="list them with `aws eks describe-addon-versions --addon-name <name> "
                              "--kubernetes-version <cluster version>`")
    return value


# A standard five-field cron expression, as KEDA's cron scaler parses it: robfig/cron v3.0.1 (kedacore/keda @
# v2.20.2 go.mod) with Minute | Hour | Dom | Month | Dow (pkg/scalers/cron_scaler.go:39). Each field is a
# comma-separated list of `*` or `?`, a number or name, or a range `a-b`, each with an optional `/step`; the
# bounds and names are robfig/cron's (spec.go `minutes` ... `dow`; parser.go getRange, parseIntOrName). It knows
# no `L`, `W` or `#`. Source: https://keda.sh/docs/2.20/scalers/cron/, https://pkg.go.dev/github.com/robfig/cron/v3
_CRON_RE = re.compile(r"^\S+( \S+){4}$")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_CRON_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}), ("hour", 0, 23, {}), ("day-of-month", 1, 31, {}),
    ("month", 1, 12, {m: i + 1 for i, m in enumerate(_MONTHS)}),
    ("day-of-week", 0, 6, {d: i for i, d in enumerate(_DAYS)}),
)


def _cron_value(text: str, low: int, high: int, names: dict[str, int]) -> int | None:
    value = names.get(text.lower())
    if value is None and text.isdigit():
        value = int(text)
    return value if value is not None and low <= value <= high else None


def _cron_field_ok(field: str, low: int, high: int, names: dict[str, int]) -> bool:
    for part in field.split(","):
        span, _, step = part.partition("/")
        if "/" in part and not (step.isdigit() and int(step) > 0):
            return False
        if span in ("*", "?"):
            continue
        ends = span.split("-")
        values = [v for v in (_cron_value(e, low, high, names) for e in ends) if v is not None]
        if len(ends) > 2 or len(values) != len(ends) or values != sorted(values):
            return False
    return True


def _cron(value: str) -> str:
    if not _CRON_RE.match(value):
        raise ConfigIssue("a cron expression has five fields: minute hour day-of-month month day-of-week",
                          nearest=["0 7 * * 1-5"])
    for field, (name, low, high, names) in zip(value.split(), _CRON_FIELDS, strict=True):
        if not _cron_field_ok(field, low, high, names):
            raise ConfigIssue(
                f"the {name} field {field!r} is not one KEDA's cron parser (robfig/cron standard) accepts: "
                f"numbers {low}-{high}{' or names' if names else ''}, *, ?, ranges a-b, steps /n and lists; "
                "no L, W or #", nearest=["0 7 * * 1-5"])
    return value


def _timezone(value: str) -> str:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigIssue("an IANA time zone name, such as UTC or Europe/Paris", nearest=["UTC"]) from exc
    return value


PromQuery = Annotated[str, AfterValidator(_promql)]
EksAddonVersion = Annotated[str, AfterValidator(_eks_addon_version)]
Cron = Annotated[str, AfterValidator(_cron)]
TimeZone = Annotated[str, AfterValidator(_timezone)]


class WakeScheduleConfig(_Model):
    """`inferenceServices[].autoscaling.wakeSchedule`: a KEDA cron trigger that holds replicas in a time window.

    An input that exists while the service has no pods, so a service that scales to zero wakes at `start`
    (policies/gpu_guard/wakes.py). Source: https://keda.sh/docs/2.20/scalers/cron/ (timezone, start, end,
    desiredReplicas; kedacore/keda @ v2.20.2 pkg/scalers/cron_scaler.go:31-34, active inside the window :151).
    """

    timezone: TimeZone = Field(default="UTC", description="IANA time zone of start and end.")
    start: Cron = Field(description="Cron expression: when the window opens (the service wakes).")
    end: Cron = Field(description="Cron expression: when the window closes (KEDA may scale to zero after cooldown).")

    @model_validator(mode="after")
    def _start_is_not_end(self) -> WakeScheduleConfig:
        # KEDA refuses the trigger: "start and end can not have exactly same time input"
        # (kedacore/keda @ v2.20.2 pkg/scalers/cron_scaler.go:48-50), so the ScaledObject never works.
        if self.start == self.end:
            raise ConfigIssue("KEDA's cron trigger refuses a window whose start and end are the same expression",
                              value=self.end, path=("end",), nearest=["0 19 * * 1-5"],
                              fix="set end to when the window closes, after start")
        return self


class AutoscalingConfig(_Model):
    """`inferenceServices[].autoscaling`: a KEDA Prometheus trigger."""

    query: PromQuery = Field(description="PromQL query whose value drives the replica count.")
    threshold: NumberString = Field(description="Target value per replica, as a string (KEDA).")
    activation_threshold: NumberString = Field(
        default="0", alias="activationThreshold",
        description="Value above which the service scales from zero, as a string (KEDA).",
    )
    fallback_replicas: int | None = Field(
        default=None, ge=1, le=1000, alias="fallbackReplicas",
        description="Replicas KEDA holds while Prometheus cannot be queried (default: minReplicas, at least 1); "
                    "only with minReplicas 1 or more (a fallback would wake a service that sleeps at zero).",
    )
    cooldown_seconds: int = Field(
        default=300, ge=30, le=86400, alias="cooldownSeconds",
        description="Quiet time before KEDA scales to zero (KEDA cooldownPeriod).",
    )
    wake_schedule: WakeScheduleConfig | None = Field(
        default=None, alias="wakeSchedule",
        description="A cron window during which at least one replica runs: what wakes a service that scales to "
                    "zero when its query reads only its own metrics (Triton's nv_*).",
    )

    def triggers(self, prometheus_url: str, wake_replicas: int, scales_to_zero: bool) -> list[dict[str, Any]]:
        """The ScaledObject's triggers: the cron window first (when set), then the Prometheus query.

        `ignoreNullValues` (kedacore/keda @ v2.20.2 pkg/scalers/prometheus_scaler.go:56, :268-272):
        - a service that scales to zero gets "true": at zero replicas the `nv_*` query is empty, and it must read
          as 0 (inactive). As an error it would count toward `fallback`, and once the fallback is active KEDA
          treats the trigger as active in its polling loop (pkg/fallback/fallback.go:142-170,
          pkg/scaling/scale_handler.go:1003, :1023) and scales the target from zero
          (pkg/scaling/executor/scale_scaledobjects.go:63-73; commit e414cb457, released in v2.19.0): the
          service would wake minutes after every scale-in. Such a service has no `fallback` either
          (components/inference/scaling.py); the cron window wakes it.
        - a service that keeps at least one replica gets "false": an empty answer (a lost Triton scrape target)
          is an error, so KEDA holds `fallback.replicas` instead of reading 0 and scaling the service down
          (https://keda.sh/docs/2.20/reference/scaledobject-spec/#fallback).
        """
        out: list[dict[str, Any]] = []
        if self.wake_schedule is not None:
            out.append({"type": "cron", "metadata": {
                "timezone": self.wake_schedule.timezone, "start": self.wake_schedule.start,
                "end": self.wake_schedule.end, "desiredReplicas": str(wake_replicas)}})
        out.append({
            "type": "prometheus",
            "metricType": "AverageValue",
            "metadata": {
                "serverAddress": prometheus_url,
                "query": self.query,
                "threshold": self.threshold,
                "activationThreshold": self.activation_threshold,
                "ignoreNullValues": "true" if scales_to_zero else "false",
            },
        })
        return out


class IngressConfig(_Model):
    """`inferenceServices[].ingress`: an AWS Load Balancer Controller ALB in front of the service."""

    host: Host = Field(description="DNS name the ALB serves.")
    certificate_arn: AcmArn = Field(alias="certificateArn",
                                    description="ACM certificate for HTTPS, in the stack's region.")
    scheme: Literal["internet-facing", "internal"] = Field(default="internal",
                                                           description="internet-facing | internal.")
    waf_acl_arn: WafArn | None = Field(default=None, alias="wafAclArn",
                                       description="Regional WAFv2 web ACL in the stack's region attached to the ALB.")
    idle_timeout_seconds: int = Field(
        default=300, ge=1, le=4000, alias="idleTimeoutSeconds",
        description="ALB idle timeout; long generations keep a connection silent longer than the 60 s default.",
    )
    oidc: OidcConfig | None = Field(default=None, description="ALB OpenID Connect authentication of every request.")


class ModelVolumeConfig(_Model):
    """`inferenceServices[].modelVolume`: model weights restored from an EBS snapshot, one volume per replica."""

    snapshot_id: SnapshotId = Field(alias="snapshotId", description="EBS snapshot holding the model repository.")
    # gp3 volumes hold 1 GiB to 16 TiB (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html).
    size_gib: int = Field(default=100, ge=1, le=16384, alias="sizeGiB",
                          description="gp3 volume size in GiB (at least the snapshot's size; 16 TiB at most).")
    mount_path: MountPath = Field(default="/models", alias="mountPath", description="Where the model is mounted.")
    fast_snapshot_restore: bool = Field(
        default=False, alias="fastSnapshotRestore",
        description="Enable EBS Fast Snapshot Restore for the snapshot in every zone the service's pools use "
                    "(billed per snapshot, per zone, per hour while enabled).",
    )
    volume_initialization_rate: int | None = Field(
        default=None, ge=100, le=300, alias="volumeInitializationRate",
        description="MiB/s at which each restored volume is filled from the snapshot (EBS provisioned "
                    "initialization rate, billed per restore); an alternative to Fast Snapshot Restore for "
                    "services that scale out rarely. Set beside fastSnapshotRestore, it wins: the volume is "
                    "initialized at this rate, not with FSR.",
    )
    snapshot_size_gib: int | None = Field(
        default=None, ge=1, le=65536, alias="snapshotSizeGiB",
        description="The snapshot's VolumeSize (`aws ec2 describe-snapshots --snapshot-ids <id> --query "
                    "'Snapshots[0].VolumeSize'`), where known: sizeGiB must be at least this, since a volume "
                    "restored from a snapshot cannot be smaller than it. Sizes the read budget (default: sizeGiB).",
    )
    throughput_mibps: int | None = Field(
        default=None, ge=budget.GP3_BASE_MIBPS, le=budget.GP3_MAX_MIBPS, alias="throughputMiBps",
        description="gp3 throughput of each restored volume, MiB/s (125-2000); default: what reads the snapshot "
                    "in 300 s, at most 1000 (components/inference/budget.py).",
    )
    iops: int | None = Field(
        default=None, ge=budget.GP3_BASE_IOPS, le=budget.GP3_MAX_IOPS,
        description="gp3 IOPS of each restored volume (3000-80000, at most 500 per GiB); default: the fewest that "
                    "carry the throughput (0.25 MiB/s per IOPS).",
    )
    kms_key_arn: KmsKeyArn | None = Field(
        default=None, alias="kmsKeyArn",
        description="The customer-managed KMS key that encrypts the snapshot (its KmsKeyId): the EBS CSI driver's "
                    "role gets kms:Decrypt, kms:GenerateDataKeyWithoutPlaintext and kms:CreateGrant on it, and the "
                    "restored volumes are encrypted with it. Omit for the AWS managed key aws/ebs.",
    )

    @model_validator(mode="after")
    def _holds_the_snapshot(self) -> ModelVolumeConfig:
        # Source: https://docs.aws.amazon.com/ebs/latest/userguide/ebs-creating-volume.html (a volume created
        # from a snapshot is at least the snapshot's size)
        if self.snapshot_size_gib is not None and self.size_gib < self.snapshot_size_gib:
            raise ConfigIssue(f"the volume must hold the snapshot, whose size is {self.snapshot_size_gib} GiB "
                              "(snapshotSizeGiB)", value=self.size_gib, path=("sizeGiB",),
                              nearest=[str(self.snapshot_size_gib)])
        problem = budget.gp3_problem(self.throughput, self.provisioned_iops, self.size_gib)
        if problem is not None:
            key = "iops" if self.iops is not None else "throughputMiBps"
            raise ConfigIssue(f"gp3 refuses this volume: {problem}, so every replica would stay Pending",
                              value=self.iops if key == "iops" else self.throughput, path=(key,),
                              fix="leave iops unset (it follows throughputMiBps), or raise sizeGiB")
        return self

    @property
    def snapshot_gib(self) -> int:
        """What a replica reads: the snapshot's size, else the volume's (an upper bound)."""
        return self.snapshot_size_gib if self.snapshot_size_gib is not None else self.size_gib

    @property
    def throughput(self) -> int:
        if self.throughput_mibps is not None:
            return self.throughput_mibps
        return budget.default_throughput(self.snapshot_gib, self.size_gib)

    @property
    def provisioned_iops(self) -> int:
        return self.iops if self.iops is not None else budget.default_iops(self.throughput, self.size_gib)

    def restore_rate(self) -> tuple[int, str]:
        return budget.restore_rate(self.throughput, self.fast_snapshot_restore, self.volume_initialization_rate)


class InferenceServiceConfig(_Model):
    """One entry of `gpu-platform:inferenceServices`: a Triton or vLLM Deployment with autoscaling, ingress and a
    model."""

    name: ServiceName = Field(description="Service name (Deployment, Service, ScaledObject).")
    runtime: Literal["triton", "vllm"] = Field(
        default="triton", description="triton: Triton Inference Server; vllm: vLLM's OpenAI-compatible server.")
    vllm: VllmConfig | None = Field(default=None, description="The model vLLM serves (runtime: vllm only).")
    namespace: ServiceName = Field(default="inference", description="Namespace the service runs in.")
    image: Image = Field(description="Container image, pinned by tag or digest.")
    cuda_version: CudaVersionStr | None = Field(
        default=None, alias="cudaVersion",
        description="CUDA runtime the image carries; optional where the image tag reveals it.",
    )
    gpus_per_replica: int = Field(default=1, ge=1, le=16, alias="gpusPerReplica",
                                  description="nvidia.com/gpu per replica.")
    port: int = Field(default=8000, ge=1, le=65535, description="Triton HTTP port (serving).")
    grpc_port: int = Field(default=8001, ge=1, le=65535, alias="grpcPort", description="Triton gRPC port.")
    metrics_port: int = Field(default=8002, ge=1, le=65535, alias="metricsPort", description="Prometheus port.")
    model_repository: str | None = Field(
        default=None, alias="modelRepository",
        description="Triton --model-repository (a path, or s3://...); default: modelVolume.mountPath, else "
                    "/models inside the image.",
    )
    node_pools: Annotated[list[PoolName], AfterValidator(_unique)] = Field(
        default_factory=list, alias="nodePools",
        description="Pools the service may run on; empty = every GPU pool.",
    )
    min_replicas: int = Field(default=0, ge=0, le=1000, alias="minReplicas",
                              description="Fewest replicas autoscaling keeps (0 scales to zero).")
    max_replicas: int = Field(default=1, ge=1, le=1000, alias="maxReplicas",
                              description="Most replicas autoscaling adds; without autoscaling, the fixed count.")
    drain_seconds: int = Field(
        default=60, ge=5, le=3600, alias="drainSeconds",
        description="How long a stopping replica keeps serving in-flight requests (Triton --exit-timeout-secs).",
    )
    startup_seconds: int = Field(
        default=600, ge=30, le=STARTUP_MAX_SECONDS, alias="startupSeconds",
        description="How long a new replica may take to load its models before it is restarted.",
    )
    cpu: str = Field(default="2", description="CPU request per replica.")
    memory: str = Field(default="8Gi", description="Memory request and limit per replica.")
    autoscaling: AutoscalingConfig | None = Field(default=None, description="KEDA trigger; omit for fixed size.")
    ingress: IngressConfig | None = Field(default=None, description="ALB ingress; omit for internal-only.")
    model_volume: ModelVolumeConfig | None = Field(default=None, alias="modelVolume",
                                                   description="Model volume from a snapshot.")

    @model_validator(mode="after")
    def _ports_and_replicas(self) -> InferenceServiceConfig:
        if self.metrics_port == self.port:
            raise ConfigIssue("metricsPort must differ from port", value=self.metrics_port, path=("metricsPort",),
                              nearest=[str(self.port + 2)])
        if self.grpc_port in (self.port, self.metrics_port):
            raise ConfigIssue("grpcPort must differ from port and metricsPort", value=self.grpc_port,
                              path=("grpcPort",), nearest=[str(self.port + 1)])
        if self.min_replicas > self.max_replicas:
            raise ConfigIssue(f"minReplicas <= maxReplicas must hold (maxReplicas is {self.max_replicas})",
                              value=self.min_replicas, path=("minReplicas",), nearest=[str(self.max_replicas)])
        return self

    @model_validator(mode="after")
    def _runtime(self) -> InferenceServiceConfig:
        """The keys of one runtime are refused on the other; a public vLLM endpoint needs a key or OIDC."""
        if self.runtime == "triton":
            if self.vllm is not None:
                raise ConfigIssue("the vllm section configures runtime: vllm only", value=self.runtime,
                                  path=("runtime",), nearest=["vllm"], fix="set runtime: vllm, or remove vllm")
            return self
        if self.vllm is None:
            raise ConfigIssue("runtime: vllm needs a vllm section naming the model (vllm.modelPath)",
                              value=self.runtime, path=("runtime",),
                              fix="add vllm: {modelPath: <model directory on the model volume>, modelGiB: <size>}")
        if self.model_repository is not None:
            raise ConfigIssue("modelRepository is Triton's --model-repository; vLLM serves vllm.modelPath",
                              value=self.model_repository, path=("modelRepository",), fix="remove modelRepository")
        if not self.vllm.model_path.startswith("/") and self.model_volume is None:
            raise ConfigIssue("a relative vllm.modelPath is read from the model volume, and the service has none",
                              value=self.vllm.model_path, path=("vllm", "modelPath"),
                              fix="add modelVolume (the EBS snapshot of the weights), or give an absolute path "
                                  "inside the image")
        ingress = self.ingress
        if (ingress is not None and ingress.scheme == "internet-facing" and self.vllm.api_key_secret is None
                and ingress.oidc is None):
            raise ConfigIssue(
                "a public OpenAI endpoint with no authentication lets anyone on the internet use the GPUs: give vLLM "
                "an API key (vllm.apiKeySecret, a Secret clients' Bearer token must match) or put OIDC on the ALB "
                "(ingress.oidc: browser sessions only; the ALB validates no Bearer token, so OpenAI SDK clients need "
                "the key)", value=None, path=("vllm", "apiKeySecret"),
                fix="add vllm.apiKeySecret: {name: <secret>, key: api-key}, or ingress.oidc, or ingress.scheme: "
                    "internal")
        if self.autoscaling is not None:
            unknown = vllm_facts.unknown_metrics(self.autoscaling.query)
            if unknown:
                raise ConfigIssue(
                    f"vLLM {vllm_facts.RELEASE} exports no series {', '.join(unknown)} (no metric of that tag's tree "
                    "has the name): the query would read nothing and KEDA would never scale on it",
                    value=self.autoscaling.query, path=("autoscaling", "query"),
                    nearest=[vllm_facts.nearest_metric(unknown[0])],
                    fix="use vllm:num_requests_waiting, vllm:num_requests_running or another exported name")
        return self

    @model_validator(mode="after")
    def _wakes(self) -> InferenceServiceConfig:
        """scaled-workload-wakes before any resource exists: the same rule and words as the policy."""
        if self.autoscaling is None:
            return self
        message = wake_message(f"inference service '{self.name}' (its ScaledObject)",
                               self.scaled_object_spec(self.autoscaling, ""))
        if message is not None:
            raise ConfigIssue(message, value=self.min_replicas, path=("minReplicas",), nearest=["1"],
                              fix="add autoscaling.wakeSchedule (a cron window that wakes it), or minReplicas: 1")
        return self

    @model_validator(mode="after")
    def _startup_covers_the_read(self) -> InferenceServiceConfig:
        """The startup probe must outlast reading the model from the restored volume, or it kills it in a loop."""
        volume = self.model_volume
        if volume is None:
            return self
        rate, how = volume.restore_rate()
        needed = budget.startup_needed(volume.snapshot_gib, rate)
        if needed > STARTUP_MAX_SECONDS:
            # No startupSeconds can cover the read (the field stops at STARTUP_MAX_SECONDS): only a faster read can.
            raise ConfigIssue(
                f"a new replica reads its {volume.snapshot_gib} GiB snapshot at {rate} MiB/s ({how}): "
                f"{budget.read_seconds(volume.snapshot_gib, rate)} s, {needed} s with the margin, more than the "
                f"{STARTUP_MAX_SECONDS} s startupSeconds may allow, so the startup probe kills every replica while "
                "the model loads",
                value=self.startup_seconds, path=("startupSeconds",),
                fix=self._faster_read_fix(volume))
        if self.startup_seconds < needed:
            raise ConfigIssue(
                f"a new replica reads its {volume.snapshot_gib} GiB snapshot at {rate} MiB/s ({how}): "
                f"{budget.read_seconds(volume.snapshot_gib, rate)} s, {needed} s with the margin, more than the "
                f"startupSeconds {self.startup_seconds} the startup probe allows, so it kills every replica "
                "while the model loads",
                value=self.startup_seconds, path=("startupSeconds",), nearest=[str(needed)],
                fix="raise startupSeconds, or make the read faster: modelVolume.throughputMiBps (gp3, up to 2000), "
                    "fastSnapshotRestore, or volumeInitializationRate")
        return self

    @staticmethod
    def _faster_read_fix(volume: ModelVolumeConfig) -> str:
        """The read rates that bring the startup budget under STARTUP_MAX_SECONDS, each with the budget it needs."""
        gib, options = volume.snapshot_gib, []
        fsr_rate = min(budget.GP3_MAX_MIBPS, budget.FSR_MAX_MIBPS)
        fsr = budget.startup_needed(gib, fsr_rate)
        if fsr <= STARTUP_MAX_SECONDS and volume.volume_initialization_rate is None:
            options.append(f"modelVolume.fastSnapshotRestore: true with modelVolume.throughputMiBps: {fsr_rate} "
                           f"(startupSeconds {fsr})")
        init_rate = budget.INIT_MAX_MIBPS
        init = budget.startup_needed(gib, init_rate)
        if init <= STARTUP_MAX_SECONDS:
            options.append(f"modelVolume.volumeInitializationRate: {init_rate} with throughputMiBps at least "
                           f"{init_rate} (startupSeconds {init})")
        if not options:
            return (f"no EBS restore rate reads {gib} GiB within {STARTUP_MAX_SECONDS} s: make the snapshot smaller "
                    "(one model repository per service)")
        return "make the read faster: " + ", or ".join(options)

    def wake_replicas(self) -> int:
        """Replicas the wake window holds: minReplicas, at least one."""
        return max(self.min_replicas, 1)

    def scaled_object_spec(self, autoscaling: AutoscalingConfig, prometheus_url: str) -> dict[str, Any]:
        """The ScaledObject's target, replica bounds and triggers: what the wake rule reads, and what
        components/inference/scaling.py renders (one source for both)."""
        return {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": self.name},
            "minReplicaCount": self.min_replicas,
            "maxReplicaCount": self.max_replicas,
            "triggers": autoscaling.triggers(prometheus_url, self.wake_replicas(), self.min_replicas == 0),
        }

    @property
    def repository(self) -> str:
        """Triton's --model-repository."""
        if self.model_repository is not None:
            return self.model_repository
        return self.model_volume.mount_path if self.model_volume is not None else DEFAULT_MODEL_REPOSITORY


class HelmAddonConfig(_Model):
    """A Helm chart add-on, pinned."""

    version: ChartVersion = Field(description="Chart version.")


class EksAddonConfig(_Model):
    """An EKS managed add-on, pinned."""

    version: EksAddonVersion = Field(description="EKS add-on version (v<version>-eksbuild.<n>).")


# Defaults: the chart releases upstream.lock.json pins (KEDA v2.20.2, AWS Load Balancer Controller 3.5.0,
# kube-prometheus-stack 88.5.3), whose values.yaml the conformance harness checks chart values against; the EKS
# add-on builds of the EBS CSI driver release v1.64.0 (https://github.com/kubernetes-sigs/aws-ebs-csi-driver/releases/tag/v1.64.0)
# and of the external-snapshotter release v8.6.0 (https://github.com/kubernetes-csi/external-snapshotter/releases/tag/v8.6.0).
ADDON_DEFAULTS: dict[str, str] = {
    "awsLoadBalancerController": "3.5.0",
    "keda": "2.20.2",
    "kubePrometheusStack": "88.5.3",
    "ebsCsiDriver": "v1.64.0-eksbuild.1",
    "snapshotController": "v8.6.0-eksbuild.1",
}


class AddonsConfig(_Model):
    """`gpu-platform:addons`: the versions of the add-ons inference services need; each installed only when used."""

    aws_load_balancer_controller: HelmAddonConfig = Field(
        default_factory=lambda: HelmAddonConfig(version=ADDON_DEFAULTS["awsLoadBalancerController"]),
        alias="awsLoadBalancerController",
        description="aws-load-balancer-controller chart (https://aws.github.io/eks-charts); when a service "
                    "has ingress.",
    )
    keda: HelmAddonConfig = Field(
        default_factory=lambda: HelmAddonConfig(version=ADDON_DEFAULTS["keda"]),
        description="keda chart (https://kedacore.github.io/charts); when a service has autoscaling.",
    )
    kube_prometheus_stack: HelmAddonConfig = Field(
        default_factory=lambda: HelmAddonConfig(version=ADDON_DEFAULTS["kubePrometheusStack"]),
        alias="kubePrometheusStack",
        description="kube-prometheus-stack chart with Grafana (https://prometheus-community.github.io/helm-charts); "
                    "whenever a service exists.",
    )
    ebs_csi_driver: EksAddonConfig = Field(
        default_factory=lambda: EksAddonConfig(version=ADDON_DEFAULTS["ebsCsiDriver"]),
        alias="ebsCsiDriver",
        description="aws-ebs-csi-driver EKS add-on; when a service has a model volume.",
    )
    snapshot_controller: EksAddonConfig = Field(
        default_factory=lambda: EksAddonConfig(version=ADDON_DEFAULTS["snapshotController"]),
        alias="snapshotController",
        description="snapshot-controller EKS add-on (VolumeSnapshot CRDs); when a service has a model volume.",
    )
