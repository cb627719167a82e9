"""One per-stack cache: a stack policy's verdicts, computed once and handed to its `-caveats` twin.

The engine asks every stack policy about the same stack in one `AnalyzeStack` call, and the policy SDK
hands each policy its own freshly deserialized copy of the resources
(pulumi_policy/policy.py, `_PolicyAnalyzerServicer.AnalyzeStack`: `deserialize_properties` inside
`for policy in self.__policies`). A mandatory policy and its advisory twin
(`base.stack_policy_with_caveats`) run the same validation and split its findings by `CAVEAT_MARK`;
running it twice doubled the cost of the most expensive rules (bench/policy_scaling.py).

So the first of the pair to run records everything the validation reported (and the exception it
ended with, e.g. the SDK's `UnknownValueError` during a first preview), keyed by a fingerprint of
what the validation can read: every resource's type, URN, properties, parent and dependencies, and
the policy config. The other one of the pair replays the record when the fingerprint matches, once,
and validates afresh when it does not (another stack, a changed config). A record is handed over
once and only to the other side, so it never outlives the `AnalyzeStack` call that made it: a pack
kept warm across previews (watch mode) judges the next call afresh, even for the same stack, and
so sees what changed outside it (a registry answer, the calendar). The cache holds one record per pair.

Under the pack's own servicer (`servicer.OncePerCallServicer`) every stack policy of one `AnalyzeStack` call
gets the same resource objects, and the list says which call it belongs to (`StackResources.call`, a number
no other call of the process has): the fingerprint is then that number and the policy config, with no pass
over the resources. Under any other servicer (upstream's, a test's), it is the digest of everything the
validation can read.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pulumi_policy import ReportViolation, StackValidationArgs
from pulumi_policy.deserialize import serialize_properties


def _urn(resource: Any) -> str | None:
    return getattr(resource, "urn", None) if resource is not None else None


def stack_fingerprint(args: StackValidationArgs) -> str:
    """What identifies the stack `args` shows: its `AnalyzeStack` call and the config when the servicer numbers
    its calls, else a digest of everything a stack validation can read (resources in order, config)."""
    call = getattr(args.resources, "call", 0)
    if call:
        return f"call {call} " + json.dumps(args.get_config(), sort_keys=True, default=repr)
    digest = hashlib.blake2b(digest_size=20)
    for res in args.resources:
        deps = getattr(res, "property_dependencies", None) or {}
        item = [
            res.resource_type,
            res.urn,
            res.name,
            serialize_properties(res.props),
            _urn(getattr(res, "parent", None)),
            [_urn(d) for d in getattr(res, "dependencies", None) or []],
            {key: [_urn(d) for d in value or []] for key, value in deps.items()},
        ]
        digest.update(json.dumps(item, sort_keys=True, default=repr).encode())
        digest.update(b"\0")
    digest.update(json.dumps(args.get_config(), sort_keys=True, default=repr).encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class Verdicts:
    """What one validation of one stack reported, in order, and the exception it ended with (if any)."""

    fingerprint: str
    producer: str  # the side of the pair that ran the validation
    reported: tuple[tuple[str, str | None], ...]
    error: BaseException | None

    def replay(self, report: ReportViolation) -> None:
        for message, urn in self.reported:
            report(message, urn)
        if self.error is not None:
            raise self.error


class SharedValidation:
    """A stack validation shared by a policy and its twin: run by the first, handed once to the other.

    Call it through `side(name)`: each side is the validate function of one policy of the pair.
    """

    def __init__(self, validate: Callable[[StackValidationArgs, ReportViolation], Any]) -> None:
        self._validate = validate
        self._pending: Verdicts | None = None
        self.runs = 0  # validations actually run (tests read it)

    def side(self, name: str) -> Callable[[StackValidationArgs, ReportViolation], None]:
        def validate(args: StackValidationArgs, report: ReportViolation) -> None:
            self.judge(name, args, report)

        return validate

    def judge(self, side: str, args: StackValidationArgs, report: ReportViolation) -> None:
        fingerprint = stack_fingerprint(args)
        pending = self._pending
        if pending is not None and pending.fingerprint == fingerprint and pending.producer != side:
            self._pending = None  # handed over once
            pending.replay(report)
            return
        verdicts = self._run(side, args, fingerprint)
        self._pending = verdicts
        verdicts.replay(report)

    def _run(self, side: str, args: StackValidationArgs, fingerprint: str) -> Verdicts:
        reported: list[tuple[str, str | None]] = []

        def record(message: str, urn: str | None = None) -> None:
            reported.append((message, urn))

        self.runs += 1
        error: BaseException | None = None
        try:
            self._validate(args, record)
        except Exception as exc:  # noqa: BLE001 - replayed as is, to both policies, by `Verdicts.replay`
            error = exc
        return Verdicts(fingerprint, side, tuple(reported), error)
