"""The offline policy gate: run a real CrossGuard policy pack the way the Pulumi engine does.

The engine starts a Python policy pack as its own process (`python -u -m pulumi.policy
<engine-address> <pack>` with the pack folder as working directory), reads the port of the pack's
analyzer gRPC server from the first line of its stdout and then speaks the analyzer protocol to it:
Handshake, ConfigureStack, GetAnalyzerInfo, Configure (the reconciled policy config), Analyze for
every resource and AnalyzeStack once. This module does the same without a Pulumi CLI, so
`tools.preview` can hand the pack exactly what `pulumi preview --policy-pack` would.

Source: https://github.com/pulumi/pulumi/blob/master/sdk/go/common/resource/plugin/analyzer_plugin.go
Source: https://github.com/pulumi/pulumi/blob/master/pkg/resource/analyzer/config.go
Source: https://github.com/pulumi/pulumi-policy/blob/master/sdk/python/lib/pulumi_policy/policy.py
"""

from __future__ import annotations

import collections
import contextlib
import difflib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import grpc
import jsonschema  # type: ignore[import-untyped]
import yaml
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from tools.records import Enforcement, RecordedResource, Violation

EnforcementLevel = Literal["advisory", "mandatory", "remediate", "disabled"]

# The levels `pulumi preview --policy-pack-config` accepts.
# Source: https://www.pulumi.com/docs/insights/policy/policy-as-code/configuration/
ENFORCEMENT_LEVELS: tuple[EnforcementLevel, ...] = ("advisory", "mandatory", "remediate", "disabled")

# How strongly a level blocks. REMEDIATE never lets a violation through: a violation that remains after
# remediation is reported as mandatory (pulumi_policy/policy.py, Analyze and AnalyzeStack).
_STRENGTH: dict[str, int] = {"disabled": 0, "advisory": 1, "mandatory": 2, "remediate": 2}

_TO_PROTO: dict[str, int] = {
    "advisory": analyzer_pb2.ADVISORY,
    "mandatory": analyzer_pb2.MANDATORY,
    "remediate": analyzer_pb2.REMEDIATE,
    "disabled": analyzer_pb2.DISABLED,
}
_FROM_PROTO: dict[int, EnforcementLevel] = {v: k for k, v in _TO_PROTO.items()}  # type: ignore[misc]

# The key of a policy config that applies to every policy of the pack.
ALL_POLICIES = "all"

# The pack never dials the engine: pulumi/policy/__main__.py parses the address and ignores it, and
# `pulumi.log` falls back to stderr when no engine is configured. Any syntactically valid address does.
_DUMMY_ENGINE_ADDRESS = "127.0.0.1:0"

# The SDK raises the gRPC receive limit to 400 MiB on its side; a large stack needs the same here.
_MAX_MESSAGE_BYTES = 1024 * 1024 * 400
_GRPC_OPTIONS = [
    ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
]

_STDERR_TAIL_LINES = 60
_STOP_GRACE_S = 5.0


class GateError(Exception):
    """The policy pack could not be run: it failed to start, crashed, or a policy raised."""


