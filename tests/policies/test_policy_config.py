"""policies/config/prod.json: raises the *prod* policies of docs/policies.md, never lowers a default."""

from __future__ import annotations

import json
from pathlib import Path

from policies.gpu_guard.base import EnforcementLevel, all_meta, all_policies, is_raise_or_equal
from tests.policies.catalogue import catalogue

PROD = Path(__file__).resolve().parents[2] / "policies" / "config" / "prod.json"
_LEVELS = {level.value: level for level in EnforcementLevel}


def _prod() -> dict[str, dict[str, object]]:
    data = json.loads(PROD.read_text())
    assert isinstance(data, dict)
    return data


def test_prod_config_names_only_registered_policies():
    unknown = sorted(set(_prod()) - set(all_meta()))
    assert not unknown, f"prod.json names policies the pack does not have: {unknown}"


def test_prod_config_only_raises_enforcement():
    meta = all_meta()
    for name, entry in _prod().items():
        level = _LEVELS[str(entry["enforcementLevel"])]
        assert is_raise_or_equal(meta[name].default, level), f"{name}: prod.json lowers {meta[name].default.value}"


def test_every_prod_policy_of_the_catalogue_is_mandatory_in_prod():
    prod = _prod()
    raised = [name for name, (default, prod_level) in catalogue().items()
              if prod_level != default]
    assert raised, "docs/policies.md marks policies mandatory in prod"
    for name in raised:
        assert prod.get(name, {}).get("enforcementLevel") == "mandatory", f"{name} is *prod* mandatory"


def test_prod_system_node_group_needs_two_nodes_in_two_zones():
    entry = _prod()["system-node-group-present"]
    assert entry["minNodes"] == 2
    assert entry["minZones"] == 2


def test_prod_properties_fit_each_policys_config_schema():
    schemas = {p.name: p.config_schema for p in all_policies()}
    for name, entry in _prod().items():
        props = {k: v for k, v in entry.items() if k != "enforcementLevel"}
        schema = schemas[name]
        if not props:
            continue
        assert schema is not None, f"{name} takes no config properties but prod.json sets {props}"
        for key, value in props.items():
            assert key in schema.properties, f"{name}: unknown config property {key}"
            spec = schema.properties[key]
            if spec["type"] == "boolean":  # a requirement switched on; prod never switches one off
                assert value is True, f"{name}.{key} may only turn a requirement on"
                continue
            assert spec["type"] == "integer" and isinstance(value, int), f"{name}.{key}"
            assert value >= spec.get("minimum", value)
            assert value >= spec.get("default", value), f"{name}.{key} may only be raised above the default"


def test_prod_control_plane_needs_deletion_protection_and_standard_support():
    entry = _prod()["eks-control-plane-hardened"]
    assert entry["requireDeletionProtection"] is True
    assert entry["requireStandardSupport"] is True


def test_prod_keeps_its_waf_promise_a_public_alb_without_a_web_acl_blocks_in_prod():
    """Issue 45: prod.json raised alb-waf-attached, but an ALB with no WAF annotation lands on the advisory twin, so a
    prod stack with a public ALB and no web ACL passed. Prod raises the twin too; never a -pending/-caveats twin,
    which fire in every first preview."""
    import yaml  # noqa: PLC0415

    from policies.gpu_guard.base import companions_of  # noqa: PLC0415
    from tests.policies.harness import FIXTURES, apply_patch, run_policy  # noqa: PLC0415

    prod = _prod()
    assert not [name for name in prod if name.endswith(("-pending", "-caveats"))]
    folder = FIXTURES / "alb-waf-attached"
    baseline = yaml.safe_load((folder / "baseline.yaml").read_text())
    patch = yaml.safe_load((folder / "fail_without_waf.yaml").read_text())["patch"]
    resources = apply_patch(baseline["resources"], patch)
    policies = {p.name: p for p in all_policies()}
    found = [v for p in (policies["alb-waf-attached"], *companions_of("alb-waf-attached"))
             for v in run_policy(p, resources, prod.get(p.name)).violations]
    assert [(v.policy, v.level) for v in found] == [("alb-waf-attached-unseen", "mandatory")]
    assert "sets no alb.ingress.kubernetes.io/wafv2-acl-arn" in found[0].message
    assert [v for p in (policies["alb-waf-attached"], *companions_of("alb-waf-attached"))
            for v in run_policy(p, baseline["resources"], prod.get(p.name)).violations] == []
