"""What `tools.preview` writes and prints: Kubernetes manifests, resources.json, summary.md, the console summary.

GPU pools and the services that can reach them are read with the policy pack's own inventory
(`policies/gpu_guard/inventory.py`), so the summary and the policies agree on the label contract
(CONFIG.md section 2) and on scheduler reachability.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from policies.gpu_guard import inventory
from policies.gpu_guard.rules.gpu_nodes_tainted import is_gpu_pool
from tools.apiserver.check import is_kubernetes_object, kubernetes_object
from tools.engine.coverage.unjudged import is_unjudged_advisory
from tools.engine.mocks.eks_children import PULUMI_EKS_DESCRIBE
from tools.engine.records import RecordedResource, Violation
from tools.engine.view import emulated_children, not_seen_offline
from tools.preview import findings as found
from tools.preview.model import (
    PENDING_SUFFIX,
    REAL_UP_REFUSED,
    GateReport,
    Recording,
    StackConfig,
    real_up_refusals,
)

HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart", "kubernetes:helm.sh/v3:Chart")

# --------------------------------------------------------------------------------------------------
# Kubernetes objects: what the provider sends to the API server, as the API-server check reads them
# (tools/apiserver/check.py: is_kubernetes_object, kubernetes_object)
# --------------------------------------------------------------------------------------------------


def kubernetes_objects(resources: Iterable[RecordedResource]) -> list[tuple[RecordedResource, dict[str, Any]]]:
    return [(r, kubernetes_object(r)) for r in sorted(resources, key=lambda r: r.urn) if is_kubernetes_object(r)]


def _slug(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", value) or "_"


def manifest_filename(obj: Mapping[str, Any]) -> str:
    """`<kind>-<namespace>-<name>.yaml`; `cluster` stands for the namespace of a cluster-scoped object."""
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace") or "cluster"
    return f"{_slug(str(obj['kind']).lower())}-{_slug(str(namespace))}-{_slug(str(metadata.get('name')))}.yaml"


# --------------------------------------------------------------------------------------------------
# Summary data
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolRow:
    name: str
    kind: str
    os: str
    driver: str
    driver_source: str
    instance_types: tuple[str, ...]
    urn: str


@dataclass(frozen=True)
class ServiceRow:
    name: str
    kind: str
    cuda: str
    gpus: int
    pools: tuple[str, ...]
    urn: str


@dataclass(frozen=True)
class ReleaseRow:
    name: str
    chart: str
    version: str
    namespace: str


@dataclass(frozen=True)
class Summary:
    stack: str
    counts: tuple[tuple[str, int], ...]
    pools: tuple[PoolRow, ...]
    services: tuple[ServiceRow, ...]
    releases: tuple[ReleaseRow, ...]
    objects: int
    outputs: dict[str, Any]
    phase: str = "preview"
    not_seen_offline: tuple[dict[str, str], ...] = ()
    emulated: tuple[dict[str, str], ...] = ()  # `tools.engine.view.emulated_children`
    refused: tuple[str, ...] = ()  # what a real `pulumi up` would be refused for (`model.real_up_refusals`)


def emulated_lines(emulated: Sequence[Mapping[str, str]]) -> list[str]:
    """One line per remote component whose children were emulated: what the policies judged in their place."""
    by_parent: dict[str, list[str]] = {}
    sources: dict[str, set[str]] = {}
    for child in emulated:
        by_parent.setdefault(child["component"], []).append(f"{child['type']} {child['urn'].rsplit('::', 1)[-1]}")
        sources.setdefault(child["component"], set()).add(_source_of(child["source"]))
    return [f"{parent}: the children its provider registers in the real preview, emulated from "
            f"{', '.join(sorted(sources[parent]))} and judged by the policies: {', '.join(children)}"
            for parent, children in by_parent.items()]


def _source_of(url: str) -> str:
    """`https://github.com/pulumi/pulumi-eks/blob/7bf0c1b1/...` -> `pulumi/pulumi-eks@7bf0c1b1 (the project pins
    pulumi-eks 4.4.0)`, the pulumi-eks emulation's own wording."""
    if "/pulumi/pulumi-eks/" in url:
        return f"pulumi/pulumi-eks@{PULUMI_EKS_DESCRIBE} (the project pins pulumi-eks 4.4.0)"
    parts = url.removeprefix("https://github.com/").split("/")
    return f"{parts[0]}/{parts[1]}@{parts[3][:10]}" if len(parts) > 3 and parts[2] == "blob" else url