class ConfigError(GateError):
    """The policy configuration was rejected (bad format, unknown policy, lowered enforcement, schema)."""

    def __init__(self, message: str, *, source: str, key: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.source = source
        self.key = key
        self.value = value


@dataclass(frozen=True)
class PolicyInfo:
    """One policy of the pack as GetAnalyzerInfo describes it, with the enforcement the gate applied."""

    name: str
    description: str
    kind: Literal["resource", "stack", "unknown"]
    default_enforcement: EnforcementLevel
    enforcement: EnforcementLevel


@dataclass(frozen=True)
class GateResult:
    """Everything the pack reported for one preview."""

    violations: tuple[Violation, ...]
    not_applicable: tuple[tuple[str, str], ...]  # (policy, reason), each pair once, in first-seen order
    pack_name: str
    policies: tuple[PolicyInfo, ...]

    @property
    def mandatory(self) -> tuple[Violation, ...]:
        return tuple(v for v in self.violations if v.enforcement == "mandatory")


class LoadedPolicyConfig(dict[str, Any]):
    """A policy config as read from a file; remembers the file so errors can name it."""

    def __init__(self, data: Mapping[str, Any], source: Path) -> None:
        super().__init__(data)
        self.source = source


@dataclass(frozen=True)
class _PolicyConfig:
    enforcement: EnforcementLevel | None
    properties: dict[str, Any]


# --------------------------------------------------------------------------------------------------
# Policy config: parsing, reconciling with the pack's defaults, the raise-never-lower rule
# --------------------------------------------------------------------------------------------------


def load_policy_config(path: Path) -> dict[str, Any]:
    """Read a `pulumi preview --policy-pack-config` JSON file and check its shape as the CLI does.

    Top level: an object whose keys are policy names (or `all`) and whose values are an enforcement
    level string or an object with an optional `enforcementLevel` and the policy's properties.
    """
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"{source}: cannot read the policy config ({exc.strerror}); fix: pass an existing JSON file "
            "to --policy-config",
            source=source,
        ) from exc
    if not text.strip():
        return LoadedPolicyConfig({}, path)  # the CLI allows an empty file
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{source}: line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg}); fix: the policy "
            'config is a JSON object such as {"all": "mandatory", "<policy>": {"enforcementLevel": ...}}',
            source=source,
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: the policy config must be a JSON object keyed by policy name, got "
            f'{type(data).__name__}; fix: wrap it as {{"<policy>": "mandatory"}}',
            source=source,
            value=data,
        )
    _parse_policy_config(data, source)  # validates; the raw mapping is what callers pass back to run_gate
    return LoadedPolicyConfig(data, path)


def _parse_policy_config(raw: Mapping[str, Any], source: str) -> dict[str, _PolicyConfig]:
    # Source: https://github.com/pulumi/pulumi/blob/master/pkg/resource/analyzer/config.go (parsePolicyPackConfig)
    levels = ", ".join(ENFORCEMENT_LEVELS)
    result: dict[str, _PolicyConfig] = {}
    for key, value in raw.items():
        if isinstance(value, str):
            if value not in ENFORCEMENT_LEVELS:
                raise ConfigError(
                    f"{source}: `{key}` = {value!r} is not an enforcement level; fix: use one of {levels}",
                    source=source,
                    key=key,
                    value=value,
                )
            result[key] = _PolicyConfig(value, {})
        elif isinstance(value, dict):
            props = dict(value)
            level = props.pop("enforcementLevel", None)
            if level is not None and level not in ENFORCEMENT_LEVELS:
                raise ConfigError(
                    f"{source}: `{key}.enforcementLevel` = {level!r} is not an enforcement level; "
                    f"fix: use one of {levels}",
                    source=source,
                    key=f"{key}.enforcementLevel",
                    value=level,
                )
            if level is None and not props:
                continue  # the CLI drops empty entries
            result[key] = _PolicyConfig(level, props)
        else:
            raise ConfigError(
                f"{source}: `{key}` = {value!r} is not a valid policy config value; fix: use an enforcement "
                f'level string or an object such as {{"enforcementLevel": "mandatory"}}',
                source=source,
                key=key,
                value=value,
            )
    return result


def _defaults(info: analyzer_pb2.AnalyzerInfo) -> dict[str, _PolicyConfig]:
    """The pack's own config: each policy's level and schema defaults, then the pack's initial config."""
    result: dict[str, _PolicyConfig] = {}
    for p in info.policies:
        schema = json_format.MessageToDict(p.configSchema.properties)
        props = {k: v["default"] for k, v in schema.items() if isinstance(v, dict) and "default" in v}
        result[p.name] = _PolicyConfig(_level(p.enforcementLevel, f"policy {p.name}"), props)
    initial: dict[str, _PolicyConfig] = {}
    for name, cfg in info.initialConfig.items():
        initial[name] = _PolicyConfig(
            _level(cfg.enforcementLevel, f"initial config of {name}"),
            json_format.MessageToDict(cfg.properties),
        )
    return _apply(result, initial)


