"""`python -m tools.preview`: the offline preview of a Pulumi Python program (CONFIG.md section 3).

Runs the program (this repository, or `--program DIR`) with a stack's config under the recording mocks
of `tools.engine.mocks.monitor`, with no cloud account and no Pulumi CLI, then hands every recorded resource to the
real policy pack through `tools.engine.gate` (started the way the engine starts it), and reports.

    python -m tools.preview [--stack dev] [--config-file FILE] [--program DIR]
                            [--phase preview|update|up] [--skip-preview] [--today YYYY-MM-DD]
                            [--policy-config FILE] [--out DIR] [--json] [--verbose]

`--phase` picks the engine moment to reproduce: `preview` (default), a first `pulumi preview` of a
stack that does not exist yet (a dry run, every computed output unknown, Kubernetes objects reach the
stack policies as `{}`); `update`, a preview of a stack that exists (outputs known); `up`, the first
`pulumi up` of the stack. Without `--skip-preview` that is the CLI default: a first preview with the pack,
and a mandatory violation there stops it before anything is created (pulumi/pulumi pkg/backend/apply.go
lines 287-303, step_generator.go lines 3609-3630, deployment_executor.go lines 422-435); then the update
(not a dry run): resource policies before each step, where a mandatory one cancels the run, stack policies
after all of them. `--skip-preview` (the Automation API and pulumi/actions, which pass it) runs the update
alone. Each violation says when it bites at that `up` (`blocks`).

A program may log that a real `pulumi up` of the stack file would be refused (components/deploy_checks.py
does for documentation values when the run is in no real account, as here): the summary and `--json`
(`realUpRefused`) report it once, and the update is judged all the same.

Exit status: 0 no mandatory violation; 1 at least one mandatory violation; 2 the configuration or the
program was rejected (the message on stderr names the file, key and value).

The program runs in this process (one fresh interpreter per preview), with the program folder as
working directory and first on sys.path, the way the Pulumi Python language host runs it.
Source: https://github.com/pulumi/pulumi/blob/master/sdk/python/lib/pulumi/automation/_server.py
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import os
import runpy
import sys
import traceback
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import pulumi
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.mocks import MockSettings
from pulumi.runtime.proto import engine_pb2
from pulumi.runtime.stack import run_in_stack

from tools.engine.coverage.unjudged import unjudged_advisories, unjudged_components
from tools.engine.gate import Phase
from tools.engine.mocks.monitor import (
    DEFAULT_REGION,
    MockValueError,
    RecordingMocks,
    RecordingMonitor,
    UnknownInvokeError,
)
from tools.engine.policy_config import GateError
from tools.engine.records import engine_order
from tools.engine.unseen import (
    answered_by,
    name_stack_outputs,
    pending_offline,
    stack_policy_names,
    unseen_sources,
)
from tools.engine.view import stack_tags
from tools.engine.warm_pack import WarmPack
from tools.preview import result
from tools.preview.arguments import _parser, policy_config_for
from tools.preview.forked import Forked, preload_program
from tools.preview.model import GateReport, LogEntry, Recording, StackConfig, real_up_refusals
from tools.preview.program_modules import program_environment
from tools.preview.stack_files import PreviewError, Project, load_project, load_stack_config, load_stack_outputs
from tools.preview.verdicts import api_server_check, api_server_verdict

REPO = Path(__file__).resolve().parents[2]
PACK_DIR = REPO / "policies"
ORGANIZATION = "organization"

EXIT_OK = 0
EXIT_MANDATORY = 1
EXIT_REJECTED = 2


# --------------------------------------------------------------------------------------------------
# Running the program under the recording mocks
# --------------------------------------------------------------------------------------------------


@dataclass
class RecordingEngine:
    """Collects `pulumi.log` messages instead of printing them."""

    entries: list[LogEntry] = field(default_factory=list)

    def Log(self, request: Any) -> None:
        names = {engine_pb2.DEBUG: "debug", engine_pb2.INFO: "info", engine_pb2.WARNING: "warning",
                 engine_pb2.ERROR: "error"}
        self.entries.append(LogEntry(names.get(request.severity, "info"), request.message, request.urn))


def _exception_chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _rejection(exc: BaseException, project: Project) -> str:
    """The one message a user reads for a program that failed: no traceback."""
    for item in _exception_chain(exc):
        if isinstance(item, UnknownInvokeError | MockValueError):
            return f"offline mocks: {item}"
    for item in _exception_chain(exc):
        if isinstance(item, pulumi.RunError) or type(item).__name__.endswith("ConfigError"):
            return str(item)
    location = ""
    program_dir = str(project.directory.resolve())
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(program_dir)]
    if frames:
        last = frames[-1]
        location = f" (at {os.path.relpath(last.filename, program_dir)}:{last.lineno})"
    hint = ""
    if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name.split(".")[0].startswith("pulumi_"):
        # The program runs in this interpreter, under the mocks (not in its own virtualenv, as `pulumi preview` runs
        # it): a provider SDK the gate's environment lacks is the gate's gap, not the program's.
        package = exc.name.split(".")[0].replace("_", "-")
        hint = (f"; the offline gate runs the program with its own interpreter ({sys.executable}), which lacks "
                f"{package}: install it there with the version your program pins (pip install {package}==<version>)")
    return f"the program {project.main} failed: {type(exc).__name__}: {exc}{location}{hint}"


CLUSTER_TYPES = frozenset({"eks:index:Cluster", "aws:eks/cluster:Cluster"})


def run_program(project: Project, stack: str, config: StackConfig, phase: Phase = "preview",
                today: datetime.date | None = None, *, changed: Sequence[str] = (),
                cluster_replaced: bool = False) -> Recording:
    """Run the program once under the recording mocks, as the engine runs it in `phase`.

    `preview` and `update` are dry runs (`pulumi.runtime.is_dry_run()` is true, as in `pulumi preview`);
    in `preview` every computed output is unknown. `up` is not a dry run and every output is known.
    In `update`, `changed` resources (logical names or URNs) have unknown computed outputs and
    `cluster_replaced` replaces the EKS cluster: its id and outputs (endpoint, CA, kubeconfig) are unknown,
    so a Kubernetes provider built from them is unconfigured and its objects answer `{}`
    (docs/gate.md, "A preview of a changed stack").
    """
    prefix = f"{project.name}:"
    project_config: dict[str, Any] = {}
    for key, raw in config.values.items():
        if key.startswith(prefix):
            try:
                project_config[key[len(prefix):]] = json.loads(raw)
            except json.JSONDecodeError:
                project_config[key[len(prefix):]] = raw
    mocks = RecordingMocks(region=config.values.get("aws:region", DEFAULT_REGION), config=project_config,
                           unknown_outputs=phase == "preview", dry_run=phase != "up", changed=frozenset(changed),
                           replaced_types=CLUSTER_TYPES if cluster_replaced else frozenset(),
                           stack_outputs=config.other_stacks)
    monitor = RecordingMonitor(mocks)
    engine = RecordingEngine()
    pulumi_settings.configure(
        MockSettings(  # type: ignore[no-untyped-call]
            monitor=monitor,
            monitor_features=set(monitor.GetDeploymentInfo(None).supportedFeatures),
            engine=engine,
            project=project.name,
            stack=stack,
            dry_run=phase != "up",
            organization=ORGANIZATION,
            callbacks=None,
        )
    )
    pulumi.runtime.set_all_config(dict(config.values), list(config.secret_keys))

    def program() -> None:
        runpy.run_path(str(project.main), run_name="__main__")

    # The caller's event loop comes back afterwards (a caller in process, such as tools.ci_roles, may run
    # Pulumi's mocks on it next); None where it had none.
    try:
        previous: asyncio.AbstractEventLoop | None = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:
        previous = None
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    # A run is its own program: no root stack resource is active before it (the SDK keeps the root in a context
    # variable, which a caller in process, such as a test that ran Pulumi's mocks earlier in the same thread, may have
    # left set: `Stack()` then refuses with "Only one root Pulumi Stack may be active at once"). Restored afterwards.
    root = pulumi_settings.ROOT.set(None)
    try:
        with (program_environment(project.main.parent, project.directory, config.path, today),
              contextlib.redirect_stdout(sys.stderr)):
            loop.run_until_complete(run_in_stack(program))
    except Exception as exc:
        raise PreviewError(_rejection(exc, project)) from exc
    finally:
        pulumi_settings.ROOT.reset(root)
        monitor.close()  # the package plugin, where the program used the package (tools/engine/mocks/own_package.py)
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.close()
        asyncio.set_event_loop(previous)

    errors = [e for e in engine.entries if e.severity == "error"]
    if errors:
        raise PreviewError(
            "the program logged errors, which fail a deployment:\n" + "\n".join(f"  {e.message}" for e in errors)
        )
    resources = tuple(engine_order(monitor.resources_in_order()))
    stack_urn = next((r.urn for r in resources if r.type == "pulumi:pulumi:Stack"), "")
    return Recording(
        project=project.name,
        stack=stack,
        resources=resources,
        stack_outputs=monitor.resource_outputs.get(stack_urn, {}),
        logs=tuple(sorted(engine.entries, key=lambda e: (e.urn, e.severity, e.message))),  # threads' order
        phase=phase,
        tags=stack_tags(project.name, "python", project.description, config.values),
        change={"clusterReplaced": cluster_replaced, "changed": sorted(changed)} if cluster_replaced or changed
        else {},
    )


# --------------------------------------------------------------------------------------------------
# The policy gate
# --------------------------------------------------------------------------------------------------


def read_policy_config(policy_config: Path | None) -> dict[str, Any] | None:
    """The `--policy-config` file, read and validated once per run (None when none is named)."""
    from tools.engine import gate  # noqa: PLC0415
    try:
        return gate.load_policy_config(policy_config) if policy_config is not None else None
    except gate.GateError as exc:
        raise PreviewError(f"policy gate: {exc}") from exc


def judging_day(cli_today: datetime.date | None, loaded: Mapping[str, Any] | None, source: Path | None
                ) -> datetime.date:
    """The one day of this run (`tools.engine.policy_config.resolve_today`), for the program and the pack alike."""
    from tools.engine import gate  # noqa: PLC0415
    from tools.engine.policy_config import resolve_today  # noqa: PLC0415
    try:
        return resolve_today(cli_today, loaded, str(source))
    except gate.GateError as exc:
        raise PreviewError(f"policy gate: {exc}") from exc


@contextlib.contextmanager
def early_pack(project: str, stack: str, config: StackConfig, phase: Phase) -> Iterator[WarmPack | None]:
    """The policy pack process, started now so that it starts up (imports the SDK, the pack, the matrix)
    while the program runs instead of after it; stopped on the way out. None when there is no pack.

    The engine does the same: it starts and configures the policy packs before it runs the program
    (pulumi/pulumi pkg/engine/update.go, `newUpdateSource`: `installAndLoadPolicyPlugins`, "Step 2", comes
    before `deploy.NewEvalSource`), with what is known from the stack file alone (project, stack, config,
    dry run); nothing the pack is started with depends on the program's run.
    """
    if not (REPO / "tools" / "engine" / "gate.py").is_file() or not (PACK_DIR / "PulumiPolicy.yaml").is_file():
        yield None
        return
    pack = WarmPack(pack_dir=PACK_DIR, stack=stack, project=project, phase=phase, stack_config=config.values)
    try:
        pack.start()
    except GateError as exc:
        raise PreviewError(f"policy gate: {exc}") from exc
    try:
        yield pack
    finally:
        pack.close()


def run_policy_gate(recording: Recording, config: StackConfig, policy_config: Path | None,
                    loaded: Mapping[str, Any] | None, today: datetime.date, *,
                    skip_preview: bool = False, pack: WarmPack | None = None,
                    known: Recording | None = None, offline_only: bool = True) -> GateReport:
    """Hand every resource to the policy pack in policies/, as `pulumi preview --policy-pack` would.

    `loaded` is `policy_config` as `read_policy_config` returned it; `today` is the run's `judging_day`.
    `pack`: a pack process already started for this stack and phase (`early_pack`), else one is started here.
    `known`: in a first preview, the program's `up` recording (`known_recording`), from which the offline-only
    verdicts are computed; `offline_only` False: the caller drops them, so the pack is not asked for them.
    """
    if not (REPO / "tools" / "engine" / "gate.py").is_file():
        return GateReport(ran=False, detail="no policy pack ran: tools/engine/gate.py does not exist yet")
    if not (PACK_DIR / "PulumiPolicy.yaml").is_file():
        return GateReport(ran=False, detail=f"no policy pack ran: {PACK_DIR}/PulumiPolicy.yaml does not exist")
    from tools.engine import gate  # noqa: PLC0415 -- the gate starts a process; import it only when it runs
    try:
        if pack is not None:
            result = pack.judge(list(recording.resources), stack=recording.stack, project=recording.project,
                                phase=recording.phase, policy_config=loaded, stack_config=config.values,
                                today=today, tags=recording.tags, skip_preview=skip_preview,
                                known=None if known is None else list(known.resources), offline_only=offline_only)
        else:
            result = gate.run_gate(
                list(recording.resources),
                pack_dir=PACK_DIR,
                stack=recording.stack,
                project=recording.project,
                policy_config=loaded,
                stack_config=config.values,
                phase=recording.phase,
                today=today,
                tags=recording.tags,
                skip_preview=skip_preview,
            )
    except gate.GateError as exc:
        raise PreviewError(f"policy gate: {exc}") from exc
    # The policy config it ran with is the document's `policyConfig`, named as the user would write it.
    # What the offline gate did not see (remote components not emulated, other stacks' outputs not given) makes the
    # verdicts that could read it pending: tools/engine/unseen.py.
    unseen = unseen_sources(recording.resources, answered_by(config.other_stacks, ORGANIZATION, recording.project))
    violations = name_stack_outputs(pending_offline(result.violations, stack_policy_names(result.policies),
                                                    recording.resources, unseen), recording.resources, unseen)
    # Every component whose children it did not build is unjudged, found or not: a `<policy>-pending` advisory per
    # (component, policy) that could judge them (tools/engine/coverage/unjudged.py).
    unjudged = tuple(unjudged_components(unseen))
    return GateReport(
        ran=True,
        detail=f"policy pack {result.pack_name} ran",
        violations=(*violations, *unjudged_advisories(unjudged)),
        pack=result.pack_name,
        policies=len(result.policies),
        not_applicable=tuple(result.not_applicable),
        cancelled_at=result.cancelled_at,
        unjudged=unjudged,
    )


def known_recording(project: Project, stack: str, config: StackConfig,
                    today: datetime.date) -> Recording | None:
    """The program run as the first `pulumi up` runs it (not a dry run, every output known): the stack the stack
    policies see after its steps, from which a first preview's offline-only verdicts are computed. In the first
    preview itself, objects under the unconfigured Kubernetes provider answer `{}` and what depends on their
    outputs is unknown (tools/engine/mocks/monitor.py), so the preview's own recording cannot judge them.
    None when the program fails that way: the offline-only verdicts then read the preview's recording.
    """
    try:
        return run_program(project, stack, config, "up", today)
    except PreviewError:
        return None


def run_analyze(project: Project, stack: str, config: StackConfig, policy_config: Path | None,
                loaded: Mapping[str, Any] | None, *, today: datetime.date,
                state: Path | None) -> tuple[Recording, GateReport]:
    """`pulumi policy analyze` (tools/engine/analyze.py): the pack over an exported state (`state`), or over the
    state the program's first `pulumi up` leaves. No program runs for an exported state, as in the CLI."""
    from tools.engine.analyze import export_items, load_export, state_items  # noqa: PLC0415

    if state is not None:
        try:
            stack_name, project_name, resources = load_export(state)
        except GateError as exc:
            raise PreviewError(f"--state: {exc}") from None
        items = export_items(resources)
        recording = Recording(project=project_name, stack=stack_name, resources=tuple(resources), stack_outputs={},
                              logs=(), phase="analyze", tags=stack_tags(project_name, "python", None, {}))
        what = f"the exported state {state}"
    else:
        recording = replace(run_program(project, stack, config, "up", today), phase="analyze")
        items = state_items(recording.resources, stack=stack, project=project.name, stack_config=config.values)
        what = "the state the first `pulumi up` leaves"
    with early_pack(recording.project, recording.stack, config, "analyze") as pack:
        if pack is None:
            return recording, GateReport(ran=False, detail=f"no policy pack ran: {PACK_DIR}/PulumiPolicy.yaml is "
                                                           "missing")
        try:
            # The CLI loads the packs with no stack config (policy_analyze.go, LoadLocalPolicyPackAnalyzers).
            result = pack.analyze(items, stack=recording.stack, project=recording.project, policy_config=loaded,
                                  stack_config={}, today=today, tags=recording.tags)
        except GateError as exc:
            raise PreviewError(f"policy gate: {exc}") from exc
    return recording, GateReport(ran=True, detail=f"policy pack {result.pack_name} ran over {what}",
                                 violations=tuple(result.violations), pack=result.pack_name,
                                 policies=len(result.policies), not_applicable=tuple(result.not_applicable))