@dataclass(frozen=True)
class _AsPolicyResource:
    """The shape `policies.gpu_guard.inventory.build_inventory` reads."""

    resource_type: str
    props: Any
    urn: str
    name: str


def summarize(recording: Recording) -> Summary:
    resources = sorted(recording.resources, key=lambda r: r.urn)
    inv = inventory.build_inventory(_AsPolicyResource(r.type, r.inputs, r.urn, r.name) for r in resources)
    gpu_pools = [p for p in inv.pools if is_gpu_pool(p)]
    pools = tuple(
        PoolRow(
            name=p.name, kind=p.kind, os=p.os or "?", driver=p.driver_label or "?",
            driver_source=p.driver_source or "?", instance_types=p.instance_types, urn=p.urn,
        )
        for p in sorted(gpu_pools, key=lambda p: (p.name, p.urn))
    )
    services = []
    for w in sorted(inv.workloads, key=lambda w: (w.name, w.urn)):
        if w.gpus == 0 and w.cuda_label is None:
            continue
        reach = inv.reach(w, gpu_pools)
        services.append(ServiceRow(name=w.name, kind=w.kind, cuda=w.cuda_label or "?", gpus=w.gpus,
                                   pools=tuple(sorted({r.pool.name for r in reach})), urn=w.urn))
    by_urn = {r.urn: r for r in resources}

    def release_name(urn: str, fallback: str) -> str:
        # The Helm release name (`name` input, else the provider's auto-name), not the Pulumi logical name.
        res = by_urn[urn]
        return str(res.inputs.get("name") or res.outputs.get("name") or fallback)

    releases = tuple(
        ReleaseRow(name=release_name(r.urn, r.name), chart=r.chart, version=r.version or "?",
                   namespace=r.namespace or "default")
        for r in sorted(inv.releases, key=lambda r: (r.chart, r.name))
    )
    counts = Counter(r.type for r in resources)
    return Summary(
        stack=recording.stack,
        counts=tuple(sorted(counts.items())),
        pools=pools,
        services=tuple(services),
        releases=releases,
        objects=len(kubernetes_objects(resources)),
        outputs=recording.stack_outputs,
        phase=recording.phase,
        not_seen_offline=tuple(not_seen_offline(recording.resources)),
        emulated=tuple(emulated_children(recording.resources)),
        refused=tuple(real_up_refusals(recording.logs)),
    )


# --------------------------------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------------------------------


def _md_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return lines


def run_notes(report: GateReport) -> list[str]:
    """How a `pulumi up` ended, when it ended early (`--phase up`)."""
    notes = []
    if report.stopped_by_preview:
        notes.append("`pulumi up` stopped in the preview it runs first: nothing was created "
                     "(pulumi/pulumi pkg/backend/apply.go lines 287-303)")
    if report.cancelled_at:
        notes.append(f"`pulumi up` cancelled at {report.cancelled_at}: a mandatory resource violation; later "
                     "resources were not analyzed and no stack policy ran (deployment_executor.go lines 309-315), "
                     "but the steps already dispatched ran to completion: resources before it may exist "
                     "(step_executor.go, WaitForCompletion waits for every in-flight chain)")
    return notes


