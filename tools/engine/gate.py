"""The offline policy gate: run a real CrossGuard policy pack the way the Pulumi engine does.

The engine starts a Python policy pack as its own process (`tools.engine.pack_process`), then speaks the
analyzer protocol to it: Handshake, ConfigureStack (stack, config, tags, dry run), GetAnalyzerInfo,
Configure (the reconciled policy config, `tools.engine.policy_config`), Analyze for every resource that goes
through the step generator, before its step, and AnalyzeStack once with every resource's final state,
after all steps. What each call carries is built by `tools.engine.view`. This module does the same
without a Pulumi CLI, so `tools.preview` can hand the pack exactly what `pulumi preview` / `pulumi up`
would, and say of each violation when it bites at `pulumi up`: a resource policy's before the
resource's step ("before-create"), a stack policy's after every step ("after-update").

Source: https://github.com/pulumi/pulumi/blob/master/pkg/resource/plugin/analyzer_plugin.go
Source: https://github.com/pulumi/pulumi/blob/master/pkg/resource/deploy/step_generator.go (analyzeAll,
line 1469: before the step; AnalyzeResources, line 3495: after all steps)
Source: https://github.com/pulumi/pulumi-policy/blob/master/sdk/python/lib/pulumi_policy/policy.py

The conversation itself (`tools.engine.conversation`) and the pack kept across previews
(`tools.engine.warm_pack`) are modules of their own; this one is the entry point that starts a pack for one
preview, and re-exports what callers import from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from tools.engine.conversation import (
    ALL_PHASES,
    PHASES,
    GateResult,
    Phase,
    PolicyInfo,
    pack_python,
)
from tools.engine.policy_config import (
    ALL_POLICIES,
    ENFORCEMENT_LEVELS,
    ConfigError,
    GateError,
    LoadedPolicyConfig,
    load_policy_config,
)
from tools.engine.records import RecordedResource
from tools.engine.warm_pack import WarmPack

__all__ = [
    "ALL_PHASES",
    "ALL_POLICIES",
    "ENFORCEMENT_LEVELS",
    "PHASES",
    "ConfigError",
    "GateError",
    "GateResult",
    "LoadedPolicyConfig",
    "Phase",
    "PolicyInfo",
    "load_policy_config",
    "pack_python",
    "run_gate",
]


def run_gate(
    resources: Sequence[RecordedResource],
    *,
    pack_dir: Path,
    stack: str,
    project: str,
    policy_config: Mapping[str, Any] | None = None,
    python: str | None = None,
    timeout_s: float = 120,
    organization: str = "organization",
    stack_config: Mapping[str, str] | None = None,
    config_source: str | None = None,
    phase: Phase = "preview",
    today: date | None = None,
    tags: Mapping[str, str] | None = None,
    skip_preview: bool = False,
) -> GateResult:
    """Start the pack in `pack_dir`, ask it about every resource and the stack, return what it reported.

    `policy_config` is the parsed `--policy-pack-config` JSON (see `load_policy_config`);
    `config_source` names it in errors (taken from a `LoadedPolicyConfig` when not given).
    `stack_config` is the stack's config as `PULUMI_CONFIG` hands it to the pack ("project:key" -> str).
    `phase` says which engine moment this is (`up` is the only one that is not a dry run: the update
    itself; `tools.preview` runs the preview a CLI `pulumi up` makes first); `today` becomes the `today`
    config of every policy that takes one. `python` defaults to `pack_python`. `skip_preview` says how
    `pulumi up` is run, for `blocks`: the CLI default previews first, so a stack verdict a preview reaches
    stops it before anything is created; with `--skip-preview` (the Automation API, pulumi/actions) it
    bites only after every step.
    Raises ConfigError when the config is malformed or lowers a policy; GateError when the pack fails.
    """
    # One pack process for this one preview, as the engine starts one per run; `WarmPack` holds the conversation.
    with WarmPack(pack_dir=pack_dir, stack=stack, project=project, phase=phase, stack_config=stack_config,
                  python=python, organization=organization, timeout_s=timeout_s) as pack:
        return pack.judge(resources, stack=stack, project=project, phase=phase, policy_config=policy_config,
                          stack_config=stack_config, config_source=config_source, today=today, tags=tags,
                          skip_preview=skip_preview)
