"""summary.md (`--out`), the job summary of `tools.ci_gate` and the gate's part of the pull-request comment
(`tools.ci_comment --gate`), rendered from the result document (`tools.preview.result`) alone.

In this order: the verdict; the mandatory findings; the advisories; one line each for what is pending and what
is unjudged, their rows folded in `<details>`; the GPU pools and the services that reach them; then the Helm
releases, the resources by type and the notes of the run, folded too. A section is a function of the document
(`SECTIONS`): a later section (a cost estimate) is one more function in the list.

Standard library only, but for the cost section (`cost`), which reads the price table's module: the cloud preview
jobs render the comment without the development tools, in the program's runtime.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

Doc = Mapping[str, Any]
Section = Callable[[Doc], list[str]]

HEADLINE = {"PASS": "PASS", "PASS_UNJUDGED": "PASS offline, components unjudged", "FAIL": "FAIL",
            "STACK_FILE_REFUSED": "STACK FILE REFUSED", "NOT_JUDGED": "NOT JUDGED", "REFUSED": "REFUSED"}
MARK = {"PASS": "✅", "PASS_UNJUDGED": "🟡", "FAIL": "❌", "STACK_FILE_REFUSED": "⛔", "NOT_JUDGED": "⚪",
        "REFUSED": "⛔"}


def cell(text: Any) -> str:
    """A table cell: one line, `|` escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    return lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


def details(summary: str, body: Sequence[str]) -> list[str]:
    """A folded block: GitHub renders the Markdown inside `<details>` when blank lines surround it."""
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>", ""]


def where(finding: Mapping[str, Any]) -> str:
    """Where to fix it: the stack key with its value, else the object as the engine names it."""
    if finding.get("stackKey"):
        return f"`{finding['stackKey']}`"
    obj = finding["object"]
    return f"{obj['type'].rsplit(':', 1)[-1]} '{obj['name']}'" if obj.get("type") else f"'{obj['name']}'"


def labels(finding: Mapping[str, Any]) -> str:
    return str(finding["label"]) + (", offline only" if finding.get("offlineOnly") else "")


def policy_config(doc: Doc, *, short: bool = False) -> str:
    """The policy config the verdict was judged with, and why; `short`: the file alone, unquoted."""
    used = doc.get("policyConfig") or {}
    if short:
        return f"policy config {used['path']}" if used.get("path") else "no policy config"
    if used.get("path"):
        how = "the stack's own" if used.get("how") == "stack default" else used.get("how")
        return f"policy config `{used['path']}` ({how})"
    return f"no policy config ({str(used.get('how', '')).removeprefix('none: ')})"


# --------------------------------------------------------------------------------------------------
# Sections, in order
# --------------------------------------------------------------------------------------------------


def verdict(doc: Doc) -> list[str]:
    v = doc["verdict"]
    lines = [f"# {MARK.get(v, '')} {HEADLINE.get(v, v)}: stack `{doc['stack']}`, phase `{doc['phase']}`", "",
             f"**{verdict_sentence(doc)}**", ""]
    what = [f"Stack file `{doc['stackFile']}`" if doc.get("stackFile") else f"Stack `{doc['stack']}`",
            policy_config(doc)]
    if doc.get("resources"):
        what.append(f"{len(doc['resources'])} resources, {doc.get('kubernetesObjects', 0)} Kubernetes objects")
    lines += ["; ".join(what) + ".", ""]
    for problem in doc.get("problems") or []:
        key = f"`{problem['key']}`: " if problem.get("key") else ""
        lines.append(f"- {key}{problem['message']}")
    for message in doc.get("realUpRefused") or []:
        lines += [f"- a real `pulumi up` of this stack file would be refused: {message}"]
    return lines + ([""] if doc.get("problems") or doc.get("realUpRefused") else [])


def _findings(doc: Doc, level: str, title: str) -> list[str]:
    found = [f for f in doc.get("findings") or [] if f["level"] == level]
    if not found:
        return []
    rows = [(f["policy"] + (f" (+ {f['twin']})" if f.get("twin") else ""), labels(f), where(f), f["message"],
             f.get("fix") or "") for f in found]
    return [f"## {title} ({len(found)})", "", *table(["policy", "when", "where to fix", "finding", "fix"], rows), ""]


def mandatory(doc: Doc) -> list[str]:
    return _findings(doc, "mandatory", "Mandatory findings: they block `pulumi up`")


def advisory(doc: Doc) -> list[str]:
    return _findings(doc, "advisory", "Advisories")