def api_server_line(report: GateReport) -> str:
    """What the API server and Helm checks covered (tools.apiserver); their verdicts are among the violations.

    Without the upstream cache (its `apiserver-not-checked` advisory) only the built-in kinds were checked: the
    line says so, and what was not, in the same sentence.
    """
    api = report.api_server
    if not api:
        return ""
    skipped = len(api.get("transitionRulesSkipped") or [])
    if any(v.policy == "apiserver-not-checked" for v in report.violations):
        line = (f"API server and Helm: {api['objects']} objects checked against Kubernetes "
                f"{api['kubernetesVersion']}'s built-in schemas only: {len(api['rejected'])} rejected; custom "
                f"resources (their CRDs and CEL rules) and the {api['releases']} Helm releases' values were not "
                "checked: the upstream cache is missing (`make upstream`)")
    else:
        line = (f"API server and Helm: {api['objects']} objects checked against Kubernetes "
                f"{api['kubernetesVersion']} and the upstream CRDs (CEL rules included), {api['releases']} Helm "
                f"releases against their charts' values.yaml: {len(api['rejected'])} rejected")
    if skipped:
        line += f"; {skipped} transition rules (oldSelf) not run on create, as the API server does not"
    return line + "".join(f"; {note}" for note in api.get("notes") or [])


def summary_markdown(summary: Summary, report: GateReport, config: StackConfig,
                     resources: Sequence[RecordedResource] = (), project: str = "") -> str:
    """summary.md; `resources` and `project` (the recording's) let each finding name its stack key."""
    lines = [f"# Offline preview: stack `{summary.stack}`", "", f"Config: `{config.path.name}`. "
             f"{sum(n for _, n in summary.counts)} resources, {summary.objects} Kubernetes objects.", ""]
    for message in summary.refused:
        lines += [f"**{REAL_UP_REFUSED}**{message}", "", "(The offline gate runs in no real account, so it judges "
                  "the update all the same; fix the stack file before a real `pulumi up`.)", ""]
    lines += ["## Resources by type", ""]
    lines += _md_table(["type", "count"], [(f"`{t}`", str(n)) for t, n in summary.counts])
    lines += ["", "## GPU pools", ""]
    if summary.pools:
        lines += _md_table(
            ["pool", "kind", "OS", "driver", "driver source", "instance types"],
            [(p.name, p.kind, p.os, p.driver, p.driver_source, ", ".join(p.instance_types) or "?")
             for p in summary.pools],
        )
    else:
        lines.append("No GPU pools.")
    lines += ["", "## Services and the pools they can reach", ""]
    if summary.services:
        lines += _md_table(
            ["service", "kind", "CUDA", "GPUs/replica", "reachable pools"],
            [(s.name, s.kind, s.cuda, str(s.gpus), ", ".join(s.pools) or "**none**") for s in summary.services],
        )
    else:
        lines.append("No GPU services.")
    lines += ["", "## Helm releases", ""]
    if summary.releases:
        lines += _md_table(["release", "chart", "version", "namespace"],
                           [(r.name, r.chart, r.version, r.namespace) for r in summary.releases])
    else:
        lines.append("No Helm releases.")
    lines += ["", "## Policy pack", "", f"{report.detail} (phase `{summary.phase}`)."]
    if api_server_line(report):
        lines += ["", api_server_line(report) + "."]
    if report.ran:
        if report.violations:
            # One row per finding, as the console lists them (twins once, the stack key, the headline);
            # resources.json keeps every message whole.
            keys = found.StackKeys(config.parsed, resources, project)
            lines += ["", *_md_table(
                ["enforcement", "labels", "policy", "where to fix", "finding"],
                [(f.violation.enforcement, ", ".join(found.labels(f)),
                  f.violation.policy + (f" (+ {f.twin.policy})" if f.twin else ""), keys.where(f.violation),
                  found.headline(f.violation)) for f in shown(report)],
            )]
            if (explained := found.legend(shown(report))) is not None:
                lines += ["", explained]
        else:
            lines.append("No violations.")
        for policy, reason in report.not_applicable:
            lines.append(f"- `{policy}` could not judge: {reason}")
        lines += [f"- {line}" for line in run_notes(report)]
        if report.offline_only:
            lines += ["", "## Judged offline only in this phase", "",
                      "The real engine sent these policies the Kubernetes objects as `{}`; the offline gate judged "
                      "the program's own values instead. The cloud preview of a new stack did not check them.", ""]
            lines += _md_table(["policy", "offline verdicts"],
                               [(f"`{p}`", "; ".join(f"{v['enforcement']}: {v['message']}" for v in e["verdicts"])
                                 or "none") for p, e in sorted(report.offline_only.items())])
    if summary.emulated:
        lines += ["", "## Emulated offline", ""]
        lines += [f"- {line}" for line in emulated_lines(summary.emulated)]
    lines += unjudged_markdown(report)
    if gaps := not_unjudged(summary.not_seen_offline, report):
        lines += ["", "## Not seen offline", ""]
        lines += [f"- `{n['type']}` `{n['urn']}`: the real preview judges {n['judged_by_real_preview']}; {n['why']}."
                  for n in gaps]
    return "\n".join(lines) + "\n"


