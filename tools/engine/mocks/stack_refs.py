"""Which `--stack-outputs NAME=FILE` answers a StackReference: names resolved as the engine resolves them.

The engine reads a referenced stack in its builtin provider (pulumi/pulumi@1b5949891b pkg/resource/deploy/
builtins.go lines 371-393, `readStackReference` -> `backendClient.GetStackOutputs`), which parses the name with the
backend's `ParseStackReference` (pkg/backend/backend.go lines 398-411). Both backends read it alike:

- `stack`: this organization, this project (the Pulumi Cloud backend: pkg/backend/httpstate/backend.go lines
  1086-1105 `parseStackName` and 1107-1140 `ParseStackReference`, the default organization or the current user,
  then the current project; the DIY backend: pkg/backend/diy/store.go lines 138-183, organization `organization`);
- `org/stack`: that organization, **this** project (not a project named `org`);
- `org/project/stack`: as written.

`pulumi stack output --stack NAME` parses NAME the same way, so a `--stack-outputs` NAME and a StackReference name
match when they resolve to the same `org/project/stack`, never by a suffix: a bare `dev` answers only
`<this org>/<this project>/dev`. Offline, this organization is the one the program runs under
(`tools.preview.command.ORGANIZATION`, the DIY backend's); a name that states another organization answers only a
reference that states it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SECRET_PLACEHOLDER = "[secret]"  # what `pulumi stack output --json` writes for a secret without --show-secrets


def qualified(name: str, organization: str, project: str) -> str:
    """`name` as `org/project/stack`, the parts it leaves out filled as the engine fills them (module docstring)."""
    parts = name.split("/")
    if len(parts) == 1:
        return f"{organization}/{project}/{parts[0]}"
    if len(parts) == 2:
        return f"{parts[0]}/{project}/{parts[1]}"
    return name


def outputs_for_reference(name: str, stack_outputs: Mapping[str, Mapping[str, Any]], organization: str,
                          project: str) -> Mapping[str, Any] | None:
    """The outputs `--stack-outputs` gives for the stack a StackReference named `name` reads, or None."""
    wanted = qualified(name, organization, project)
    return next((v for k, v in stack_outputs.items() if qualified(k, organization, project) == wanted), None)


def secret_placeholders(value: Any, path: str = "") -> list[str]:
    """The paths in a `pulumi stack output --json` document that hold `"[secret]"`, the CLI's stand-in for a secret
    it did not show (pulumi/pulumi@1b5949891b pkg/cmd/pulumi/stack/stack_output.go lines 147-152: without
    --show-secrets the outputs are read through a blinding secrets provider; stack_output_test.go lines 174-181)."""
    if value == SECRET_PLACEHOLDER:
        return [path or "(the whole document)"]
    if isinstance(value, Mapping):
        return [p for k, v in value.items() for p in secret_placeholders(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in secret_placeholders(v, f"{path}[{i}]")]
    return []
