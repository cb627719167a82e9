"""`gpu-platform COMMAND [ARGS...]`: the project's commands under one name (`make program-venv` installs it).

`make preview` and `make program-venv` write `.venv/bin/gpu-platform` (the launcher `tools/bin/gpu-platform`),
which runs this module with the checkout that holds the virtualenv on the module path, from any working folder:

    .venv/bin/gpu-platform preview --stack dev              # tools.preview (docs/gate.md)
    .venv/bin/gpu-platform matrix check --os ... --driver ...  # tools.matrix (docs/matrix.md)
    .venv/bin/gpu-platform gate --today 2026-11-30           # tools.ci_gate (docs/ci-cd.md)
    /path/to/gpu-platform/.venv/bin/gpu-platform preview --program . --stack dev   # your own program

Each command is the module's own command line (its `--help`, its exit status: this module adds nothing); a
command with no module prints the list and exits 2.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Sequence

# command -> (module run as `python -m`, what it does): docs/README.md lists the same commands.
COMMANDS: dict[str, tuple[str, str]] = {
    "preview": ("tools.preview", "offline preview and policy gate of a Pulumi program and stack (docs/gate.md)"),
    "gate": ("tools.ci_gate", "the CI gate: every stack through the preview (docs/ci-cd.md)"),
    "cost": ("tools.cost", "what a stack bills a month, and `cost refresh` of the price table (docs/cost.md)"),
    "matrix": ("tools.matrix", "ask the driver / OS / CUDA / operator matrix (docs/matrix.md)"),
    "upstream": ("tools.upstream", "fill or verify the cache of pinned upstream files (docs/ci-cd.md)"),
    "comment": ("tools.ci_comment", "the pull-request comment for a failed `pulumi preview` (docs/ci-cd.md)"),
    "preview-access": ("tools.preview_access", "refuse a preview identity that can write the cluster "
                                               "(docs/ci-cd.md)"),
    "policy-docs": ("tools.policy_docs", "write docs/policies.md from the policy pack"),
}
PROG = "gpu-platform"


def usage() -> str:
    width = max(map(len, COMMANDS))
    rows = "\n".join(f"  {name:<{width}}  {what}" for name, (_, what) in COMMANDS.items())
    return (f"usage: {PROG} COMMAND [ARGS...]   ({PROG} COMMAND --help for each)\n\ncommands:\n{rows}\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help", "help"}:
        sys.stdout.write(usage())
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        sys.stderr.write(f"error: {PROG}: no command {command!r}; one of: {', '.join(COMMANDS)}\n\n{usage()}")
        return 2
    module = COMMANDS[command][0]
    sys.argv = [f"{PROG} {command}", *rest]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as done:  # the module's own exit status, unchanged
        code = done.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
