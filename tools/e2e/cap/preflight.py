"""What `make e2e` needs before it creates anything, all checked at once and said in one list: AWS credentials
of the one account the run may use (E2E_AWS_ACCOUNT_ID, compared with STS GetCallerIdentity), a region, the Pulumi
CLI and a state backend, MAX_USD, kubectl, the Ingress host and its certificate, and a way
to make the model snapshot. Nothing here creates or changes anything: the only AWS call is STS
GetCallerIdentity, made only when credentials exist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

REGION_VARS = ("E2E_REGION", "AWS_REGION", "AWS_DEFAULT_REGION")
ACCOUNT_VAR = "E2E_AWS_ACCOUNT_ID"
ACCOUNT_RE = re.compile(r"^\d{12}$")


def expected_account(env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(the account the run may act in, None) or (None, what is wrong with E2E_AWS_ACCOUNT_ID)."""
    raw = env.get(ACCOUNT_VAR, "").strip()
    if ACCOUNT_RE.match(raw):
        return raw, None
    return None, (f"{ACCOUNT_VAR}: the 12-digit id of the one AWS account the run may create and delete resources "
                  f"in (got {raw!r}); the run refuses credentials of any other account (docs/e2e.md)")


def account_problem(expected: str, actual: str) -> str | None:
    """None when the credentials' account is the expected one, else the refusal."""
    if actual == expected:
        return None
    return (f"the AWS credentials are for account {actual}, not {ACCOUNT_VAR} {expected}: refusing to create or "
            "delete anything in another account (check AWS_PROFILE, or the role the workflow assumed)")


@dataclass
class Needs:
    missing: list[str] = field(default_factory=list)
    found: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.missing

    def message(self) -> str:
        lines = ["make e2e needs, before it creates anything:"]
        lines += [f"  - {m}" for m in self.missing]
        lines.append("Nothing was created. docs/e2e.md says how to set each up.")
        return "\n".join(lines)


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)


def check(env: Mapping[str, str], *, which: Callable[[str], str | None] = shutil.which,
          run: Callable[[list[str]], subprocess.CompletedProcess[str]] = _run,
          session_factory: Callable[[str | None], Any] | None = None) -> Needs:
    needs = Needs()
    raw = env.get("MAX_USD", "").strip()
    try:
        max_usd = float(raw)
        if max_usd <= 0:
            raise ValueError
        needs.found["max_usd"] = f"{max_usd:.2f}"
    except ValueError:
        needs.missing.append(f"MAX_USD: the most the run may cost, in USD (got {raw!r}); e.g. "
                             "`make e2e MAX_USD=25` (docs/e2e.md gives the estimate)")

    account, account_error = expected_account(env)
    if account_error is not None:
        needs.missing.append(account_error)

    region = next((env[v] for v in REGION_VARS if env.get(v)), "")
    if region:
        needs.found["region"] = region
    else:
        needs.missing.append("a region: set E2E_REGION (or AWS_REGION); the recorded prices are us-west-2's")

    pulumi = which("pulumi")
    if pulumi is None:
        needs.missing.append("the Pulumi CLI on PATH (https://www.pulumi.com/docs/iac/download-install/; the "
                             "version of requirements.txt's pulumi SDK)")
    else:
        needs.found["pulumi"] = pulumi
        if env.get("PULUMI_BACKEND_URL") or env.get("PULUMI_ACCESS_TOKEN"):
            needs.found["backend"] = env.get("PULUMI_BACKEND_URL") or "Pulumi Cloud (PULUMI_ACCESS_TOKEN)"
        else:
            whoami = run([pulumi, "whoami", "--verbose"])
            if whoami.returncode == 0:
                lines = whoami.stdout.strip().splitlines()
                needs.found["backend"] = lines[-1] if lines else "logged in"
            else:
                needs.missing.append("a Pulumi state backend: `pulumi login` (Pulumi Cloud, or e.g. "
                                     "PULUMI_BACKEND_URL=s3://<bucket>), and PULUMI_CONFIG_PASSPHRASE for a "
                                     "self-managed backend's secrets")
    for tool, why in (("kubectl", "to wait for GPU nodes, read the probe, wake the service and empty the "
                                  "cluster before destroy"),
                      ("aws", "the AWS CLI: kubectl's token for the cluster comes from `aws eks get-token`, in the "
                              "stack's kubeconfig and in the one cleanup reads from EKS after a failed up")):
        if which(tool) is None:
            needs.missing.append(f"{tool} on PATH ({why})")
    if not env.get("E2E_INGRESS_HOST") or not env.get("E2E_CERTIFICATE_ARN"):
        needs.missing.append("E2E_INGRESS_HOST and E2E_CERTIFICATE_ARN: a host name you own and an ACM "
                             "certificate for it in the region (the inference request goes through the ALB "
                             "with TLS)")
    if not env.get("E2E_SNAPSHOT_ID") and which("mkfs.ext4") is None:
        needs.missing.append("E2E_SNAPSHOT_ID (a snapshot holding a Triton model repository), or mkfs.ext4 "
                             "(e2fsprogs) to build the run's own small model snapshot")

    if session_factory is not None:
        session = session_factory(region or None)
        if session.get_credentials() is None:
            needs.missing.append("AWS credentials: a profile (AWS_PROFILE), environment keys, SSO, or in CI the "
                                 "OIDC role docs/e2e.md describes (E2E role, tools/e2e/iam/e2e-role-policy.json)")
        elif region:
            try:
                identity = session.client("sts").get_caller_identity()
                needs.found["caller"] = str(identity["Arn"])
                needs.found["account"] = str(identity["Account"])
                wrong = None if account is None else account_problem(account, str(identity["Account"]))
                if wrong is not None:
                    needs.missing.append(wrong)
            except Exception as error:  # noqa: BLE001  # any refusal means the credentials do not work
                needs.missing.append(f"working AWS credentials (STS GetCallerIdentity failed: {error})")
    return needs


def env_snapshot() -> dict[str, str]:
    return dict(os.environ)