def write_out(out_dir: Path, doc: Mapping[str, Any], recording: Recording, report: GateReport,
              config: StackConfig) -> None:
    """`--out DIR`: resources.json (the `--json` document), manifests/<kind>-<namespace>-<name>.yaml, summary.md."""
    manifests = out_dir / "manifests"
    manifests.mkdir(parents=True, exist_ok=True)
    for stale in manifests.glob("*.yaml"):
        stale.unlink()
    (out_dir / "resources.json").write_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
    seen: dict[str, str] = {}
    for res, obj in kubernetes_objects(recording.resources):
        filename = manifest_filename(obj)
        if filename in seen:
            raise ValueError(f"{res.urn} and {seen[filename]} render to the same manifest {filename}")
        seen[filename] = res.urn
        (manifests / filename).write_text(yaml.safe_dump(obj, sort_keys=False, default_flow_style=False),
                                          encoding="utf-8")
    from tools.cost.section import markdown as cost_markdown  # noqa: PLC0415 -- the cost section (issue 53)

    summary = summary_markdown(summarize(recording), report, config, recording.resources, recording.project)
    cost = cost_markdown(doc.get("cost"))
    (out_dir / "summary.md").write_text(summary + ("\n" + cost if cost else ""), encoding="utf-8")


VERBOSE_HINT = "--verbose, or make preview VERBOSE=1"


is_pending = found.is_pending


def shown(report: GateReport) -> list[found.Finding]:
    """Every finding once (twins folded: `tools.preview.findings`), mandatory first."""
    ordered = sorted(report.violations, key=lambda v: (v.enforcement != "mandatory", v.policy, v.urn))
    return found.merge_twins(ordered)


def findings(report: GateReport) -> tuple[list[Violation], list[Violation], list[Violation]]:
    """(mandatory, advisory, pending): the pending advisories apart, they say when a policy judges, not a defect."""
    ordered = [f.violation for f in shown(report)]
    mandatory = [v for v in ordered if v.enforcement == "mandatory"]
    advisory = [v for v in ordered if v.enforcement != "mandatory" and not is_pending(v)]
    return mandatory, advisory, [v for v in ordered if is_pending(v)]


def pending_line(report: GateReport, phase: str) -> str | None:
    """The pending advisories of one phase as one line: how many policies wait, on what, and until when."""
    _, _, pending = findings(report)
    pending = [v for v in pending if not is_unjudged_pending(report, v)]  # each component has its own line
    if not pending:
        return None
    policies = sorted({v.policy.removesuffix(PENDING_SUFFIX) for v in pending})
    offline = report.offline_only
    judged = [p for p in policies if p in offline]
    found = sum(len(offline[p]["verdicts"]) for p in judged)
    verdict = (f"; the offline gate judged them from the program's values: "
               f"{f'{found} finding(s), listed above' if found else 'no violation'}") if judged else ""
    not_seen = [v for v in pending if v.message.startswith(f"{v.policy.removesuffix(PENDING_SUFFIX)} is pending "
                                                            "offline")]
    unseen = f"; {len(not_seen)} finding(s) wait on what the offline gate did not see" if not_seen else ""
    return (f"pending in phase {phase}: {len(policies)} stack policies wait for Kubernetes objects that have no "
            f"properties while their provider's kubeconfig is not known, and judge them once it is{unseen}{verdict} "
            f"(each: {VERBOSE_HINT})")