def _apply(base: Mapping[str, _PolicyConfig], given: Mapping[str, _PolicyConfig]) -> dict[str, _PolicyConfig]:
    # Source: https://github.com/pulumi/pulumi/blob/master/pkg/resource/analyzer/config.go (applyConfig):
    # `all` sets the level of every policy first, then each policy's own entry wins; the `all` entry
    # itself is passed on to the pack too.
    result = dict(base)
    every = given.get(ALL_POLICIES)
    if every is not None and every.enforcement is not None:
        result = {k: _PolicyConfig(every.enforcement, v.properties) for k, v in result.items()}
    for name, cfg in given.items():
        old = result.get(name)
        level = cfg.enforcement if cfg.enforcement is not None else (old.enforcement if old else None)
        props = {**(old.properties if old else {}), **cfg.properties}
        result[name] = _PolicyConfig(level, props)
    return result


def _reconcile(
    info: analyzer_pb2.AnalyzerInfo, policy_config: Mapping[str, Any] | None, source: str
) -> tuple[dict[str, _PolicyConfig], dict[str, _PolicyConfig]]:
    """(baseline, effective): the pack's defaults, and those with the stack's config on top."""
    baseline = _defaults(info)
    given = _parse_policy_config(policy_config or {}, source)
    names = [p.name for p in info.policies]
    for key in given:
        if key != ALL_POLICIES and key not in baseline:
            near = difflib.get_close_matches(key, names, n=1)
            hint = f"did you mean `{near[0]}`?" if near else f"the pack has: {', '.join(sorted(names))}"
            raise ConfigError(
                f"{source}: `{key}` is not a policy of pack {info.name!r}; a misspelt name would silently "
                f"leave the policy at its default. Fix: {hint}",
                source=source,
                key=key,
                value=policy_config[key] if policy_config else None,
            )
    effective = _apply(baseline, given)
    for name in names:
        before, after = baseline[name].enforcement or "advisory", effective[name].enforcement or "advisory"
        if _STRENGTH[after] < _STRENGTH[before]:
            own = given.get(name)
            key = name if own is not None and own.enforcement is not None else ALL_POLICIES
            raise ConfigError(
                f"{source}: `{key}` = {after!r} lowers policy `{name}` from {before} to {after}; a stack "
                f"may raise a policy's enforcement, never lower it. Fix: remove `{key}` from {source} or "
                f"set it to {before!r} or stricter (then set `{name}` on its own if `all` was meant for "
                "other policies).",
                source=source,
                key=key,
                value=after,
            )
    _validate_properties(info, effective, source)
    return baseline, effective


def _validate_properties(info: analyzer_pb2.AnalyzerInfo, config: Mapping[str, _PolicyConfig], source: str) -> None:
    # The engine checks each policy's properties against its config schema before Configure.
    for p in info.policies:
        props = json_format.MessageToDict(p.configSchema.properties)
        if not props and not p.configSchema.required:
            continue
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if p.configSchema.required:
            schema["required"] = list(p.configSchema.required)
        value = config[p.name].properties if p.name in config else {}
        errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(value), key=lambda e: list(e.path))
        if errors:
            err = errors[0]
            where = ".".join([p.name, *(str(x) for x in err.path)])
            raise ConfigError(
                f"{source}: `{where}`: {err.message}; fix: set it to match the policy's config schema "
                f"{json.dumps(err.schema, sort_keys=True)}",
                source=source,
                key=where,
                value=err.instance,
            )


def _level(value: int, what: str) -> EnforcementLevel:
    try:
        return _FROM_PROTO[value]
    except KeyError:
        raise GateError(f"{what}: the pack sent unknown enforcement level {value}") from None


# --------------------------------------------------------------------------------------------------
# The pack process
# --------------------------------------------------------------------------------------------------


