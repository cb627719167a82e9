"""The TypeScript example as its user's tools judge it: `tsc --strict` over examples/typescript/index.ts, against
the declarations of the package's Node.js SDK (generated from the schema the plugin serves:
tests/provider/languages/nodejs_declarations.py) and the real @pulumi/pulumi, @pulumi/kubernetes and @pulumi/aws
declarations, all pinned in tests/provider/languages/typescript/package-lock.json (`npm ci` there; .ci/run does it).

Without those tools the test skips with its reason (the skip summary names the command); under CI=true it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from provider.host import schema
from tests.provider.languages.nodejs_declarations import declarations, package_name
from tests.shared import REPO

TOOLS = Path(__file__).parent / "typescript"
MODULES = TOOLS / "node_modules"
TSC = MODULES / "typescript" / "bin" / "tsc"
EXAMPLE = REPO / "examples" / "typescript" / "index.ts"
# The compiler options of Pulumi's TypeScript project template (pulumi/templates typescript/tsconfig.json), strict.
OPTIONS = {"strict": True, "target": "es2020", "module": "commonjs", "moduleResolution": "node", "noEmit": True,
           "noImplicitReturns": True, "noFallthroughCasesInSwitch": True, "forceConsistentCasingInFileNames": True}


def _tools() -> None:
    missing = [str(p.relative_to(REPO)) for p in (TSC, MODULES / "@pulumi" / "pulumi", MODULES / "@pulumi" /
                                                   "kubernetes", MODULES / "@pulumi" / "aws") if not p.exists()]
    node = shutil.which("node")
    if missing or node is None:
        reason = (f"the TypeScript tools of {TOOLS.relative_to(REPO)} are not installed "
                  f"({', '.join(missing) or 'node'} missing); run: npm ci --prefix {TOOLS.relative_to(REPO)}")
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)


def tsc(tmp_path: Path, sources: list[Path], sdk: str) -> subprocess.CompletedProcess[str]:
    """`tsc --strict -p` over `sources`, the package SDK declared by `sdk`, the pinned @pulumi packages."""
    package = tmp_path / "sdk"
    package.mkdir()
    (package / "index.d.ts").write_text(sdk)
    config = {"compilerOptions": {**OPTIONS, "baseUrl": str(MODULES), "typeRoots": [str(MODULES / "@types")],
                                  "types": ["node"],
                                  "paths": {package_name(schema()): [str(package / "index.d.ts")],
                                            "@pulumi/*": [str(MODULES / "@pulumi" / "*")]}},
              "files": [str(s) for s in sources]}
    project = tmp_path / "tsconfig.json"
    project.write_text(json.dumps(config, indent=2))
    return subprocess.run(["node", str(TSC), "--strict", "-p", str(project), "--pretty", "false"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, check=False)


# Each a copy of the example with one thing a user could get wrong; tsc must refuse each, in its own file.
BROKEN = {
    "no_release.ts": ("    karpenterRelease: karpenter,\n", ""),  # the ordering reference is required
    "bad_choice.ts": ('os: "bottlerocket"', 'os: "bottlerockt"'),  # a choice outside the schema's enum
    "old_get.ts": ('Release.get("karpenter", "karpenter/karpenter", { provider })',  # get(name, id, opts?)
                   'Release.get("karpenter", "karpenter/karpenter", undefined, { provider })'),
    "old_import.ts": ('from "@gpu-platform/gpu-platform"', 'from "@pulumi/gpu-platform"'),  # not the SDK's name
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """One `tsc --strict` run over the example and its broken copies: the error lines of each file."""
    _tools()
    tmp_path = tmp_path_factory.mktemp("tsc")
    text = EXAMPLE.read_text()
    sources = [EXAMPLE]
    for name, (old, new) in BROKEN.items():
        assert old in text, (name, old)
        (tmp_path / name).write_text(text.replace(old, new, 1))
        sources.append(tmp_path / name)
    done = tsc(tmp_path, sources, declarations(schema()))
    errors: dict[str, list[str]] = {source.name: [] for source in sources}
    last: list[str] | None = None
    for line in done.stdout.splitlines():
        if ": error TS" in line:
            last = errors.setdefault(Path(line.split("(", 1)[0]).name, [])
            last.append(line)
        elif line.startswith(" ") and last:  # the error's detail lines ("Property 'x' is missing ...")
            last[-1] += "\n" + line
    assert done.returncode == (0 if not any(errors.values()) else 2), done.stdout + done.stderr
    return errors


def test_the_typescript_example_compiles_with_tsc_strict(compiled: dict[str, list[str]]) -> None:
    assert compiled[EXAMPLE.name] == []
    assert [f for f, lines in compiled.items() if lines and f not in BROKEN and f != EXAMPLE.name] == []


@pytest.mark.parametrize(("name", "code", "word"), [
    ("no_release.ts", "TS2345", "karpenterRelease"),
    ("bad_choice.ts", "TS2820", "Did you mean '\"bottlerocket\"'?"),
    ("old_get.ts", "TS2554", "Expected 2-3 arguments, but got 4"),
    ("old_import.ts", "TS2307", "@pulumi/gpu-platform"),
])
def test_tsc_strict_refuses_what_a_user_could_get_wrong(compiled: dict[str, list[str]], name: str, code: str,
                                                       word: str) -> None:
    """The check can fail: each broken copy gets the compile error a user would see."""
    assert any(f"error {code}" in line and word in line for line in compiled[name]), compiled[name]
