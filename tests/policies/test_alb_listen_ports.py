"""How alb-https-only reads `alb.ingress.kubernetes.io/listen-ports` and the fix it proposes for YAML-style text.

Written from the survivors of the mutation run (docs/testing.md). The controller unmarshals the annotation as a
JSON list of one-key objects with integer ports (kubernetes-sigs/aws-load-balancer-controller
docs/guide/ingress/annotations.md, listen-ports: `'[{"HTTP": 80}, {"HTTPS": 443}]'`).
"""

from __future__ import annotations

import pytest

from policies.gpu_guard.rules.alb_https_only import RECOMMENDED_LISTEN_PORTS, _listen_ports, _repair_listen_ports

BAD = ("has alb.ingress.kubernetes.io/listen-ports {raw!r}, which is not valid JSON (keys must be quoted), so the "
       "controller rejects the Ingress. Fix: alb.ingress.kubernetes.io/listen-ports: '{fixed}'")
NOT_A_LIST = ("has alb.ingress.kubernetes.io/listen-ports {raw!r}, which is not a JSON list of {{\"PROTOCOL\": port}} "
              "objects. Fix: alb.ingress.kubernetes.io/listen-ports: '[{{\"HTTP\": 80}}, {{\"HTTPS\": 443}}]'")


@pytest.mark.parametrize(
    ("raw", "json_text"),
    [
        ("[{HTTP: 80}, {HTTPS: 443}]", '[{"HTTP": 80}, {"HTTPS": 443}]'),
        ("[{'HTTPS': 443}]", '[{"HTTPS": 443}]'),  # single quotes
        ("[{HTTPS: '443'}]", '[{"HTTPS": "443"}]'),  # single quotes around a value: only the quoting is repaired
        ("[{Https : 8443}]", '[{"Https": 8443}]'),  # mixed case, a space before the colon
        ("[{HTTPS: }]", None),  # no port: not repairable
        ("[{1: 443}]", None),  # not a protocol name
    ],
)
def test_yaml_style_text_is_repaired_to_the_json_meant(raw: str, json_text: str | None) -> None:
    assert _repair_listen_ports(raw) == json_text


def test_unparseable_text_proposes_its_own_repair_or_else_the_recommended_value() -> None:
    raw = "[{HTTPS: 8443}]"
    assert _listen_ports(raw) == (None, BAD.format(raw=raw, fixed='[{"HTTPS": 8443}]'))
    raw = "[{HTTPS: 443"
    assert _listen_ports(raw) == (None, BAD.format(raw=raw, fixed=RECOMMENDED_LISTEN_PORTS))


@pytest.mark.parametrize("raw", ["443", '{"HTTPS": 443}', '[{"HTTP": 80, "HTTPS": 443}]', '["HTTPS"]', "[{}]"])
def test_json_that_is_not_a_list_of_one_key_objects_is_refused(raw: str) -> None:
    assert _listen_ports(raw) == (None, NOT_A_LIST.format(raw=raw))


def test_a_port_that_is_not_an_integer_is_no_port() -> None:
    assert _listen_ports('[{"HTTP": 80}, {"HTTPS": "443"}]') == ([("HTTP", 80), ("HTTPS", -1)], None)
    assert _listen_ports("[]") == ([], None)
