"""Every distinct message a policy can emit is produced by at least one of its failing fixtures.

"Distinct messages" are derived from the code, not listed by hand: the message templates of the
policy's rule module (the string passed to `report` / `report_violation`, resolved through a local
variable, and every string a helper `.append`s to the list of problems it returns), plus the
non-`ok` `Finding` templates of every `Matrix` method the module calls, followed through the
`self.` methods they call. Each template becomes a pattern (its literal text, `.*?` for each
formatted value); a failing fixture's violation (either level, the policy or its `-caveats` twin)
must match it. A template no fixture can reach carries its reason in NOT_REACHABLE; a reason that
no longer names an uncovered template fails the test too, so the list cannot go stale.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from policies.gpu_guard.base import all_meta, all_policies, companions_of
from tests.policies.harness import FIXTURES, load_cases, run_with_caveats

PACKAGE = Path(__file__).resolve().parents[2] / "policies" / "gpu_guard"
RULES = PACKAGE / "rules"
POLICIES = {p.name: p for p in all_policies()}
MAIN_POLICIES = sorted(name for name, meta in all_meta().items() if meta.companion_of is None)

# (policy, a literal piece of the template) -> why no fixture of the policy can produce it.
NOT_REACHABLE: dict[tuple[str, str], str] = {
    ("gpu-driver-image-published", "The registry confirms:"):
        "needs a registry answer (verifyRegistry); tests/policies/test_gpu_driver_image_published.py covers it",
    ("gpu-driver-image-published", "the registry has no image"):
        "needs a registry answer (verifyRegistry); tests/policies/test_gpu_driver_image_published.py covers it",
    ("gpu-driver-image-published", "The registry could not be reached:"):
        "needs a registry answer (verifyRegistry); tests/policies/test_gpu_driver_image_published.py covers it",
    ("gpu-driver-image-published", "the registry could not be asked for"):
        "needs a registry answer (verifyRegistry); tests/policies/test_gpu_driver_image_published.py covers it",
    ("gpu-driver-image-published", "the registry serves"):
        "needs a registry answer (verifyRegistry); tests/policies/test_gpu_driver_image_published.py covers it",
    ("gpu-driver-image-published", "ships the NVIDIA driver in its node image"):
        "the policy judges operator-driven pools only; a baked-driver OS never reaches Matrix.driver_image",
    ("gpu-driver-image-published", "no precompiled driver kernels are recorded for"):
        "the policy passes no node kernel to Matrix.driver_image (the stack does not state one)",
    ("gpu-driver-image-published", "is not an Ubuntu kernel release"):
        "the policy passes no node kernel to Matrix.driver_image (the stack does not state one)",
    ("gpu-driver-image-published", "are not built for kernel"):
        "the policy passes no node kernel to Matrix.driver_image (the stack does not state one)",
    ("gpu-driver-branch-supported", "does not list"):
        "the policy judges operator-driven pools only; a baked-driver OS never reaches operator_branch_support",
    ("gpu-driver-branch-supported-resource", "does not list"):
        "the resource part judges Ubuntu OSes only and reports mandatory findings only (this one is advisory)",
    ("gpu-driver-branch-supported-resource", "is in a supported branch"):
        "an advisory finding: the resource part reports mandatory findings only",
    ("gpu-driver-image-published-resource", "ships the NVIDIA driver in its node image"):
        "the resource part judges Ubuntu OSes only",
    ("gpu-driver-image-published-resource", "is a branch, but conventional driver images"):
        "the resource part leaves bare branches and precompiled drivers to the stack policy",
    ("gpu-driver-image-published-resource", "NVIDIA CI stopped building precompiled"):
        "the resource part leaves precompiled drivers to the stack policy",
    ("gpu-driver-image-published-resource", "under GPU Operator"):
        "the resource part leaves precompiled drivers to the stack policy",
    ("gpu-driver-image-published-resource", "(NVIDIA CI builds"):
        "the resource part leaves precompiled drivers to the stack policy",
    ("gpu-driver-image-published-resource", "no precompiled driver kernels are recorded for"):
        "the resource part leaves precompiled drivers to the stack policy and passes no kernel",
    ("gpu-driver-image-published-resource", "is not an Ubuntu kernel release"):
        "the resource part leaves precompiled drivers to the stack policy and passes no kernel",
    ("gpu-driver-image-published-resource", "are not built for kernel"):
        "the resource part leaves precompiled drivers to the stack policy and passes no kernel",
    ("cuda-driver-compatible-resource", "only through minor version compatibility"):
        "an advisory finding: the resource part reports mandatory findings only (the -caveats twin reports it)",
    ("cuda-driver-compatible-resource", "runs only through forward compatibility"):
        "an advisory finding: the resource part reports mandatory findings only (the -caveats twin reports it)",
    ("cuda-architecture-compatible", "accelerators ("):
        "the policy leaves out every instance type with no NVIDIA GPU row (g4ad's AMD GPU) before cuda_architecture",
    ("gpu-architecture-supported", "is not a known GPU instance type"):
        "a family the matrix records nowhere goes to gpu-architecture-supported-unseen (issue 55); the policy skips it",
    ("gpu-architecture-supported-resource", "is not a known GPU instance type"):
        "a family the matrix records nowhere goes to gpu-architecture-supported-unseen (issue 55); the part skips it",
    ("cuda-architecture-compatible", "is not a size of the"):
        "a workload reaches only pools of known GPU instance types; gpu-architecture-supported reports the rest",
    ("cuda-architecture-compatible", "is not a known GPU instance type"):
        "a workload reaches only pools of known GPU instance types; gpu-architecture-supported reports the rest",
}


@dataclass(frozen=True)
class Template:
    where: str  # module:line
    pattern: str
    literal: str  # the template's literal text, for NOT_REACHABLE and messages

    def matches(self, message: str) -> bool:
        return re.search(self.pattern, message, re.S) is not None


def _parts(node: ast.expr) -> list[str | None] | None:
    """The template as literal pieces and None for each formatted value; None if not a string template."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else None for v in node.values]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _parts(node.left), _parts(node.right)
        return [*(left if left is not None else [None]), *(right if right is not None else [None])]
    return None