def verdict_line(report: GateReport, refused: Sequence[str] = ()) -> str:
    """The last line of the human output: the counts, and what the exit status (`command.main`) means.

    `refused`: what a real `pulumi up` of this stack file would be refused for (`model.real_up_refusals`); such a
    run never ends in PASS, though the policies' exit status stays theirs. `tools.ci_gate` counts alike
    (`tools.preview.findings.counts`).
    """
    mandatory, advisory, pending = found.counts(report.violations)
    counts = f"{mandatory} mandatory, {advisory} advisory finding(s), {pending} pending"
    if not report.ran:
        return f"verdict: NOT JUDGED, exit 0: {report.detail}"
    unjudged = unjudged_count(report)
    also = "".join([
        "; a real `pulumi up` of this stack file is refused too (stack file warning above)" if refused else "",
        f"; {unjudged}" if unjudged else ""])
    if mandatory:
        return f"verdict: FAIL, exit 1 (a mandatory finding blocks `pulumi up`{also}): {counts}"
    if refused:
        return ("verdict: STACK FILE REFUSED, exit 0 (no mandatory finding, but a real `pulumi up` of this stack "
                f"file is refused before anything is created: fix the stack file warning above"
                f"{f'; {unjudged}' if unjudged else ''}): {counts}")
    if unjudged:
        return f"verdict: PASS offline; {unjudged} (exit 0: no mandatory finding in what the gate judged): {counts}"
    return f"verdict: PASS, exit 0 (no mandatory finding; nothing here blocks `pulumi up`): {counts}"


# --------------------------------------------------------------------------------------------------
# Unjudged components (tools/engine/coverage/unjudged.py): the verdict counts them, the summary names each
# --------------------------------------------------------------------------------------------------


def unjudged_count(report: GateReport) -> str:
    """"3 components unjudged: `pulumi preview` judges them", or "" when the gate judged every component."""
    n = len(report.unjudged)
    if not n:
        return ""
    return f"{n} component{'s' if n != 1 else ''} unjudged: `pulumi preview` judges them"


def unjudged_lines(report: GateReport) -> list[str]:
    """One line per unjudged component: why, and the policies that could judge what it registers."""
    return [u.line() for u in report.unjudged]


def unjudged_markdown(report: GateReport) -> list[str]:
    """summary.md's section: the count, and one line per unjudged component."""
    if not report.unjudged:
        return []
    return ["", "## Unjudged", "", f"{unjudged_count(report)}.", "", *(f"- {line}" for line in unjudged_lines(report))]


def not_unjudged(gaps: Sequence[Mapping[str, str]], report: GateReport) -> list[Mapping[str, str]]:
    """The not-seen gaps that have no unjudged line of their own (no policy could judge what they register)."""
    named = {u.urn for u in report.unjudged}
    return [g for g in gaps if g["urn"] not in named]


def is_unjudged_pending(report: GateReport, violation: Violation) -> bool:
    """An unjudged component's `<policy>-pending` advisory: summarized by its component's line, not one by one."""
    return is_unjudged_advisory(violation, report.unjudged)


def _by_provider(counts: Sequence[tuple[str, int]]) -> str:
    providers: Counter[str] = Counter()
    for type_, n in counts:
        providers[type_.split(":", 1)[0]] += n
    return ", ".join(f"{n} {provider}" for provider, n in sorted(providers.items()))