def run_up(project: Project, stack: str, config: StackConfig, policy_config: Path | None,
           loaded: Mapping[str, Any] | None, *, today: datetime.date,
           skip_preview: bool) -> tuple[Recording, GateReport]:
    """The first `pulumi up` of the stack: the CLI's preview first (unless `skip_preview`), then the update.

    A mandatory violation the real preview reports (a resource policy, or a stack policy on what the
    engine knows) stops the CLI before any step (pkg/backend/apply.go lines 287-303 run the preview and
    return its error; step_generator.go lines 3609-3630 make a mandatory stack violation an error,
    deployment_executor.go lines 422-435 fail the run). Verdicts only the offline gate reaches in that
    preview do not stop it: the real engine reaches them in the update, after every step.
    """
    if not skip_preview:
        with early_pack(project.name, stack, config, "preview") as pack:
            first = run_program(project, stack, config, "preview", today)
            # The preview's offline-only verdicts are dropped below whichever way it ends (the update reaches
            # them itself, after its steps): neither the program's `up` run nor the pack is asked for them here.
            preview_report = run_policy_gate(first, config, policy_config, loaded, today, skip_preview=False,
                                             pack=pack, offline_only=False)
        engine_mandatory = [v for v in preview_report.violations if v.enforcement == "mandatory" and not v.offline_only]
        if engine_mandatory:
            kept = tuple(v for v in preview_report.violations if not v.offline_only)
            return replace(first, phase="up"), replace(preview_report, violations=kept, stopped_by_preview=True)
    with early_pack(project.name, stack, config, "up") as pack:
        recording = run_program(project, stack, config, "up", today)
        return recording, run_policy_gate(recording, config, policy_config, loaded, today,
                                          skip_preview=skip_preview, pack=pack)


