"""`tools.preview.forked`: a function run in a forked child, its value or its exception back in this process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools.preview.forked import Forked, preload_program


def test_the_childs_value_comes_back_and_it_ran_elsewhere() -> None:
    assert Forked(lambda: ("ok", os.getpid())).result() != ("ok", os.getpid())
    assert Forked(lambda: ["a", {"b": 1}]).result() == ["a", {"b": 1}]


def test_the_childs_exception_is_raised_here() -> None:
    def fail() -> None:
        raise ValueError("bad stack file: key x")

    with pytest.raises(ValueError, match="bad stack file: key x"):
        Forked(fail).result()


def test_a_child_that_dies_without_an_answer_has_the_work_run_here() -> None:
    here = os.getpid()

    def work() -> int:
        if os.getpid() != here:
            os._exit(3)  # the child dies before it answers
        return 7

    assert Forked(work).result() == 7


def test_preload_imports_the_programs_top_level_modules(tmp_path: Path) -> None:
    (tmp_path / "preload_probe_mod.py").write_text("VALUE = 1\n")
    main = tmp_path / "__main__.py"
    main.write_text("import json\nfrom preload_probe_mod import VALUE\nimport no_such_module_here\nprint(VALUE)\n")
    preload_program(main)
    import sys  # noqa: PLC0415

    assert "preload_probe_mod" in sys.modules
    assert str(tmp_path) not in sys.path
    preload_program(tmp_path / "missing.py")  # nothing to read: the run reports it


def _program(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_a_program_module_that_registers_at_import_is_not_inert(tmp_path: Path) -> None:
    """pulumi/examples aws-py-eks's shape: `vpc.py` creates the network at its top level; `iam.py` only defines."""
    from tools.preview.program_modules import inert_module  # noqa: PLC0415

    program = _program(tmp_path, {
        "vpc.py": "import pulumi_aws as aws\nvpc = aws.ec2.Vpc('v', cidr_block='10.0.0.0/16')\n",
        "iam.py": "import json\nimport pulumi_aws as aws\nPOLICIES = sorted(['a'])\n\n"
                  "def create_role(name):\n    return aws.iam.Role(name, assume_role_policy=json.dumps({}))\n",
        "roles.py": "import iam\nrole = iam.create_role('r')\n",  # a call into the program's own module
        "own.py": "def make():\n    pass\n\nmake()\n",  # a call to its own function
        "uses_vpc.py": "from vpc import vpc\nX = 1\n",  # inert itself, imports one that is not
        "pkg/__init__.py": "",
        "pkg/net.py": "from . import sub\n",
        "pkg/sub.py": "import pulumi\ncfg = pulumi.Config()\n",  # reads the runtime's config at import
        "klass.py": "import pulumi\n\nclass C(pulumi.ComponentResource):\n    pass\n\nc = C('t', 'n')\n",
    })
    assert inert_module("iam", program)
    assert not inert_module("vpc", program)
    assert not inert_module("roles", program)
    assert not inert_module("own", program)
    assert not inert_module("uses_vpc", program)
    assert not inert_module("pkg.net", program)
    assert not inert_module("klass", program)
    assert inert_module("json", program)  # not the program's: not its to judge


def test_preload_leaves_a_module_that_registers_at_import_to_the_run(tmp_path: Path) -> None:
    import sys  # noqa: PLC0415

    program = _program(tmp_path, {
        "preload_inert_probe.py": "VALUE = 1\n",
        "preload_vpc_probe.py": "import pulumi\nVALUE = pulumi.Config().get('x')\n",
    })
    main = program / "__main__.py"
    main.write_text("import preload_inert_probe\nimport preload_vpc_probe\n")
    preload_program(main)
    assert "preload_inert_probe" in sys.modules
    assert "preload_vpc_probe" not in sys.modules


def test_watch_runner_does_not_preload_a_module_that_registers_at_import(tmp_path: Path) -> None:
    from tools.preview.worker import preload_candidates  # noqa: PLC0415

    program = _program(tmp_path, {"iam.py": "X = 1\n", "vpc.py": "import pulumi_aws as aws\naws.ec2.Vpc('v')\n"})

    class Fake:
        def __init__(self, path: Path) -> None:
            self.__file__ = str(path)

    modules = {"iam": Fake(program / "iam.py"), "vpc": Fake(program / "vpc.py")}
    assert preload_candidates(modules, program) == ("iam",)