def print_summary(stream: TextIO, recording: Recording, report: GateReport, config: StackConfig,
                  out_dir: Path | None, *, verbose: bool = False, cost: Mapping[str, Any] | None = None) -> None:
    """The human output: what the stack creates, its GPU pools and services, the findings, and the verdict last.

    `verbose` adds every resource type, each pending advisory in full, what only the offline gate judged in
    this phase and the emulated children of remote components; `--json` always holds all of it.
    """
    summary = summarize(recording)
    console = Console(file=stream, highlight=False, soft_wrap=False, width=max(100, Console(file=stream).width))
    total = sum(n for _, n in summary.counts)
    console.print(f"[bold]Offline preview[/bold] of stack [bold]{summary.stack}[/bold] ({config.path.name}, phase "
                  f"{summary.phase}): {total} resources, {summary.objects} Kubernetes objects")
    for message in summary.refused:
        console.print(f"[bold red]stack file warning: {REAL_UP_REFUSED}[/bold red]{message}\n(The offline gate runs "
                      "in no real account, so it judges the update all the same; fix the stack file before a real "
                      "`pulumi up`.)")

    if verbose:
        counts = Table(title="Resources by type", title_justify="left")
        counts.add_column("type")
        counts.add_column("count", justify="right")
        for type_, n in summary.counts:
            counts.add_row(type_, str(n))
        console.print(counts)
    else:
        console.print(f"Resources by provider: {_by_provider(summary.counts)} (by type: {VERBOSE_HINT})")

    if summary.pools:
        pools = Table(title="GPU pools", title_justify="left")
        for col in ("pool", "kind", "OS", "driver", "source", "instance types"):
            pools.add_column(col)
        for p in summary.pools:
            pools.add_row(p.name, p.kind, p.os, p.driver, p.driver_source, ", ".join(p.instance_types) or "?")
        console.print(pools)
    else:
        console.print("GPU pools: none")
    if summary.services:
        services = Table(title="Services and the pools they can reach", title_justify="left")
        for col in ("service", "kind", "CUDA", "GPUs", "reachable pools"):
            services.add_column(col)
        for s in summary.services:
            services.add_row(s.name, s.kind, s.cuda, str(s.gpus), ", ".join(s.pools) or "[red]none[/red]")
        console.print(services)
    else:
        console.print("GPU services: none")
    if summary.releases:
        console.print("Helm releases: " + ", ".join(f"{r.name} ({r.chart} {r.version}, ns {r.namespace})"
                                                  for r in summary.releases))

    console.print(f"Policy pack: {report.detail} (phase {summary.phase})")
    if api_server_line(report):
        console.print(api_server_line(report))
    if report.ran:
        keys = found.StackKeys(config.parsed, recording.resources, recording.project)
        listed = [f for f in shown(report) if verbose or not is_pending(f.violation)]
        for finding in listed:
            colour = "red" if finding.violation.enforcement == "mandatory" else "yellow"
            console.print(f"  [{colour}]{escape(found.line(finding, keys, verbose=verbose))}[/{colour}]")
        if not any(not is_pending(f.violation) for f in listed):
            console.print("  no mandatory or advisory finding")
        if (explained := found.legend(listed)) is not None:
            console.print(f"  [dim]{escape(explained)}[/dim]")
        for policy, reason in report.not_applicable:
            console.print(f"  [yellow]could not judge[/yellow] {policy}: {reason}")
        for line in run_notes(report):
            console.print(f"  [red]{line}[/red]")
        pending_phase = "preview" if report.stopped_by_preview else summary.phase
        if not verbose and (grouped := pending_line(report, pending_phase)) is not None:
            console.print(f"  [cyan]{grouped}[/cyan]")
        if verbose:
            for policy, entry in sorted(report.offline_only.items()):
                verdicts = "; ".join(f"{v['enforcement']}: {v['message']}" for v in entry["verdicts"]) or "no violation"
                console.print(f"  [cyan]offline only[/cyan] {policy} (the real engine sent `{{}}` in this phase): "
                              f"{verdicts}")
    if verbose:
        for line in emulated_lines(summary.emulated):
            console.print(f"[cyan]Emulated offline[/cyan] {line}")
    for line in unjudged_lines(report):
        console.print(f"[yellow]Unjudged[/yellow] {line}")
    for gap in not_unjudged(summary.not_seen_offline, report):
        console.print(f"[yellow]Not seen offline[/yellow] {gap['type']} {gap['urn']}: the real preview judges "
                      f"{gap['judged_by_real_preview']}; {gap['why']}")
    if cost:
        from tools.cost.section import terminal_line  # noqa: PLC0415 -- the cost section (issue 53)

        console.print(terminal_line(cost), soft_wrap=True, highlight=False, markup=False)
    if out_dir is not None:
        console.print(f"Wrote {out_dir}/resources.json, {out_dir}/manifests/ ({summary.objects} files), "
                      f"{out_dir}/summary.md")
    console.print(verdict_line(report, summary.refused), soft_wrap=True, style="bold")
