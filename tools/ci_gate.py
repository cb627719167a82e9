"""`python -m tools.ci_gate` (`make gate`): the offline gate CI runs, every stack through `tools.preview`.

For each stack (every `Pulumi.<stack>.yaml` of the program, or the `--stack` names) and each phase it
runs the offline command line of CONFIG.md section 3 in a fresh interpreter, exactly as
`make preview STACK=S PHASE=P TODAY=D OUT=OUT/S/P` does:

    python -m tools.preview --stack S --phase P [--today D] [--policy-config policies/config/S.json]
                            --out OUT/S/P --json

Two phases by default, the two a pull request meets: `preview` is the first `pulumi preview` of a
stack that does not exist yet (every computed output unknown: a policy that needs one says it cannot
run); `update` is every later `pulumi preview` of the existing stack, outputs known. `up` is left out:
it reproduces a real `pulumi up`, which the shipped stacks refuse on purpose until their
documentation values (endpoint CIDRs, example account ids) are replaced.

It prints each run's `summary.md`, appends it to the file named by `$GITHUB_STEP_SUMMARY` when that
is set (the job summary of a GitHub Actions run), and ends with one row per stack and phase.

    python -m tools.ci_gate [--stack NAME ...] [--phase P ...] [--today YYYY-MM-DD] [--out DIR] [--summary FILE]

Exit status, the worst over the runs: 0 no mandatory violation; 1 at least one mandatory
violation; 2 a stack's configuration or program was rejected, or the preview failed.

`--today` pins the date every lifecycle is judged at, so a pull request's result does not change
with the calendar; without it the previews judge at the real date (the weekly calendar run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TextIO

from tools.engine.gate import PHASES
from tools.preview.command import EXIT_MANDATORY, EXIT_OK, EXIT_REJECTED
from tools.preview.summary_md import HEADLINE

# The exit codes and phases are tools.preview's and tools.engine.gate's own; re-exported for the workflows' tests.
__all__ = ["DEFAULT_PHASES", "EXIT_MANDATORY", "EXIT_OK", "EXIT_REJECTED", "PHASES", "main"]

REPO = Path(__file__).resolve().parent.parent
POLICY_CONFIG_DIR = Path("policies") / "config"
SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
DEFAULT_PHASES = ("preview", "update")


class GateUsageError(Exception):
    """A bad argument; the message names it and the fix (exit 2, nothing runs)."""


@dataclass(frozen=True)
class StackResult:
    stack: str
    phase: str
    status: int
    mandatory: int
    advisory: int
    summary: str  # summary.md as tools.preview wrote it, or the rejection
    error: str = ""
    pending: int = 0  # policies that wait (the document's `counts.pending`)
    refused: bool = False  # a real `pulumi up` of the stack file would be refused (`realUpRefused`; phase up)
    unjudged: int = 0  # components whose children the gate did not build (`counts.unjudged`)
    verdict_word: str = ""  # the document's `verdict`

    @property
    def verdict(self) -> str:
        """The preview's own verdict, in the words of summary.md's headline (`tools.preview.summary_md.HEADLINE`)."""
        if self.status == EXIT_REJECTED:
            return "rejected"
        word = self.verdict_word or ("FAIL" if self.status == EXIT_MANDATORY else "PASS")
        return HEADLINE.get(word, word)


def discover_stacks(program_dir: Path) -> list[str]:
    """Every stack that has a `Pulumi.<stack>.yaml` in the program folder, sorted."""
    return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in program_dir.glob("Pulumi.*.yaml"))


def policy_config_for(stack: str, program_dir: Path) -> Path | None:
    """The stack's own policy config (`policies/config/<stack>.json`), which `make preview` names too.

    Relative to the repository for this repository's program (as docs/ci-cd.md spells it), else absolute.
    """
    path = POLICY_CONFIG_DIR / f"{stack}.json"
    if not (program_dir / path).is_file():
        return None
    return path if program_dir == REPO else program_dir / path


def preview_command(stack: str, *, phase: str = "preview", today: date | None, out_dir: Path,
                    program_dir: Path = REPO) -> list[str]:
    """The CONFIG.md section 3 command line for one stack, as docs/ci-cd.md and `make preview` spell it.

    It runs from the repository root (where `tools` is importable); another program is named by --program.
    """
    argv = [sys.executable, "-m", "tools.preview", "--stack", stack]
    if program_dir != REPO:
        argv += ["--program", str(program_dir)]
    argv += ["--phase", phase]
    if today is not None:
        argv += ["--today", today.isoformat()]
    policy_config = policy_config_for(stack, program_dir)
    if policy_config is not None:
        argv += ["--policy-config", str(policy_config)]
    return [*argv, "--out", str(out_dir), "--json"]


def _clear_previous(out_dir: Path) -> None:
    """Remove what an earlier run wrote, so a rejected stack never reports a stale summary."""
    for name in ("summary.md", "resources.json"):
        (out_dir / name).unlink(missing_ok=True)
    for manifest in (out_dir / "manifests").glob("*.yaml"):
        manifest.unlink()


def run_stack(stack: str, *, phase: str, today: date | None, out_root: Path, program_dir: Path,
              stderr: TextIO) -> StackResult:
    out_dir = (out_root / stack / phase).resolve()
    _clear_previous(out_dir)
    argv = preview_command(stack, phase=phase, today=today, out_dir=out_dir, program_dir=program_dir)
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
    stderr.write(proc.stderr)
    summary_path = out_dir / "summary.md"
    if proc.returncode not in (EXIT_OK, EXIT_MANDATORY) or not summary_path.is_file():
        reason = proc.stderr.strip() or f"tools.preview exited {proc.returncode} and wrote no {summary_path}"
        # A refused stack file's summary.md is its REFUSED document, each problem with its key (written this run:
        # `_clear_previous` removed any older one).
        refused = summary_path.read_text(encoding="utf-8") if summary_path.is_file() else ""
        return StackResult(stack, phase, EXIT_REJECTED, 0, 0, summary=refused, error=reason)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        return StackResult(stack, phase, EXIT_REJECTED, 0, 0, summary="",
                           error=f"tools.preview --json printed no JSON document ({exc})")
    counts = doc["counts"]
    mandatory, advisory, pending = counts["mandatory"], counts["advisory"], counts["pending"]
    # The exit status and the document must agree; a disagreement is a defect of the preview, not a pass.
    if doc.get("exitCode") != proc.returncode or (mandatory > 0) != (proc.returncode == EXIT_MANDATORY):
        return StackResult(stack, phase, EXIT_REJECTED, mandatory, advisory, summary="", pending=pending,
                           error=f"tools.preview exited {proc.returncode} with {mandatory} mandatory violation(s) "
                                 f"and a document that says exit {doc.get('exitCode')}")
    return StackResult(stack, phase, proc.returncode, mandatory, advisory, pending=pending,
                       refused=bool(doc.get("realUpRefused")), summary=summary_path.read_text(encoding="utf-8"),
                       unjudged=counts["unjudged"], verdict_word=doc["verdict"])


def overview_markdown(results: Sequence[StackResult], today: date | None) -> str:
    when = f"lifecycles judged at {today.isoformat()} (--today)" if today is not None else (
        f"lifecycles judged at the real date ({date.today().isoformat()})")
    stacks = len({r.stack for r in results})
    lines = [f"# Offline gate: {stacks} stack(s), {when}", "",
             "| stack | phase | result | mandatory | advisory | pending | unjudged |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r.stack} | {r.phase} | {r.verdict} | {r.mandatory} | {r.advisory} | {r.pending} | {r.unjudged} |"
              for r in results]
    return "\n".join(lines) + "\n"


def stack_markdown(result: StackResult) -> str:
    if result.summary:
        return result.summary
    fence = "```"
    return (f"# Offline preview: stack `{result.stack}`, phase {result.phase}\n\n"
            f"Rejected:\n\n{fence}\n{result.error}\n{fence}\n")


def gate_status(results: Sequence[StackResult]) -> int:
    return max((r.status for r in results), default=EXIT_OK)


def _parse_today(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise GateUsageError(
            f"--today {value!r} is not an ISO date; use YYYY-MM-DD (e.g. 2026-11-30), or leave it out to judge "
            "at the real date"
        ) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpu-platform gate",
                                     description="Run the offline preview and policy gate for every stack.")
    parser.add_argument("--stack", action="append", default=[],
                        help="a stack to gate (repeatable; default: every Pulumi.<stack>.yaml)")
    parser.add_argument("--phase", action="append", default=[], choices=PHASES,
                        help="an engine moment to reproduce (repeatable; default: preview and update)")
    parser.add_argument("--today", default="",
                        help="judge every lifecycle at this ISO date (empty or absent: the real date)")
    parser.add_argument("--out", type=Path, default=Path("out"),
                        help="write OUT/<stack>/<phase>/ per run (default out)")
    parser.add_argument("--summary", type=Path, default=None,
                        help=f"append the markdown summary here (default: ${SUMMARY_ENV} when set)")
    parser.add_argument("--program", type=Path, default=REPO, help="the Pulumi program folder (default: this repo)")
    return parser


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    args = _parser().parse_args(argv)
    program_dir = args.program.resolve()
    try:
        today = _parse_today(args.today) if args.today else None
        stacks = list(dict.fromkeys(args.stack)) or discover_stacks(program_dir)
        if not stacks:
            raise GateUsageError(f"{program_dir}: no Pulumi.<stack>.yaml file; add one or pass --program DIR")
        missing = [s for s in stacks if not (program_dir / f"Pulumi.{s}.yaml").is_file()]
        if missing:
            raise GateUsageError(
                f"--stack {', '.join(missing)}: no {', '.join(f'Pulumi.{s}.yaml' for s in missing)} in "
                f"{program_dir}; available: {', '.join(discover_stacks(program_dir)) or 'none'}"
            )
    except GateUsageError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_REJECTED
    summary_file = args.summary or (Path(os.environ[SUMMARY_ENV]) if os.environ.get(SUMMARY_ENV) else None)
    out_root = args.out if args.out.is_absolute() else Path.cwd() / args.out

    phases = list(dict.fromkeys(args.phase)) or list(DEFAULT_PHASES)
    results = []
    for stack in stacks:
        for phase in phases:
            result = run_stack(stack, phase=phase, today=today, out_root=out_root, program_dir=program_dir,
                               stderr=err)
            out.write(stack_markdown(result) + "\n")
            results.append(result)
    overview = overview_markdown(results, today)
    out.write(overview)
    if summary_file is not None:
        with summary_file.open("a", encoding="utf-8") as handle:
            handle.write(overview + "\n")
            for result in results:
                handle.write(stack_markdown(result) + "\n")
    return gate_status(results)


if __name__ == "__main__":
    sys.exit(main())