class _PackProcess:
    """The policy pack as a child process; stopped (and reaped) on every way out of the `with`."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
        self._cmd = cmd
        self._cwd = cwd
        self._env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._first_line: queue.Queue[bytes | None] = queue.Queue(maxsize=1)
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> _PackProcess:
        try:
            self._proc = subprocess.Popen(
                self._cmd,
                cwd=self._cwd,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, so stop() reaches anything it spawned
            )
        except OSError as exc:
            raise GateError(f"cannot start the policy pack with {' '.join(self._cmd)!r}: {exc}") from exc
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(self._proc.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(self._proc.stderr,), daemon=True),
        ]
        for t in self._threads:
            t.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _read_stdout(self, stream: Any) -> None:
        first = stream.readline()
        self._first_line.put(first if first else None)
        for line in stream:  # whatever the pack prints later goes with its stderr, as the engine logs it
            self._stderr.append(line.decode("utf-8", "replace").rstrip("\n"))
        stream.close()

    def _read_stderr(self, stream: Any) -> None:
        for line in stream:
            self._stderr.append(line.decode("utf-8", "replace").rstrip("\n"))
        stream.close()

    def wait_for_port(self, deadline: float) -> int:
        remaining = max(0.0, deadline - time.monotonic())
        try:
            line = self._first_line.get(timeout=remaining)
        except queue.Empty:
            raise GateError(
                f"the policy pack did not print its analyzer port within {remaining:.0f}s "
                f"(command: {' '.join(self._cmd)}); fix the pack or raise timeout_s.{self.stderr_tail()}"
            ) from None
        if line is None:
            self.stop()
            raise GateError(
                f"the policy pack in {self._cwd} exited with status {self.returncode} before printing its "
                f"analyzer port (command: {' '.join(self._cmd)}).{self.stderr_tail()}"
            )
        text = line.decode("utf-8", "replace").strip()
        if not text.isdigit():
            self.stop()
            raise GateError(
                f"the policy pack printed {text!r} where the engine expects its analyzer port as the first "
                f"line of stdout; fix: the pack must not print to stdout before PolicyPack() starts."
                f"{self.stderr_tail()}"
            )
        return int(text)

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.returncode

    def stop(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        else:
            proc.wait()
        for t in self._threads:
            t.join(timeout=_STOP_GRACE_S)

    def stderr_tail(self) -> str:
        if self._proc is not None and self._proc.poll() is not None:
            for t in self._threads:
                t.join(timeout=_STOP_GRACE_S)
        lines = list(self._stderr)
        if not lines:
            return " The pack wrote nothing to stderr."
        return "\n--- policy pack stderr (last lines) ---\n" + "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# The analyzer conversation
# --------------------------------------------------------------------------------------------------


def _provider_of(
    res: RecordedResource, by_urn: Mapping[str, RecordedResource]
) -> analyzer_pb2.AnalyzerProviderResource | None:
    if not res.provider:
        return None
    urn = res.provider.rsplit("::", 1)[0]  # a provider reference is "<urn>::<id>"
    prov = by_urn.get(urn)
    if prov is not None:
        return analyzer_pb2.AnalyzerProviderResource(
            type=prov.type, urn=prov.urn, name=prov.name, properties=_struct(prov)
        )
    # Not registered in this recording (a default provider): describe it from its URN.
    parts = urn.split("::")
    if len(parts) < 4:
        raise GateError(
            f"resource {res.urn}: provider reference {res.provider!r} is not '<urn>::<id>'; fix the recorder"
        )
    return analyzer_pb2.AnalyzerProviderResource(
        type=parts[-2].rsplit("$", 1)[-1], urn=urn, name=parts[-1], properties=struct_pb2.Struct()
    )


def _struct(res: RecordedResource) -> struct_pb2.Struct:
    props = res.properties
    if isinstance(props, struct_pb2.Struct):
        return props
    if isinstance(props, Mapping):
        return json_format.ParseDict(dict(props), struct_pb2.Struct())
    if props is None:
        return struct_pb2.Struct()
    raise GateError(
        f"resource {res.urn}: properties are a {type(props).__name__}; the gate needs the protobuf Struct "
        "the engine would receive (google.protobuf.struct_pb2.Struct)"
    )


def _options(res: RecordedResource) -> analyzer_pb2.AnalyzerResourceOptions:
    return analyzer_pb2.AnalyzerResourceOptions(
        protect=res.protect,
        parent=res.parent or "",
        # The engine always sends custom timeouts (zero when unset).
        customTimeouts=analyzer_pb2.AnalyzerResourceOptions.CustomTimeouts(),
    )


def _enforcement(value: int, policy: str) -> Enforcement:
    level = _level(value, f"violation of {policy}")
    if level == "advisory":
        return "advisory"
    if level in ("mandatory", "remediate"):  # a violation left after remediation blocks
        return "mandatory"
    raise GateError(f"the pack reported a violation of {policy} at enforcement {level!r}, which blocks nothing")


@contextlib.contextmanager
def _rpc(pack: _PackProcess, what: str) -> Iterator[None]:
    try:
        yield
    except grpc.RpcError as exc:
        code = exc.code() if hasattr(exc, "code") else None
        details = exc.details() if hasattr(exc, "details") else str(exc)
        pack.stop()
        raise GateError(f"policy pack failed during {what}: {code}: {details}{pack.stderr_tail()}") from exc


def _remaining(deadline: float, pack: _PackProcess, what: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        pack.stop()
        raise GateError(f"the policy gate ran out of time before {what}; raise timeout_s.{pack.stderr_tail()}")
    return left


def run_gate(
    resources: Sequence[RecordedResource],
    *,
    pack_dir: Path,
    stack: str,
    project: str,
    policy_config: Mapping[str, Any] | None = None,
    python: str = sys.executable,
    timeout_s: float = 120,
    organization: str = "organization",
    stack_config: Mapping[str, str] | None = None,
    config_source: str | None = None,
) -> GateResult:
    """Start the pack in `pack_dir`, ask it about every resource and the stack, return what it reported.

    `policy_config` is the parsed `--policy-pack-config` JSON (see `load_policy_config`);
    `config_source` names it in errors (taken from a `LoadedPolicyConfig` when not given).
    `stack_config` is the stack's config as `PULUMI_CONFIG` hands it to the pack ("project:key" -> str).
    Raises ConfigError when the config is malformed or lowers a policy; GateError when the pack fails.
    """
    pack_dir = Path(pack_dir).resolve()
    _check_pack(pack_dir)
    if config_source is None:
        config_source = str(policy_config.source) if isinstance(policy_config, LoadedPolicyConfig) else "policy config"
    deadline = time.monotonic() + timeout_s

    env = dict(os.environ)
    env.pop("PULUMI_CONFIG", None)
    env.update(
        {
            "PULUMI_PROJECT": project,
            "PULUMI_STACK": stack,
            "PULUMI_DRY_RUN": "true",
            "PULUMI_ORGANIZATION": organization,
        }
    )
    if stack_config:
        env["PULUMI_CONFIG"] = json.dumps(dict(stack_config))
    # Source: pulumi-analyzer-policy-python in pulumi/pulumi sdk/python/cmd: `python -u -m pulumi.policy`.
    cmd = [python, "-u", "-m", "pulumi.policy", _DUMMY_ENGINE_ADDRESS, str(pack_dir)]

    with _PackProcess(cmd, pack_dir, env) as pack:
        port = pack.wait_for_port(deadline)
        channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=_GRPC_OPTIONS)
        try:
            with _rpc(pack, "connect"):
                grpc.channel_ready_future(channel).result(timeout=_remaining(deadline, pack, "connecting"))
            return _converse(
                analyzer_pb2_grpc.AnalyzerStub(channel),
                pack,
                deadline,
                resources,
                pack_dir=pack_dir,
                stack=stack,
                project=project,
                organization=organization,
                stack_config=stack_config or {},
                policy_config=policy_config,
                config_source=config_source,
            )
        except grpc.FutureTimeoutError:
            raise GateError(
                f"could not connect to the policy pack's analyzer on port {port}.{pack.stderr_tail()}"
            ) from None
        finally:
            channel.close()


def _check_pack(pack_dir: Path) -> None:
    manifest = pack_dir / "PulumiPolicy.yaml"
    try:
        data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GateError(
            f"{manifest}: cannot read the policy pack manifest ({exc.strerror}); fix: pass the "
            "folder holding PulumiPolicy.yaml as pack_dir"
        ) from exc
    runtime = data.get("runtime") if isinstance(data, dict) else None
    name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if name != "python":
        raise GateError(f"{manifest}: runtime is {name!r}; the offline gate runs Python policy packs only")


def _converse(
    stub: analyzer_pb2_grpc.AnalyzerStub,
    pack: _PackProcess,
    deadline: float,
    resources: Sequence[RecordedResource],
    *,
    pack_dir: Path,
    stack: str,
    project: str,
    organization: str,
    stack_config: Mapping[str, str],
    policy_config: Mapping[str, Any] | None,
    config_source: str,
) -> GateResult:
    def optional(call: Any, request: Any, what: str) -> None:
        # Handshake and ConfigureStack are newer RPCs; the engine carries on when a pack lacks them.
        try:
            call(request, timeout=_remaining(deadline, pack, what))
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.UNIMPLEMENTED:
                with _rpc(pack, what):
                    raise

    optional(
        stub.Handshake,
        analyzer_pb2.AnalyzerHandshakeRequest(
            engine_address=_DUMMY_ENGINE_ADDRESS, root_directory=str(pack_dir), program_directory=str(pack_dir)
        ),
        "Handshake",
    )
    optional(
        stub.ConfigureStack,
        analyzer_pb2.AnalyzerStackConfigureRequest(
            stack=stack, project=project, organization=organization, dry_run=True, config=dict(stack_config)
        ),
        "ConfigureStack",
    )
    with _rpc(pack, "GetAnalyzerInfo"):
        info = stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=_remaining(deadline, pack, "GetAnalyzerInfo"))

    baseline, effective = _reconcile(info, policy_config, config_source)
    request = analyzer_pb2.ConfigureAnalyzerRequest()
    for name, cfg in effective.items():
        entry = request.policyConfig[name]
        entry.enforcementLevel = _TO_PROTO[cfg.enforcement or "advisory"]  # type: ignore[assignment]
        if cfg.properties:
            entry.properties.update(cfg.properties)
    with _rpc(pack, "Configure"):
        stub.Configure(request, timeout=_remaining(deadline, pack, "Configure"))

    violations: list[Violation] = []
    not_applicable: dict[tuple[str, str], None] = {}
    by_urn = {r.urn: r for r in resources}

    def collect(response: analyzer_pb2.AnalyzeResponse, default_urn: str) -> None:
        for d in response.diagnostics:
            violations.append(
                Violation(
                    policy=d.policyName,
                    enforcement=_enforcement(d.enforcementLevel, d.policyName),
                    urn=d.urn or default_urn,
                    message=d.message,
                )
            )
        for na in response.not_applicable:
            not_applicable[(na.policy_name, na.reason)] = None

    for res in resources:
        req = analyzer_pb2.AnalyzeRequest(
            type=res.type,
            urn=res.urn,
            name=res.name,
            properties=_struct(res),
            options=_options(res),
        )
        provider = _provider_of(res, by_urn)
        if provider is not None:
            req.provider.CopyFrom(provider)
        with _rpc(pack, f"Analyze({res.urn})"):
            collect(stub.Analyze(req, timeout=_remaining(deadline, pack, f"Analyze({res.urn})")), res.urn)

    stack_req = analyzer_pb2.AnalyzeStackRequest()
    for res in resources:
        item = stack_req.resources.add(
            type=res.type,
            urn=res.urn,
            name=res.name,
            properties=_struct(res),
            options=_options(res),
            parent=res.parent or "",
            dependencies=list(res.dependencies),
        )
        provider = _provider_of(res, by_urn)
        if provider is not None:
            item.provider.CopyFrom(provider)
        for prop, urns in res.property_dependencies.items():
            if urns:  # the engine skips properties without dependencies
                item.propertyDependencies[prop].urns.extend(urns)
    with _rpc(pack, "AnalyzeStack"):
        collect(stub.AnalyzeStack(stack_req, timeout=_remaining(deadline, pack, "AnalyzeStack")), "")

    kinds: dict[int, Literal["resource", "stack", "unknown"]] = {
        analyzer_pb2.POLICY_TYPE_RESOURCE: "resource",
        analyzer_pb2.POLICY_TYPE_STACK: "stack",
    }
    policies = tuple(
        PolicyInfo(
            name=p.name,
            description=p.description,
            kind=kinds.get(p.policy_type, "unknown"),
            default_enforcement=baseline[p.name].enforcement or "advisory",
            enforcement=effective[p.name].enforcement or "advisory",
        )
        for p in info.policies
    )
    return GateResult(
        violations=tuple(violations),
        not_applicable=tuple(not_applicable),
        pack_name=info.name,
        policies=policies,
    )
