"""`python -m tools.preview`'s command line (tools/preview/command.py runs it; CONFIG.md section 3)."""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

from tools.engine.gate import ALL_PHASES
from tools.preview.result import PolicyConfigUse
from tools.preview.stack_files import PreviewError

REPO = Path(__file__).resolve().parents[2]
NO_POLICY_CONFIG = "none"


def policy_config_for(arg: str | None, program_dir: Path, stack: str) -> tuple[Path | None, PolicyConfigUse]:
    """The policy config a run judges with, and how it was chosen: `--policy-config FILE`; `--policy-config none`
    (judge without one); else the stack's own `policies/config/<stack>.json` of the program folder where it exists,
    as `make preview` and `make gate` pass it, so that a stack gets one verdict however it is run."""
    if arg == NO_POLICY_CONFIG:
        return None, PolicyConfigUse(None, "none: --policy-config none")
    own = Path("policies") / "config" / f"{stack}.json"
    if arg:
        path = Path(arg).resolve()
        if not path.is_file():
            raise PreviewError(f"--policy-config {arg}: no such file; name a policy config file (the format of "
                               "`pulumi preview --policy-pack-config`), or `none` to judge without one")
        if path == (program_dir / own).resolve():  # the stack's own, named (as make and make gate name it)
            return path, PolicyConfigUse(str(own), "stack default")
        return path, PolicyConfigUse(arg, "--policy-config")
    if (program_dir / own).is_file():
        return (program_dir / own).resolve(), PolicyConfigUse(str(own), "stack default")
    return None, PolicyConfigUse(None, f"none: the program has no {own}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpu-platform preview",  # .venv/bin/gpu-platform preview (tools/cli.py)
        description="Preview a Pulumi Python program offline under recording mocks and run the policy pack.",
    )
    parser.add_argument("--stack", default="dev", help="read Pulumi.STACK.yaml from the program folder (default dev)")
    parser.add_argument("--config-file", type=Path, help="use this Pulumi.<stack>.yaml-format file instead")
    parser.add_argument("--program", type=Path, default=REPO, help="the Pulumi program folder (default: this repo)")
    parser.add_argument("--phase", choices=ALL_PHASES, default="preview",
                        help="preview: first preview of a new stack, computed outputs unknown, Kubernetes objects "
                             "without properties (default); update: preview of an existing stack; up: the first "
                             "`pulumi up` (the CLI's preview, then the update; see --skip-preview); analyze: "
                             "`pulumi policy analyze` over the stack's existing state (see --state)")
    parser.add_argument("--state", type=Path, metavar="FILE",
                        help="with --phase analyze: a `pulumi stack export` document to analyze (as `pulumi policy "
                             "analyze --file`); without it, the state the program's first `pulumi up` leaves")
    parser.add_argument("--cluster-replaced", action="store_true",
                        help="with --phase update: the preview of a change that replaces the EKS cluster (its "
                             "endpoint, CA and kubeconfig unknown, every Kubernetes object on its provider `{}`)")
    parser.add_argument("--changed", action="append", default=[], metavar="NAME",
                        help="with --phase update: a resource (logical name or URN) the change updates, whose "
                             "computed outputs are unknown in the preview; repeat for several")
    parser.add_argument("--skip-preview", action="store_true",
                        help="how `pulumi up` runs: with --skip-preview (the Automation API, pulumi/actions) stack "
                             "policies act only after every step; without (the CLI default) a preview with the pack "
                             "comes first and stops a mandatory violation before anything is created")
    parser.add_argument("--stack-outputs", action="append", default=[], metavar="NAME=FILE",
                        help="another stack's outputs, for the program's StackReference to NAME (names resolve as "
                             "the engine resolves them: stack is <this org>/<this project>/stack, org/stack is "
                             "org/<this project>/stack); FILE as `pulumi stack output --json --show-secrets` writes "
                             "it. Without it, what depends on that reference is pending. Repeat for several stacks")
    parser.add_argument("--today", type=_iso_date, metavar="YYYY-MM-DD",
                        help="judge every lifecycle at this date (default: the policy config's today, else the "
                             "real date)")
    parser.add_argument("--policy-config", metavar="FILE|none",
                        help="policy configuration, as for `pulumi preview --policy-pack-config` (default: the "
                             "program's policies/config/STACK.json where it exists, as make preview and make gate "
                             "pass it; `none`: judge without one)")
    parser.add_argument("--out", type=Path, help="write resources.json, manifests/*.yaml and summary.md here")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout and nothing else")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="human output in full: every resource type, each pending advisory, what only the "
                             "offline gate judged, the emulated children (--json always holds all of it)")
    return parser


def _iso_date(text: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date; write it as YYYY-MM-DD (e.g. 2026-11-30)") from None


