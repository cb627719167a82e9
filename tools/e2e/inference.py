"""One inference request through the ALB, in the Open Inference Protocol Triton speaks
(https://kserve.github.io/website/latest/modelserving/data_plane/v2_protocol/: `POST /v2/models/<m>/infer`,
JSON `inputs[]` of name, shape, datatype, data), and the check of its answer.

The ALB serves the Ingress host's certificate, not its own DNS name: the request goes to the ALB's address with
the host as TLS server name and `Host` header, so the certificate is verified for the host the user owns.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
from dataclasses import dataclass
from typing import Any

MODEL = "e2e_add"
A = [1.0, 2.0, 3.0, 4.0]
B = [10.0, 20.0, 30.0, 40.0]


def request_body() -> bytes:
    inputs = [{"name": name, "shape": [4], "datatype": "FP32", "data": data} for name, data in
              (("INPUT0", A), ("INPUT1", B))]
    return json.dumps({"inputs": inputs}).encode()


def check_answer(status: int, body: bytes) -> str:
    """'' when the answer is right; else why not."""
    if status != 200:
        return f"HTTP {status}: {body[:300]!r}"
    try:
        outputs = {o["name"]: [float(x) for x in o["data"]] for o in json.loads(body)["outputs"]}
    except (ValueError, KeyError, TypeError) as error:
        return f"not an inference response ({error}): {body[:300]!r}"
    want = {"OUTPUT0": [a + b for a, b in zip(A, B, strict=True)],
            "OUTPUT1": [a - b for a, b in zip(A, B, strict=True)]}
    wrong = [f"{k}={outputs.get(k)} (expected {v})" for k, v in want.items() if outputs.get(k) != v]
    return "; ".join(wrong)


class _HostConnection(http.client.HTTPSConnection):
    """HTTPS to `address`, with SNI and certificate verification for `server_name`."""

    def __init__(self, address: str, server_name: str, timeout: float) -> None:
        super().__init__(address, 443, timeout=timeout, context=ssl.create_default_context())
        self.server_name = server_name

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.server_name)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Answer:
    status: int
    problem: str

    @property
    def ok(self) -> bool:
        return not self.problem


def infer(alb_hostname: str, host: str, timeout: float = 30.0) -> Answer:
    connection = _HostConnection(alb_hostname, host, timeout)
    try:
        connection.request("POST", f"/v2/models/{MODEL}/infer", body=request_body(),
                           headers={"Host": host, "Content-Type": "application/json"})
        response = connection.getresponse()
        body = response.read()
    except (OSError, http.client.HTTPException) as error:
        return Answer(0, f"no answer: {error}")
    finally:
        connection.close()
    return Answer(response.status, check_answer(response.status, body))


def describe(answer: Any) -> str:
    return "right answer" if answer.ok else answer.problem
