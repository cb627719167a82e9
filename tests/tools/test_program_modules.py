"""`tools/preview/program_modules.py`: which program modules register at import, read once, decided once per run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tools.preview import program_modules
from tools.preview.program_modules import OWN_PROGRAM_REGISTERING, REPO, ProgramModules


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_cycle_through_a_registering_module_registers_every_member(tmp_path: Path) -> None:
    """A imports B imports A, and B's import of C registers: both A and B register, whichever is asked first
    (a per-call `seen` set answered the second member of a cycle as inert)."""
    program = _write(tmp_path, {
        "a.py": "import b\nX = 1\n",
        "b.py": "import a\nimport c\nY = 2\n",
        "c.py": "import pulumi\ncfg = pulumi.Config()\n",
        "d.py": "import e\n",
        "e.py": "import d\n",
    })
    for first in ("a", "b"):
        modules = ProgramModules(program)
        assert modules.registers(first)
        assert modules.registers("b" if first == "a" else "a")
        assert modules.registers("c")
    modules = ProgramModules(program)
    assert not modules.registers("d") and not modules.registers("e")


def test_each_file_is_parsed_once_until_it_changes(tmp_path: Path) -> None:
    program = _write(tmp_path, {"vpc.py": "X = 1\n", "main_mod.py": "import vpc\nimport helper\n",
                                "helper.py": "import vpc\n"})
    before = program_modules.PARSED[0]
    assert not ProgramModules(program).registers("main_mod")
    assert program_modules.PARSED[0] - before == 3  # main_mod, vpc, helper: vpc once though imported twice
    assert not ProgramModules(program).registers("helper")  # a second run: nothing read again
    assert program_modules.PARSED[0] - before == 3
    vpc = program / "vpc.py"
    vpc.write_text("import pulumi_aws as aws\nvpc = aws.ec2.Vpc('v')\n")
    stat = vpc.stat()
    os.utime(vpc, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a save within the same tick
    assert ProgramModules(program).registers("main_mod")  # the changed file is read again
    assert program_modules.PARSED[0] - before == 4


def test_our_own_program_is_known_and_importing_it_registers_nothing(tmp_path: Path) -> None:
    """`OWN_PROGRAM_REGISTERING` saves every preview of this repository from reading its modules. The static
    reading is too cautious to prove it (a dataclass built at import, `Taint(...)`, reads as a call that may
    register), so the proof is the import itself: every module of components/ imported in a fresh interpreter
    under Pulumi's mocks registers no resource and calls no function of the engine."""
    names = sorted(
        ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for path in (REPO / "components").rglob("*.py")
    )
    assert len(names) > 20
    script = (
        "import asyncio, importlib, json, sys\n"
        "import pulumi\n"
        "from pulumi.runtime.stack import wait_for_rpcs\n"
        "calls = []\n"
        "class Mocks(pulumi.runtime.Mocks):\n"
        "    def new_resource(self, args):\n"
        "        calls.append(args.typ)\n"
        "        return args.name, {}\n"
        "    def call(self, args):\n"
        "        calls.append(args.token)\n"
        "        return {}\n"
        "pulumi.runtime.set_mocks(Mocks(), preview=True)\n"
        "for name in sys.argv[1:]:\n"
        "    importlib.import_module(name)\n"
        "asyncio.get_event_loop().run_until_complete(wait_for_rpcs())\n"  # what the imports scheduled runs
        "print(json.dumps(calls))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, *names], cwd=REPO, capture_output=True, text=True,
                          check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    registered = json.loads(proc.stdout.strip().splitlines()[-1])
    assert registered == sorted(OWN_PROGRAM_REGISTERING)
    # the probe sees a registration at import: the same script over a module that creates a VPC at its top level
    probe = tmp_path / "registers_at_import.py"
    probe.write_text("import pulumi_aws as aws\nvpc = aws.ec2.Vpc('v', cidr_block='10.0.0.0/16')\n")
    seen = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n" + script,
                           "registers_at_import"], cwd=REPO, capture_output=True, text=True, check=False, timeout=300)
    assert json.loads(seen.stdout.strip().splitlines()[-1]) == ["aws:ec2/vpc:Vpc"], seen.stderr[-3000:]
    assert not ProgramModules(REPO).registers("components.program")  # the known answer is the one used