def waiting(doc: Doc) -> list[str]:
    """Pending and unjudged: one line each, the rows folded."""
    lines: list[str] = []
    pending = doc.get("pending") or []
    if pending:
        objects = len({o for p in pending for o in p["objects"]})
        rows = [f"- {line}" for line in pending_lines(pending)]
        lines += details(f"Pending: {len(pending)} polic{'y waits' if len(pending) == 1 else 'ies wait'} on {objects} "
                         f"object{'s' if objects != 1 else ''} (phase {doc['phase']})", rows)
    unjudged = doc.get("unjudged") or []
    if unjudged:
        rows = [f"- {line}" for line in unjudged_lines(unjudged)]
        lines += details(f"Unjudged: {len(unjudged)} component{'s' if len(unjudged) != 1 else ''} whose children "
                         "the offline gate did not build; `pulumi preview` judges them", rows)
    return lines


def pending_lines(pending: Sequence[Mapping[str, Any]]) -> list[str]:
    """Policies that wait for the same objects for the same reason on one line, with their count: the reason
    is each policy's own sentence with its name taken out (`cuda-driver-compatible waits on ...` -> `waits on ...`)."""
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for p in pending:
        reasons = tuple(r.removeprefix(f"{p['policy']} ") for r in p["reasons"])
        groups.setdefault((tuple(p["objects"]), reasons), []).append(p["policy"])
    lines = []
    for (objects, reasons), policies in groups.items():
        names = ", ".join(f"`{name}`" for name in policies)
        who = f"{len(policies)} policies ({names}) each" if len(policies) > 1 else names
        lines.append(f"{who} ({len(objects)} object{'s' if len(objects) != 1 else ''}): {'; '.join(reasons)}")
    return lines


def unjudged_lines(unjudged: Sequence[Mapping[str, Any]]) -> list[str]:
    """Components with the same reason and the same policies on one line, with their count."""
    groups: dict[tuple[str, str, tuple[str, ...]], list[Mapping[str, Any]]] = {}
    for u in unjudged:
        groups.setdefault((u["why"], u["basis"], tuple(u["policies"])), []).append(u)
    lines = []
    for (why, basis, policies), members in groups.items():
        by_type = Counter(m["type"] for m in members)
        names = ", ".join(f"{t} '{m['name']}'" if by_type[t] == 1 else f"'{m['name']}'" for t in by_type
                          for m in members if m["type"] == t)
        kinds = ", ".join(f"{n} {t}" for t, n in by_type.items() if n > 1)
        head = f"{len(members)} components ({kinds}: {names})" if len(members) > 1 else names
        n = len(policies)
        lines.append(f"{head}: {why}; {n} polic{'y' if n == 1 else 'ies'} could judge what "
                     f"{'they register' if len(members) > 1 else 'it registers'} ({basis}): {', '.join(policies)}")
    return lines


def pools(doc: Doc) -> list[str]:
    rows = [(p["name"], p["kind"], p["os"], p["driver"], p["driverSource"], ", ".join(p["instanceTypes"]) or "?")
            for p in doc.get("gpuPools") or []]
    if "gpuPools" not in doc:
        return []
    body = table(["pool", "kind", "OS", "driver", "driver source", "instance types"], rows) if rows else [
        "No GPU pools."]
    return ["## GPU pools", "", *body, ""]


def services(doc: Doc) -> list[str]:
    if "services" not in doc:
        return []
    rows = [(s["name"], s["kind"], s["cuda"], s["gpus"], ", ".join(s["pools"]) or "**none**")
            for s in doc["services"]]
    body = table(["service", "kind", "CUDA", "GPUs/replica", "reachable pools"], rows) if rows else [
        "No GPU services."]
    return ["## Services and the pools they can reach", "", *body, ""]


def run(doc: Doc) -> list[str]:
    """The rest, folded: Helm releases, resources by type, the policy pack and API server, what was not seen."""
    if doc["verdict"] == "REFUSED":
        return []
    body: list[str] = []
    pack = doc.get("policyPack") or {}
    body.append(f"- Policy pack: {pack.get('detail', '')} (phase `{doc['phase']}`).")
    if (api := api_server_line(doc)):
        body.append(f"- {api}.")
    body += [f"- `{n['policy']}` could not judge: {n['reason']}" for n in pack.get("notApplicable") or []]
    body += [f"- {note}" for note in run_notes(doc)]
    body += [f"- Not seen offline: `{g['type']}` '{g['urn'].rsplit('::', 1)[-1]}': the real preview judges "
             f"{g['judged_by_real_preview']}; {g['why']}." for g in doc.get("notSeenOffline") or []]
    if doc.get("helmReleases"):
        body += ["", *table(["Helm release", "chart", "version", "namespace"],
                            [(r["name"], r["chart"], r["version"], r["namespace"]) for r in doc["helmReleases"]])]
    by_type = Counter(r["type"] for r in doc.get("resources") or [])
    body += ["", *table(["resource type", "count"], [(f"`{t}`", n) for t, n in sorted(by_type.items())])]
    return details("Helm releases, resources by type, and how the gate ran", body)


