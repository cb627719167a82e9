"""The project and stack files, read as the Pulumi CLI reads them, for the offline preview.

`Pulumi.yaml` (name, Python runtime, entry point, `config:` defaults) and `Pulumi.<stack>.yaml` (the config map a
program receives: strings verbatim, everything else as JSON, `secure:` values as opaque ciphertext). A bad file is
one `PreviewError` naming the file, the key and the fix (exit 2 in `python -m tools.preview`).
Source: https://www.pulumi.com/docs/iac/concepts/projects/project-file/,
https://www.pulumi.com/docs/iac/concepts/config/
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tools.engine.mocks.stack_refs import SECRET_PLACEHOLDER, secret_placeholders
from tools.preview.model import StackConfig


class PreviewError(Exception):
    """The configuration or the program was rejected; the message is what the user reads (exit 2)."""


# --------------------------------------------------------------------------------------------------
# Project and stack configuration, read as the Pulumi CLI reads them
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Project:
    name: str
    directory: Path
    main: Path
    description: str | None = None


def _load_yaml(path: Path, what: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PreviewError(f"{path}: {what} not found") from None
    except OSError as exc:
        raise PreviewError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise PreviewError(f"{path}:{where}: the {what} is not valid YAML ({problem})") from None


def load_project(program_dir: Path) -> Project:
    """Read `Pulumi.yaml`: the project name, a Python runtime, and where the program starts.

    Source: https://www.pulumi.com/docs/iac/concepts/projects/project-file/
    """
    path = program_dir / "Pulumi.yaml"
    data = _load_yaml(path, "project file")
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        raise PreviewError(f"{path}: key 'name' must be the project name (a non-empty string), got {data!r}")
    runtime = data.get("runtime")
    runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if runtime_name != "python":
        raise PreviewError(
            f"{path}: key 'runtime' is {runtime_name!r}; the offline preview runs Python programs only "
            "(runtime: python)"
        )
    main_dir = program_dir
    if isinstance(data.get("main"), str):
        main_dir = (program_dir / data["main"]).resolve()
    main = main_dir if main_dir.is_file() else main_dir / "__main__.py"
    if not main.is_file():
        raise PreviewError(f"{path}: the program entry point {main} does not exist; add __main__.py")
    description = data.get("description") if isinstance(data.get("description"), str) else None
    return Project(name=data["name"], directory=program_dir, main=main, description=description)


def _cli_string(value: Any) -> str:
    """A config value as the CLI passes it to a program: strings verbatim, everything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def _unwrap_secure(value: Any) -> tuple[Any, bool]:
    """Replace every `{secure: <ciphertext>}` by the ciphertext string: an opaque secret offline."""
    if isinstance(value, dict):
        if set(value) == {"secure"} and isinstance(value["secure"], str):
            return value["secure"], True
        found = False
        out: dict[str, Any] = {}
        for k, v in value.items():
            out[k], secret = _unwrap_secure(v)
            found = found or secret
        return out, found
    if isinstance(value, list):
        items = [_unwrap_secure(v) for v in value]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False


def _full_key(key: Any, project: str, path: Path) -> str:
    if not isinstance(key, str) or not key or key.count(":") > 1 or key.startswith(":") or key.endswith(":"):
        raise PreviewError(
            f"{path}: config key {key!r} is not '<namespace>:<name>' or '<name>'; fix: write it as "
            f"'{project}:<name>' (e.g. {project}:cluster) or 'aws:region'"
        )
    return key if ":" in key else f"{project}:{key}"


def _project_defaults(program_dir: Path, project: str) -> dict[str, Any]:
    """`config:` defaults declared in Pulumi.yaml (`key: value` or `key: {default: value}`)."""
    data = _load_yaml(program_dir / "Pulumi.yaml", "project file")
    section = data.get("config") if isinstance(data, dict) else None
    defaults: dict[str, Any] = {}
    if isinstance(section, dict):
        for key, spec in section.items():
            full = _full_key(key, project, program_dir / "Pulumi.yaml")
            if isinstance(spec, dict) and ("default" in spec or "value" in spec):
                defaults[full] = spec.get("value", spec.get("default"))
            elif not isinstance(spec, dict):
                defaults[full] = spec
    return defaults


def load_stack_config(path: Path, project: str, program_dir: Path) -> StackConfig:
    """Read a `Pulumi.<stack>.yaml` file into the config map a program receives."""
    data = _load_yaml(path, "stack config file")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise PreviewError(f"{path}: a stack file is a mapping with a 'config:' key, got {type(data).__name__}")
    section = data.get("config") or {}
    if not isinstance(section, dict):
        raise PreviewError(f"{path}: key 'config' must be a mapping of config keys, got {section!r}")
    merged = _project_defaults(program_dir, project)
    for key, value in section.items():
        merged[_full_key(key, project, path)] = value
    values: dict[str, str] = {}
    secrets: list[str] = []
    for key, value in merged.items():
        unwrapped, secret = _unwrap_secure(value)
        values[key] = _cli_string(unwrapped)
        if secret:
            secrets.append(key)
    return StackConfig(path=path, values=values, secret_keys=tuple(sorted(secrets)), parsed=merged)


def load_stack_outputs(specs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """`--stack-outputs NAME=FILE`: each FILE in the format of `pulumi stack output --json` (one JSON object, output
    name -> value, written with --show-secrets: a `"[secret]"` stand-in is refused), NAME the stack as
    `pulumi stack output --stack NAME` names it (`org/project/stack`; `stack` and `org/stack` are in this project:
    tools/engine/mocks/stack_refs.py).
    Source: https://www.pulumi.com/docs/iac/cli/commands/pulumi_stack_output/ (`--json`: emit output as JSON)."""
    found: dict[str, dict[str, Any]] = {}
    for spec in specs:
        name, sep, file = spec.partition("=")
        if not sep or not name or not file:
            raise PreviewError(f"--stack-outputs {spec}: not NAME=FILE; write it as e.g. --stack-outputs "
                               "acme/infra/dev=infra-dev.json (the file from `pulumi stack output --json`)")
        path = Path(file)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise PreviewError(f"--stack-outputs {spec}: {path}: cannot be read ({exc.strerror}); pass the file "
                               "`pulumi stack output --json --stack NAME > FILE` wrote") from None
        except json.JSONDecodeError as exc:
            raise PreviewError(f"--stack-outputs {spec}: {path}: not JSON (line {exc.lineno}: {exc.msg}); pass the "
                               "file `pulumi stack output --json` wrote") from None
        if not isinstance(doc, dict):
            raise PreviewError(f"--stack-outputs {spec}: {path}: holds a {type(doc).__name__}, not an object of "
                               "outputs; pass the file `pulumi stack output --json` wrote (one JSON object)")
        hidden = secret_placeholders(doc)
        if hidden:
            # A redacted secret is not the stack's value: read as one, an instance type of "[secret]" passed where the
            # real value blocks (issue 45). The gate cannot judge with it, and the real value is one command away.
            raise PreviewError(f"--stack-outputs {spec}: {path}: {', '.join(hidden)} hold "
                               f"{SECRET_PLACEHOLDER!r}, what `pulumi stack output --json` writes for a secret it "
                               "does not show, not the stack's value; write the file with `pulumi stack output --json "
                               f"--show-secrets --stack {name} > {file}`")
        if name in found:
            raise PreviewError(f"--stack-outputs {spec}: stack {name!r} is given twice; give each stack once")
        found[name] = doc
    return found
