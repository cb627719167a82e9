"""Count the work of one offline preview, not its time: run as a script, it runs `python -m tools.preview ARGS`
in this process and writes what the preview did to a JSON file.

    python tests/tools/preview_work.py COUNTS.json -- --stack dev --json

The counts, each measured from outside the code it counts, so that they hold for any version of it:
- `parsed`: source files parsed by `ast.parse` in the preview's process (a program's modules; issue 44's
  regression parsed every module the run imported, again for each importer). Parses of text that is no file
  (`inspect.signature` reads a builtin's signature string with `ast.parse`) are not counted;
- `calls` and `bytes`: the analyzer gRPC calls the preview sent the policy pack, by method, and the serialized
  size of their requests (the stub `tools.engine.warm_pack` talks through is wrapped:
  `bench.pack_replay.observe_analyzer_calls`);
- `pack`: the pack's own count of its calls and of the policy validations it ran (`GPU_GUARD_WORK_FILE`, read by
  policies/gpu_guard/servicer.py);
- `resources`: the resources the program registered (the `--json` document's `resources`);
- `sdk_modules`: the Pulumi SDK packages the process loaded (pulumi_aws and pulumi_kubernetes load a subpackage
  on first use; one still lazy was never used), to compare with `program_modules.OWN_PROGRAM_SDK_MODULES`.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import runpy
import sys
import tempfile
import types
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def count(out: Path, preview_args: list[str]) -> int:
    sys.path.insert(0, str(REPO))
    from bench.pack_replay import observe_analyzer_calls  # noqa: PLC0415

    calls: Counter[str] = Counter()
    sent = [0]
    parsed = [0]
    real_parse = ast.parse

    def counting_parse(source: Any, filename: Any = "<unknown>", *args: Any, **kwargs: Any) -> Any:
        if Path(str(filename)).is_file():
            parsed[0] += 1
        return real_parse(source, filename, *args, **kwargs)

    def note(method: str, request: Any) -> None:
        calls[method] += 1
        sent[0] += request.ByteSize()

    observe_analyzer_calls(note)
    with tempfile.TemporaryDirectory() as tmp:
        pack_file = Path(tmp) / "pack.json"
        os.environ["GPU_GUARD_WORK_FILE"] = str(pack_file)
        ast.parse = counting_parse
        sys.argv = ["tools.preview", *preview_args]
        stdout = io.StringIO()
        code: Any = 0
        try:
            with contextlib.redirect_stdout(stdout):
                runpy.run_module("tools.preview", run_name="__main__", alter_sys=True)
        except SystemExit as exc:
            code = exc.code
        finally:
            ast.parse = real_parse
        pack = json.loads(pack_file.read_text(encoding="utf-8")) if pack_file.is_file() else {}
    document = json.loads(stdout.getvalue()) if stdout.getvalue().strip() else {}
    sdk_modules = sorted(
        name for name, module in list(sys.modules.items())
        if type(module) is types.ModuleType and hasattr(module, "__path__")
        and (name == "pulumi_eks" or name.startswith(("pulumi_aws.", "pulumi_kubernetes."))))
    out.write_text(json.dumps({
        "exit": code,
        "parsed": parsed[0],
        "calls": dict(sorted(calls.items())),
        "bytes": sent[0],
        "pack": pack,
        "resources": len(document.get("resources", ())),
        "sdk_modules": sdk_modules,
    }), encoding="utf-8")
    return 0


if __name__ == "__main__":
    separator = sys.argv.index("--")
    sys.exit(count(Path(sys.argv[1]), sys.argv[separator + 1:]))