# --------------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------------


def dumps(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def stack_file_warning(file_name: str, message: str) -> str:
    """A warning the program logged: each is about a value of the stack file (components/deploy_checks.py, the
    config loader, the image holds), so it says so and names the file once (the message's own, when it names it)."""
    names_file = message.split(": ", 1)[0].endswith(file_name)
    return f"stack file warning: {message}" if names_file else f"stack file warning: {file_name}: {message}"


def _reject(message: str, stderr: TextIO) -> int:
    print(f"error: {message}", file=stderr)
    return EXIT_REJECTED


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    stdout, stderr = sys.stdout, sys.stderr
    program_dir = args.program.resolve()
    out_dir = args.out.resolve() if args.out is not None else None
    used: result.PolicyConfigUse | None = None
    try:
        if not program_dir.is_dir():
            raise PreviewError(
                f"--program {args.program}: not a folder; pass a folder with Pulumi.yaml and __main__.py"
            )
        project = load_project(program_dir)
        config_path = (args.config_file or program_dir / f"Pulumi.{args.stack}.yaml").resolve()
        if args.config_file is None and not config_path.is_file():
            stacks = sorted(p.name for p in program_dir.glob("Pulumi.*.yaml"))
            raise PreviewError(
                f"{config_path}: stack config file not found for --stack {args.stack}; "
                f"available: {', '.join(stacks) or 'none'}"
            )
        config = replace(load_stack_config(config_path, project.name, program_dir),
                         other_stacks=load_stack_outputs(args.stack_outputs))
        if args.state is not None and args.phase != "analyze":
            raise PreviewError(f"--state {args.state}: a stack export is analyzed with --phase analyze, not "
                               f"--phase {args.phase}")
        if (args.cluster_replaced or args.changed) and args.phase != "update":
            raise PreviewError(f"--cluster-replaced and --changed describe a change previewed on an existing stack; "
                               f"they need --phase update, not --phase {args.phase}")
        policy_config, used = policy_config_for(args.policy_config, program_dir, args.stack)
        loaded = read_policy_config(policy_config)
        today = judging_day(args.today, loaded, policy_config)
        recording, report = judge(args, project, config, policy_config, loaded=loaded, today=today)
    except PreviewError as exc:
        if args.json or out_dir is not None:
            doc = result.refused(args.stack, args.phase, str(exc), used)
            if out_dir is not None:
                from tools.preview import render  # noqa: PLC0415
                render.write_out(out_dir, doc, None)
            if args.json:
                stdout.write(dumps(doc))
        return _reject(str(exc), stderr)

    from tools.cost.section import preview_cost  # noqa: PLC0415 -- the cost section (issue 53); docs/cost.md

    doc = result.build(recording, report, config, used,
                       extra={"cost": preview_cost(config.values, args.stack, today, loaded)})
    if out_dir is not None or not args.json:
        # rich and the summary's views of the stack: only for a summary or the --out files, never for --json alone
        from tools.preview import render  # noqa: PLC0415
    if out_dir is not None:
        render.write_out(out_dir, doc, recording)
    warnings = [stack_file_warning(config.path.name, e.message) for e in recording.logs
                if e.severity == "warning" and not real_up_refusals([e])]  # those: once, in the summary
    for line in dict.fromkeys(warnings):  # a warning the program logs once per resource: once, with its count
        n = warnings.count(line)
        print(f"{line} ({n} times)" if n > 1 else line, file=stderr)
    if args.json:
        stdout.write(dumps(doc))
    else:
        render.print_summary(stdout, doc, out_dir, verbose=args.verbose)
    return int(doc["exitCode"])


def judge(args: Any, project: Project, config: StackConfig, policy_config: Path | None, *,
          loaded: Mapping[str, Any] | None, today: datetime.date) -> tuple[Recording, GateReport]:
    """The run `args.phase` asks for: the recording, and the gate's report on it."""
    if args.phase == "analyze":
        # `analyze` reads a state the API server already accepted: no request is made.
        return run_analyze(project, args.stack, config, policy_config, loaded, today=today,
                           state=args.state.resolve() if args.state else None)
    if args.phase == "up":
        recording, report = run_up(project, args.stack, config, policy_config, loaded, today=today,
                                   skip_preview=args.skip_preview)
        return recording, api_server_verdict(recording, report)
    with early_pack(project.name, args.stack, config, args.phase) as pack:
        # A first preview needs the program's `up` run too: it runs in a forked child meanwhile.
        up_run = None
        if args.phase == "preview":
            preload_program(project.main)
            up_run = Forked(lambda: known_recording(project, args.stack, config, today))
        recording = run_program(project, args.stack, config, args.phase, today, changed=args.changed,
                                cluster_replaced=args.cluster_replaced)
        # On an update the objects exist; a replaced cluster's objects are created anew on the new one.
        has_old = args.phase == "update" and not args.cluster_replaced
        # The API server's check reads only the recording: it runs in a thread while this one waits for
        # the forked `up` run and for the pack's process to analyze (both on other cores).
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="api-server") as pool:
            api = pool.submit(api_server_check, recording, has_old=has_old)
            known = (up_run.result() if up_run is not None
                     else known_recording(project, args.stack, config, today) if recording.change else None)
            report = run_policy_gate(recording, config, policy_config, loaded, today,
                                     skip_preview=args.skip_preview, pack=pack, known=known)
            return recording, api_server_verdict(recording, report, has_old=has_old, api=api.result())
