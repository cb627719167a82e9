"""What the Kubernetes API server and Helm would say of a recording, as violations of the gate's report."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from tools.engine.records import Violation
from tools.preview.model import GateReport, Recording

if TYPE_CHECKING:
    from tools.apiserver.check import ApiServerReport


def api_server_check(recording: Recording, *, has_old: bool = False) -> ApiServerReport:
    """What the API server and Helm would say of every object and release of `recording` (`tools.apiserver`); no
    state but its caches, so it may run in a thread beside the policy pack's analysis (tools/preview/command.py)."""
    from tools.apiserver.check import check_resources  # noqa: PLC0415 - schemas and CEL load only when run
    from tools.upstream.lock import cache_dir  # noqa: PLC0415

    return check_resources(recording.resources, cache_dir(), has_old=has_old)


def api_server_verdict(recording: Recording, report: GateReport, *, has_old: bool = False,
                       api: ApiServerReport | None = None) -> GateReport:
    """`report` with what the API server and Helm would say of every object and release (`tools.apiserver`).

    A rejection is a mandatory violation of `apiserver-<rule>` on the object's URN (exit 1): a real `pulumi up`
    fails at that object's step, after every resource before it was created; the offline gate says so before
    anything is created. A rule the check could not evaluate is an advisory. `has_old`: the objects exist
    already and are unchanged (an update), so the CRDs' transition rules run with `oldSelf` = `self`.
    """
    if api is None:
        api = api_server_check(recording, has_old=has_old)
    stack_urn = next((r.urn for r in recording.resources if r.type == "pulumi:pulumi:Stack"), "")
    found = [Violation(policy=f"apiserver-{f.rule}", enforcement="mandatory" if f.level == "rejected" else "advisory",
                       urn=f.urn or stack_urn, message=f.line(), blocks="before-create")
             for f in api.findings if f.level != "skipped"]
    return replace(report, violations=(*report.violations, *found), api_server=api.as_json())