def cost(doc: Doc) -> list[str]:
    """The monthly estimate (issue 53, docs/cost.md), when the document has one. Its renderer reads the price table's
    figure names, so this one section needs the program's runtime (the cloud preview jobs install it)."""
    if not doc.get("cost"):
        return []
    from tools.cost.section import markdown  # noqa: PLC0415

    return [*markdown(doc["cost"]).rstrip("\n").splitlines(), ""]


SECTIONS: tuple[Section, ...] = (verdict, mandatory, advisory, waiting, pools, services, cost, run)


def render(doc: Doc, sections: Sequence[Section] = SECTIONS) -> str:
    lines: list[str] = []
    for section in sections:
        lines += section(doc)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------
# Shared with the terminal (tools/preview/render.py)
# --------------------------------------------------------------------------------------------------


def verdict_sentence(doc: Mapping[str, Any]) -> str:
    """`verdict: FAIL, exit 1 (...): 1 mandatory, ...`: the verdict as every surface words it."""
    c = doc["counts"]
    counts = f"{c['mandatory']} mandatory, {c['advisory']} advisory finding(s), {c['pending']} pending"
    unjudged = (f"{c['unjudged']} component{'s' if c['unjudged'] != 1 else ''} unjudged: `pulumi preview` judges "
                "them") if c["unjudged"] else ""
    verdict, code = doc["verdict"], doc["exitCode"]
    if verdict == "REFUSED":
        n = len(doc.get("problems") or [])
        return f"verdict: REFUSED, exit 2 (nothing was judged: {n} problem{'s' if n != 1 else ''} to fix first)"
    if verdict == "NOT_JUDGED":
        return f"verdict: NOT JUDGED, exit {code}: {doc['policyPack']['detail']}"
    also = "".join(["; a real `pulumi up` of this stack file is refused too (stack file warning above)"
                    if doc.get("realUpRefused") else "", f"; {unjudged}" if unjudged else ""])
    if verdict == "FAIL":
        return f"verdict: FAIL, exit {code} (a mandatory finding blocks `pulumi up`{also}): {counts}"
    if verdict == "STACK_FILE_REFUSED":
        return ("verdict: STACK FILE REFUSED, exit 0 (no mandatory finding, but a real `pulumi up` of this stack "
                f"file is refused before anything is created: fix the stack file warning above"
                f"{f'; {unjudged}' if unjudged else ''}): {counts}")
    if verdict == "PASS_UNJUDGED":
        return f"verdict: PASS offline; {unjudged} (exit 0: no mandatory finding in what the gate judged): {counts}"
    return f"verdict: PASS, exit 0 (no mandatory finding; nothing here blocks `pulumi up`): {counts}"


def run_notes(doc: Doc) -> list[str]:
    """How a `pulumi up` ended, when it ended early (`--phase up`)."""
    pack = doc.get("policyPack") or {}
    notes = []
    if pack.get("stoppedByPreview"):
        notes.append("`pulumi up` stopped in the preview it runs first: nothing was created "
                     "(pulumi/pulumi pkg/backend/apply.go lines 287-303)")
    if pack.get("cancelledAt"):
        notes.append(f"`pulumi up` cancelled at {pack['cancelledAt']}: a mandatory resource violation; later "
                     "resources were not analyzed and no stack policy ran (deployment_executor.go lines 309-315), "
                     "but the steps already dispatched ran to completion: resources before it may exist "
                     "(step_executor.go, WaitForCompletion waits for every in-flight chain)")
    return notes


def api_server_line(doc: Doc) -> str:
    """What the API server and Helm checks covered (tools.apiserver); their verdicts are among the findings.

    Without the upstream cache (its `apiserver-not-checked` advisory) only the built-in kinds were checked: the
    line says so, and what was not, in the same sentence.
    """
    api = doc.get("apiServer")
    if not api:
        return ""
    skipped = len(api.get("transitionRulesSkipped") or [])
    if any(f["policy"] == "apiserver-not-checked" for f in doc.get("findings") or []):
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