def _template(where: str, node: ast.expr) -> Template | None:
    parts = _parts(node)
    if parts is None:
        return None
    pattern = "".join(".*?" if p is None else re.escape(p) for p in parts)
    return Template(where, pattern, "".join(p or "…" for p in parts))


def _functions(tree: ast.AST) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]


def _message_nodes(function: ast.FunctionDef, arg: ast.expr) -> list[ast.expr]:
    if not isinstance(arg, ast.Name):
        return [arg]
    return [n.value for n in ast.walk(function) if isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == arg.id for t in n.targets)]


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def rule_templates(path: Path) -> tuple[list[Template], list[str]]:
    """(templates, what could not be read as a template) of one rule module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    templates: list[Template] = []
    unreadable: list[str] = []
    for function in _functions(tree):
        for call in (n for n in ast.walk(function) if isinstance(n, ast.Call) and n.args):
            name = _called_name(call)
            if name in ("report", "report_violation"):
                for node in _message_nodes(function, call.args[0]):
                    template = _template(f"{path.name}:{call.lineno}", node)
                    if template is None:
                        unreadable.append(f"{path.name}:{call.lineno}: {ast.unparse(node)}")
                    elif template.pattern != ".*?":
                        templates.append(template)
            elif name == "append" and isinstance(call.args[0], ast.JoinedStr | ast.Constant):
                template = _template(f"{path.name}:{call.lineno}", call.args[0])
                if template is not None:
                    templates.append(template)
    return templates, unreadable


@cache
def _matrix_methods() -> dict[str, tuple[frozenset[str], tuple[Template, ...]]]:
    """Method of the Matrix classes (policies/gpu_guard/matrix/, its mixins) -> (self. calls, non-ok templates)."""
    out: dict[str, tuple[frozenset[str], tuple[Template, ...]]] = {}
    modules = sorted((PACKAGE / "matrix").glob("*.py")) or [PACKAGE / "matrix.py"]
    for path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for method in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
                calls = frozenset(c.func.attr for c in ast.walk(method) if isinstance(c, ast.Call)
                                  and isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name)
                                  and c.func.value.id == "self")
                templates: list[Template] = []
                for call in (n for n in ast.walk(method) if isinstance(n, ast.Call) and _called_name(n) == "Finding"):
                    level = call.args[0] if call.args else None
                    if len(call.args) < 3 or (isinstance(level, ast.Constant) and level.value == "ok"):
                        continue
                    for node in _message_nodes(method, call.args[2]):
                        template = _template(f"matrix/{path.name}:{call.lineno}", node)
                        assert template is not None, f"{path}:{call.lineno}: cannot read {ast.unparse(node)}"
                        templates.append(template)
                known_calls, known = out.get(method.name, (frozenset(), ()))
                out[method.name] = (calls | known_calls, (*known, *templates))
    assert "cuda_driver" in out and "eks_lifecycle" in out, "the Matrix query methods were not found"
    return out


# Matrix methods whose findings only decide something and are never reported: not followed.
FILTERS_ONLY: dict[str, str] = {
    "pool_takes": "re-checks each suggested driver through `check` (issue 46); its findings only decide whether the "
                  "driver is suggested, none is reported",
}


def matrix_templates(path: Path) -> list[Template]:
    """The Finding templates of every Matrix method `path` calls, and of the methods those call (not FILTERS_ONLY)."""
    methods = _matrix_methods()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    todo = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in methods]
    seen: set[str] = set()
    templates: list[Template] = []
    while todo:
        name = todo.pop()
        if name in seen or name in FILTERS_ONLY:
            continue
        seen.add(name)
        calls, found = methods[name]
        templates.extend(found)
        todo.extend(c for c in calls if c in methods)
    return templates


def _module(policy: str) -> Path:
    return RULES / f"{policy.replace('-', '_')}.py"


def _fixture_messages(policy: str) -> list[str]:
    messages: list[str] = []
    for case in load_cases(policy):
        if case.name.startswith("fail_"):
            outcome = run_with_caveats(POLICIES[policy], companions_of(policy), case.resources, case.config)
            messages += [v.message for v in outcome.violations]
    return messages


def test_every_policy_has_its_rule_module_and_templates():
    assert len(MAIN_POLICIES) >= 24
    missing = [p for p in MAIN_POLICIES if not _module(p).is_file()]
    assert not missing, f"policies without rules/<name>.py: {missing}"
    total = sum(len(rule_templates(_module(p))[0]) + len(matrix_templates(_module(p))) for p in MAIN_POLICIES)
    assert total >= 100, f"only {total} message templates derived: the derivation is broken"


@pytest.mark.parametrize("policy", MAIN_POLICIES)
def test_every_message_the_policy_can_emit_has_a_failing_fixture(policy):
    path = _module(policy)
    templates, unreadable = rule_templates(path)
    assert not unreadable, f"message templates that cannot be derived (use an f-string): {unreadable}"
    templates += matrix_templates(path)
    messages = _fixture_messages(policy)
    uncovered = [t for t in templates if not any(t.matches(m) for m in messages)]
    excused = {piece for (name, piece) in NOT_REACHABLE if name == policy}
    missing = [t for t in uncovered if not any(piece in t.literal for piece in excused)]
    assert not missing, (f"{policy}: no failing fixture under {FIXTURES / policy} produces these messages:\n"
                         + "\n".join(f"  {t.where}: {t.literal}" for t in missing))
    stale = [piece for piece in excused if not any(piece in t.literal for t in uncovered)]
    assert not stale, f"{policy}: NOT_REACHABLE names templates that are covered or gone: {stale}"
