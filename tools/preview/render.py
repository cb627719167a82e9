"""What `tools.preview` writes and prints, all from the result document (`tools.preview.result`): the terminal
summary, and with `--out` resources.json (the document), summary.md (`tools.preview.summary_md`) and one YAML
manifest per Kubernetes object.

The terminal output is quiet by default: one line per finding; the pending policies on one line; components
unjudged for the same reason folded into one line with their count; identical lines once, with a count. The
first line names the verdict, so two programs that differ in it differ there; the last line is the verdict in
full. `--verbose` adds every resource type, each pending policy with its objects, and the emulated children.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import yaml
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tools.engine.mocks.eks_children import PULUMI_EKS_DESCRIBE
from tools.preview import summary_md
from tools.preview.model import REAL_UP_REFUSED, GateReport, Recording
from tools.preview.result import counts
from tools.preview.summary_md import api_server_line, run_notes, verdict_sentence, where
from tools.preview.views import kubernetes_objects

Doc = Mapping[str, Any]
VERBOSE_HINT = "--verbose, or make preview VERBOSE=1"

# What the labels of a finding line mean; the summary explains those it used, once.
LABELS = {
    "before-create": "a real `pulumi up` stops at it before anything is created (a resource policy, before the "
                     "resource's step; or a stack policy that the preview `pulumi up` runs first reaches)",
    "after-update": "a real `pulumi up` meets it only after every resource was created or updated (a stack policy "
                    "the preview does not reach, or `pulumi up --skip-preview`): fix it before deploying",
    "offline only": "in this phase the real engine hands the policy the Kubernetes objects without properties, so "
                    "only the offline gate judged them here; the real engine judges them once the cluster exists",
}

# --------------------------------------------------------------------------------------------------
# Files (--out)
# --------------------------------------------------------------------------------------------------


def _slug(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", value) or "_"


def manifest_filename(obj: Mapping[str, Any]) -> str:
    """`<kind>-<namespace>-<name>.yaml`; `cluster` stands for the namespace of a cluster-scoped object."""
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace") or "cluster"
    return f"{_slug(str(obj['kind']).lower())}-{_slug(str(namespace))}-{_slug(str(metadata.get('name')))}.yaml"


def write_out(out_dir: Path, doc: Doc, recording: Recording | None) -> None:
    """`--out DIR`: resources.json (the document), summary.md, manifests/<kind>-<namespace>-<name>.yaml."""
    manifests = out_dir / "manifests"
    manifests.mkdir(parents=True, exist_ok=True)
    for stale in manifests.glob("*.yaml"):
        stale.unlink()
    (out_dir / "resources.json").write_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
    seen: dict[str, str] = {}
    for res, obj in kubernetes_objects(recording.resources if recording is not None else ()):
        filename = manifest_filename(obj)
        if filename in seen:
            raise ValueError(f"{res.urn} and {seen[filename]} render to the same manifest {filename}")
        seen[filename] = res.urn
        (manifests / filename).write_text(yaml.safe_dump(obj, sort_keys=False, default_flow_style=False),
                                          encoding="utf-8")
    (out_dir / "summary.md").write_text(summary_md.render(doc), encoding="utf-8")


# --------------------------------------------------------------------------------------------------
# Lines
# --------------------------------------------------------------------------------------------------


def finding_line(finding: Mapping[str, Any], *, verbose: bool = False) -> str:
    """`mandatory gpu-nodes-tainted [before-create] gpuNodeGroups[0] = ...: what was found. Fix: how.`"""
    twin = f" (+ {finding['twin']})" if finding.get("twin") else ""
    text = f"{finding['level']} {finding['policy']}{twin} [{summary_md.labels(finding)}] {where(finding).strip('`')}: "
    text += str(finding["message"]).rstrip(".") + "."
    if finding.get("fix"):
        text += f" Fix: {finding['fix']}."
    extra = [x for x in (finding.get("description"), f"source: {finding['source']}" if finding.get("source") else "")
             if x]
    if verbose and extra:
        text += f" ({'; '.join(extra)})"
    return text


def legend(found: Sequence[Mapping[str, Any]]) -> str | None:
    """The labels the listed findings carry, each explained once."""
    used = [label for label in LABELS if any(label in summary_md.labels(f) for f in found)]
    return ("labels: " + "; ".join(f"{label}: {LABELS[label]}" for label in used)) if used else None


def pending_line(doc: Doc) -> str | None:
    """The pending policies of the run as one line: how many wait, on what, and until when."""
    pending = doc.get("pending") or []
    if not pending:
        return None
    phase = "preview" if (doc.get("policyPack") or {}).get("stoppedByPreview") else doc["phase"]
    found = sum(p["offlineFindings"] for p in pending)
    verdict = (f"; the offline gate judged them from the program's values: "
               f"{f'{found} finding(s), listed above' if found else 'no violation'}")
    unseen = [p for p in pending if any(r.startswith(f"{p['policy']} is pending offline") for r in p["reasons"])]
    waits = len(pending) - len(unseen)
    parts = []
    if waits:
        parts.append(f"{waits} stack polic{'y' if waits == 1 else 'ies'} wait for Kubernetes objects that have no "
                     "properties while their provider's kubeconfig is not known, and judge them once it is"
                     f"{verdict}")
    if unseen:
        parts.append(f"{len(unseen)} polic{'y waits' if len(unseen) == 1 else 'ies wait'} on what the offline gate did "
                     "not see")
    return f"pending in phase {phase}: {'; '.join(parts)} (each: {VERBOSE_HINT})"


def folded(lines: Iterable[str]) -> list[str]:
    """Identical lines once, in order, with their count."""
    seen = Counter(lines)
    return [f"{line} ({seen[line]} times)" if seen[line] > 1 else line for line in dict.fromkeys(seen)]


def headline(doc: Doc) -> str:
    """The first line: the stack, and the verdict in a word with its counts."""
    c = doc["counts"]
    word = summary_md.HEADLINE.get(doc["verdict"], doc["verdict"])
    return (f"Offline preview of stack {doc['stack']} ({doc.get('stackFile', '?')}, phase {doc['phase']}, "
            f"{summary_md.policy_config(doc, short=True)}): {word}: {c['mandatory']} mandatory, "
            f"{c['advisory']} advisory, {c['pending']} pending, {c['unjudged']} unjudged; "
            f"{len(doc.get('resources') or [])} resources, {doc.get('kubernetesObjects', 0)} Kubernetes objects")


def _by_provider(doc: Doc) -> str:
    providers = Counter(r["type"].split(":", 1)[0] for r in doc.get("resources") or [])
    return ", ".join(f"{n} {provider}" for provider, n in sorted(providers.items()))


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


def verdict_line(report: GateReport, refused: Sequence[str] = ()) -> str:
    """The verdict sentence of a report alone (the document's `verdict_sentence`, for callers without one)."""
    from tools.preview.result import verdict_of  # noqa: PLC0415

    c = counts(report)
    verdict, code = verdict_of(report, c["mandatory"], bool(refused))
    return verdict_sentence({"verdict": verdict, "exitCode": code, "counts": c, "realUpRefused": list(refused),
                             "policyPack": {"detail": report.detail}})


# --------------------------------------------------------------------------------------------------
# The terminal
# --------------------------------------------------------------------------------------------------


def print_summary(stream: TextIO, doc: Doc, out_dir: Path | None, *, verbose: bool = False) -> None:
    """The human output of one result document: the verdict in a word first, the verdict in full last."""
    console = Console(file=stream, highlight=False, soft_wrap=False, width=max(100, Console(file=stream).width))

    def say(text: str, style: str = "") -> None:  # one line, never wrapped: a line a reader and grep can find
        console.print(f"[{style}]{escape(text)}[/{style}]" if style else escape(text), soft_wrap=True)

    say(headline(doc), "bold")
    for message in doc.get("realUpRefused") or []:
        say(f"stack file warning: {REAL_UP_REFUSED}{message} (the offline gate runs in no real account, so it "
            "judges the update all the same; fix the stack file before a real `pulumi up`)", "bold red")
    if doc["verdict"] == "REFUSED":
        for problem in doc.get("problems") or []:
            say(f"error: {problem['message']}", "red")
        say(verdict_sentence(doc), "bold")
        return
    if verbose:
        by_type = Table(title="Resources by type", title_justify="left")
        by_type.add_column("type")
        by_type.add_column("count", justify="right")
        for type_, n in sorted(Counter(r["type"] for r in doc["resources"]).items()):
            by_type.add_row(type_, str(n))
        console.print(by_type)
    else:
        say(f"Resources by provider: {_by_provider(doc)} (by type: {VERBOSE_HINT})")
    _tables(console, doc)
    if doc.get("helmReleases"):
        say("Helm releases: " + ", ".join(f"{r['name']} ({r['chart']} {r['version']}, ns {r['namespace']})"
                                          for r in doc["helmReleases"]))
    pack = doc["policyPack"]
    say(f"Policy pack: {pack['detail']} (phase {doc['phase']})")
    if api_server_line(doc):
        say(api_server_line(doc))
    if pack["ran"]:
        for finding in doc["findings"]:
            say(f"  {finding_line(finding, verbose=verbose)}", "red" if finding["level"] == "mandatory" else "yellow")
        if not doc["findings"]:
            say("  no mandatory or advisory finding")
        if (explained := legend(doc["findings"])) is not None:
            say(f"  {explained}", "dim")
        for item in pack["notApplicable"]:
            say(f"  could not judge {item['policy']}: {item['reason']}", "yellow")
        for note in run_notes(doc):
            say(f"  {note}", "red")
        if verbose:
            for line in summary_md.pending_lines(doc["pending"]):
                say(f"  pending {line.replace('`', '')}", "cyan")
        elif (grouped := pending_line(doc)) is not None:
            say(f"  {grouped}", "cyan")
    if verbose:
        for line in emulated_lines(doc.get("emulatedChildren") or []):
            say(f"Emulated offline {line}", "cyan")
    for line in summary_md.unjudged_lines(doc.get("unjudged") or []):
        say(f"Unjudged {line}; `pulumi preview` judges them", "yellow")
    gaps = [f"Not seen offline {g['type']} '{g['urn'].rsplit('::', 1)[-1]}': the real preview judges "
            f"{g['judged_by_real_preview']}; {g['why']}" for g in doc.get("notSeenOffline") or []]
    for line in folded(gaps):
        say(line, "yellow")
    if doc.get("cost"):
        from tools.cost.section import terminal_line  # noqa: PLC0415 -- the cost section (issue 53); docs/cost.md

        say(terminal_line(doc["cost"]))
    if out_dir is not None:
        say(f"Wrote {out_dir}/resources.json, {out_dir}/manifests/ ({doc.get('kubernetesObjects', 0)} files), "
            f"{out_dir}/summary.md")
    say(verdict_sentence(doc), "bold")


def _tables(console: Console, doc: Doc) -> None:
    if doc.get("gpuPools"):
        pools = Table(title="GPU pools", title_justify="left")
        for col in ("pool", "kind", "OS", "driver", "source", "instance types"):
            pools.add_column(col)
        for p in doc["gpuPools"]:
            pools.add_row(p["name"], p["kind"], p["os"], p["driver"], p["driverSource"],
                          ", ".join(p["instanceTypes"]) or "?")
        console.print(pools)
    else:
        console.print("GPU pools: none")
    if doc.get("services"):
        services = Table(title="Services and the pools they can reach", title_justify="left")
        for col in ("service", "kind", "CUDA", "GPUs", "reachable pools"):
            services.add_column(col)
        for s in doc["services"]:
            reach = ", ".join(s["pools"]) or "[red]none[/red]"
            services.add_row(s["name"], s["kind"], s["cuda"], str(s["gpus"]), reach)
        console.print(services)
    else:
        console.print("GPU services: none")
