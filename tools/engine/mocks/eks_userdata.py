"""pulumi-eks's `createUserData` (nodejs/eks/nodes/userdata.ts), for the launch templates the emulation registers.

A node's taints and labels reach the kubelet through the user data pulumi-eks writes: `--register-with-taints` /
`--node-labels` kubelet flags after `/etc/eks/bootstrap.sh --kubelet-extra-args` (AL2, userdata.ts 185-249), a
`NodeConfig` whose `spec.kubelet.flags` carry the same flags (AL2023's nodeadm, a MIME multipart document,
userdata.ts 253-368), or Bottlerocket's TOML `settings.kubernetes.node-taints` / `node-labels` (userdata.ts 410-501).
Managed node groups get a MIME multipart document in every case but Bottlerocket (userdata.ts 215-226).

The text is built as pulumi-eks builds it, byte for byte for the cases of its own tests (userdata.test.ts and its
snapshots, run by tests/tools/test_eks_userdata.py): js-yaml's `dump` and @iarna/toml's `stringify` are reproduced
for the values pulumi-eks gives them (mappings of strings, lists of strings; TOML tables of scalars and arrays of
scalars), and a value outside that subset raises `NotEmulated`, never a made-up text.

Read at pulumi/pulumi-eks 7bf0c1b1 (v4.3.0-9), as tools/engine/mocks/eks_children.py says why.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tools.engine.mocks.eks_ami import PulumiEksInputError
from tools.engine.mocks.eks_children import Cite

USERDATA_TS = "nodejs/eks/nodes/userdata.ts"

SOURCE: dict[str, Cite] = {
    "createUserData": Cite(USERDATA_TS, 158, "export function createUserData("),
    "userDataOverride": Cite(USERDATA_TS, 165, "if (userDataArgs.userDataOverride) {"),
    "osUserDataType": Cite(USERDATA_TS, 30, "const osUserDataType: { [key in OperatingSystem]: UserDataType } = {"),
    "linux": Cite(USERDATA_TS, 185, "function createLinuxUserData("),
    "linux.bootstrap": Cite(USERDATA_TS, 213, "/etc/eks/bootstrap.sh --apiserver-endpoint"),
    "linux.mime": Cite(USERDATA_TS, 219, 'Content-Type: multipart/mixed; boundary="==MYBOUNDARY=="'),
    "linux.cfnSignal": Cite(USERDATA_TS, 248, "/opt/aws/bin/cfn-signal --exit-code $? --stack ${args.stackName}"),
    "nodeadm": Cite(USERDATA_TS, 253, "function createNodeadmUserData("),
    "nodeadm.kubeletFlags": Cite(USERDATA_TS, 311, "kubelet: {"),
    "nodeadm.assemble": Cite(USERDATA_TS, 350, "function assembleNodeadmUserData("),
    "kubeletFlags": Cite(USERDATA_TS, 377, "function buildKubeletFlags(args: UserDataArgs): string[] {"),
    "kubeletFlags.labels": Cite(USERDATA_TS, 385, 'kubeletExtraArgs.push("--node-labels=" + parts.join(","));'),
    "kubeletFlags.taints": Cite(USERDATA_TS, 400,
        'kubeletExtraArgs.push("--register-with-taints=" + parts.join(","));'),
    "bottlerocket": Cite(USERDATA_TS, 410, "function createBottlerocketUserData("),
    "bottlerocket.taints": Cite(USERDATA_TS, 458, 'return { [key]: `${taint.value ?? ""}:${taint.effect}` };'),
    "bottlerocket.sorted": Cite(USERDATA_TS, 510, ".sort(([a], [b]) => a.localeCompare(b))"),
    "clusterDnsIp": Cite(USERDATA_TS, 528, "export function getClusterDnsIp(serviceCidr: string, parent:"),
}

MANAGED, SELF_MANAGED_V1, SELF_MANAGED_V2 = "managed", "self-managed-v1", "self-managed-v2"
_USER_DATA_TYPE = {"AL2": "linux", "AL2023": "nodeadm", "Bottlerocket": "bottlerocket"}  # userdata.ts 30-34


class NotEmulated(ValueError):
    """A value the emulated js-yaml / TOML writers do not reproduce: the launch template is not emulated."""


def create_user_data(os_: str, cluster: Mapping[str, str], args: Mapping[str, Any]) -> str:
    """`createUserData` (userdata.ts 158-183). `cluster`: name, apiServerEndpoint, certificateAuthority, serviceCidr;
    `args`: nodeGroupType, kubeletExtraArgs, bootstrapExtraArgs, labels, taints (`{key: {value, effect}}`),
    userDataOverride, bottlerocketSettings, nodeadmExtraOptions (`[{contentType, content}]`), and for self-managed
    groups stackName, extraUserData, awsRegion (v1)."""
    if args.get("userDataOverride"):
        return str(args["userDataOverride"])
    kind = _USER_DATA_TYPE[os_]
    if kind == "linux":
        return _linux(cluster, args)
    if kind == "nodeadm":
        return _nodeadm(cluster, args)
    return _bottlerocket(cluster, args)


def _no_bottlerocket_settings(args: Mapping[str, Any], what: str) -> None:
    if args.get("nodeGroupType") in (MANAGED, SELF_MANAGED_V2) and args.get("bottlerocketSettings"):
        raise PulumiEksInputError(f"The 'bottlerocketSettings' argument is not supported for {what}.")


def kubelet_flags(args: Mapping[str, Any]) -> list[str]:
    """`buildKubeletFlags` (userdata.ts 377-404): the extra args split on spaces, then labels, then taints."""
    flags = str(args["kubeletExtraArgs"]).split(" ") if args.get("kubeletExtraArgs") else []
    labels = args.get("labels") or {}
    if labels:
        flags.append("--node-labels=" + ",".join(f"{k}={v}" for k, v in labels.items()))
    taints = args.get("taints") or {}
    if taints:
        flags.append("--register-with-taints=" + ",".join(
            f"{k}={t['value']}:{t['effect']}" if t.get("value") else f"{k}:{t['effect']}" for k, t in taints.items()))
    return flags


def _linux(cluster: Mapping[str, str], args: Mapping[str, Any]) -> str:
    """`createLinuxUserData` (userdata.ts 185-249)."""
    _no_bottlerocket_settings(args, "Linux based user data")
    flags = kubelet_flags(args)
    extra = " " + str(args["bootstrapExtraArgs"]) if args.get("bootstrapExtraArgs") else ""
    if len(flags) == 1:
        extra += f" --kubelet-extra-args {flags[0]}"
    elif len(flags) > 1:
        extra += " --kubelet-extra-args '" + " ".join(flags) + "'"
    base = (f'#!/bin/bash\n\n/etc/eks/bootstrap.sh --apiserver-endpoint "{cluster["apiServerEndpoint"]}" '
            f'--b64-cluster-ca "{cluster["certificateAuthority"]}" "{cluster["name"]}"{extra}')
    kind = args.get("nodeGroupType")
    if kind == MANAGED:
        return ('MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="==MYBOUNDARY=="\n\n--==MYBOUNDARY==\n'
                f'Content-Type: text/x-shellscript; charset="us-ascii"\n\n{base}\n--==MYBOUNDARY==--')
    extra_user_data = ""
    if args.get("extraUserData"):
        stack = args["stackName"]
        extra_user_data = (f"cat >/opt/user-data <<{stack}-user-data\n{args['extraUserData']}\n{stack}-user-data\n"
                           "chmod +x /opt/user-data\n/opt/user-data\n")
    user_data = f"{base}\n{extra_user_data}\n"
    if kind != SELF_MANAGED_V1:
        return user_data
    return (f"{user_data}/opt/aws/bin/cfn-signal --exit-code $? --stack {args['stackName']} --resource NodeGroup "
            f"--region {args['awsRegion']}\n")


_SKELETON = {"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig"}


def _nodeadm(cluster: Mapping[str, str], args: Mapping[str, Any]) -> str:
    """`createNodeadmUserData` (userdata.ts 253-348) and `assembleNodeadmUserData` (350-368)."""
    _no_bottlerocket_settings(args, "nodeadm based user data")
    if args.get("bootstrapExtraArgs"):
        raise PulumiEksInputError("The 'bootstrapExtraArgs' argument is not supported for nodeadm based user data.")
    base = {**_SKELETON, "spec": {"cluster": {
        "name": cluster["name"], "apiServerEndpoint": cluster["apiServerEndpoint"],
        "certificateAuthority": cluster["certificateAuthority"], "cidr": cluster["serviceCidr"]}}}
    parts = [("application/node.eks.aws", "---\n" + js_yaml_dump(base))]
    flags = kubelet_flags(args)
    if flags:
        parts.append(("application/node.eks.aws",
                      "---\n" + js_yaml_dump({**_SKELETON, "spec": {"kubelet": {"flags": flags}}})))
    for option in args.get("nodeadmExtraOptions") or []:
        parts.append((str(option["contentType"]), str(option["content"])))
    shell = 'text/x-shellscript; charset="us-ascii"'
    if args.get("nodeGroupType") in (SELF_MANAGED_V1, SELF_MANAGED_V2) and args.get("extraUserData"):
        parts.append((shell, str(args["extraUserData"])))
    if args.get("nodeGroupType") == SELF_MANAGED_V1:
        parts.append((shell, f"#!/bin/bash\n\n/opt/aws/bin/cfn-signal --exit-code $? --stack {args['stackName']} "
                             f"--resource NodeGroup --region {args['awsRegion']}\n"))
    text = 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="BOUNDARY"\n\n'
    for content_type, content in parts:
        text += f"--BOUNDARY\nContent-Type: {content_type}\n\n{content}\n"
    return text + "--BOUNDARY--\n"


def _bottlerocket(cluster: Mapping[str, str], args: Mapping[str, Any]) -> str:
    """`createBottlerocketUserData` (userdata.ts 410-501)."""
    if args.get("bootstrapExtraArgs"):
        raise PulumiEksInputError("The 'bootstrapExtraArgs' argument is not supported with Bottlerocket.")
    if args.get("kubeletExtraArgs"):
        raise PulumiEksInputError("The 'kubeletExtraArgs' argument is not supported with Bottlerocket.")
    if args.get("nodeGroupType") in (SELF_MANAGED_V1, SELF_MANAGED_V2) and args.get("extraUserData"):
        raise PulumiEksInputError("Bottlerocket does not support running scripts as part of the user data. If you "
                                  "need to run scripts, please use a different OS.")
    kubernetes: dict[str, Any] = {
        "cluster-name": cluster["name"], "api-server": cluster["apiServerEndpoint"],
        "cluster-certificate": cluster["certificateAuthority"],
        "cluster-dns-ip": cluster_dns_ip(cluster["serviceCidr"]),
    }
    if args.get("labels"):
        kubernetes["node-labels"] = dict(args["labels"])
    if args.get("taints"):
        kubernetes["node-taints"] = {k: f"{t.get('value') or ''}:{t['effect']}" for k, t in args["taints"].items()}
    settings_doc: dict[str, Any] = json.loads(json.dumps(args.get("bottlerocketSettings") or {}))
    if not isinstance(settings_doc.get("settings"), dict):
        settings_doc["settings"] = {}
    settings = settings_doc["settings"]
    if not isinstance(settings.get("kubernetes"), dict):
        settings["kubernetes"] = {}
    if args.get("nodeGroupType") == SELF_MANAGED_V1:
        settings["cloudformation"] = {"should-signal": True, "stack-name": args["stackName"],
                                      "logical-resource-id": "NodeGroup", **(settings.get("cloudformation") or {})}
    settings["kubernetes"] = {**kubernetes, **settings["kubernetes"]}
    return toml_stringify(_sorted(settings_doc))


def cluster_dns_ip(service_cidr: str) -> str:
    """`getClusterDnsIp` (userdata.ts 528-558): the network address of the service CIDR plus 10."""
    try:
        network = ipaddress.ip_network(service_cidr, strict=False)
        if "/" not in service_cidr:
            raise ValueError(service_cidr)
        return str(network.network_address + 10)
    except ValueError as exc:
        raise PulumiEksInputError("Couldn't calculate the cluster dns ip based on the service CIDR. ipaddr: the "
                                  "address has neither IPv6 nor IPv4 CIDR format") from exc


def _locale_key(key: str) -> tuple[str, str]:
    """`a.localeCompare(b)` for the keys Bottlerocket settings use (ASCII): case-insensitive first, lower first."""
    return key.lower(), key.swapcase()


def _sorted(value: Any) -> Any:
    """`normalizeProperties` (userdata.ts 503-515): every object's keys sorted."""
    if not isinstance(value, Mapping):
        return value
    return {k: _sorted(value[k]) for k in sorted(value, key=_locale_key)}


# --- @iarna/toml 2.2.5 `stringify` for tables of scalars (lib/stringify.js: stringifyObject, stringifyComplexTable).
_BARE_KEY = re.compile(r"^[-A-Za-z0-9_]+$")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def _toml_inline(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():  # a JS number that is an integer (protobuf makes it float)
        value = int(value)
    if isinstance(value, int):
        return re.sub(r"\B(?=(\d{3})+(?!\d))", "_", str(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list) and not any(isinstance(v, (Mapping, list)) for v in value):
        return "[ " + ", ".join(_toml_inline(v) for v in value) + " ]" if value else "[]"
    raise NotEmulated(f"a TOML value of type {type(value).__name__}")


def toml_stringify(doc: Mapping[str, Any]) -> str:
    return _toml_object("", "", doc)


def _toml_object(prefix: str, indent: str, obj: Mapping[str, Any]) -> str:
    inline = [k for k, v in obj.items() if not isinstance(v, Mapping)]
    complex_ = [k for k, v in obj.items() if isinstance(v, Mapping)]
    result = [f"{indent}{_toml_key(k)} = {_toml_inline(obj[k])}" for k in inline if obj[k] is not None]
    if result:
        result.append("")
    complex_indent = indent + "  " if prefix and inline else ""
    for key in complex_:
        full = prefix + _toml_key(key)
        header = f"{complex_indent}[{full}]\n" if any(not isinstance(v, Mapping) for v in obj[key].values()) else ""
        result.append(header + _toml_object(full + ".", complex_indent, obj[key]))
    return "\n".join(result)


# --- js-yaml 4 `dump` (lib/dumper.js) for block mappings of strings and lists of strings, the default options.
_PLAIN_FIRST_FORBIDDEN = set("-?:,[]{}#&*!|=>'\"%@`")
_AMBIGUOUS = re.compile(
    r"^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?(?:0|[1-9][0-9_]*)|0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+"
    r"|[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
    r"|\d{4}-\d\d?-\d\d?(?:[Tt ].*)?|<<)$")


def _plain(value: str) -> bool:
    if not value or value[0].isspace() or value[-1].isspace() or value[0] in _PLAIN_FIRST_FORBIDDEN:
        return False
    if ": " in value or " #" in value or value.endswith(":") or "\n" in value:
        return False
    return _AMBIGUOUS.match(value) is None


def _yaml_scalar(value: str, level: int) -> str:
    indent = 2 * max(1, level)
    width = max(min(80, 40), 80 - indent)
    if "\n" not in value and len(value) - 1 > width and " " not in value:
        return ">-\n" + " " * indent + value
    if _plain(value) and "\n" not in value and len(value) - 1 <= width:
        return value
    if "\n" in value or len(value) - 1 > width:
        raise NotEmulated("a long or multi-line YAML string")
    return "'" + value.replace("'", "''") + "'"


def js_yaml_dump(doc: Mapping[str, Any]) -> str:
    return "\n".join(_yaml_mapping(doc, 0)) + "\n"


def _yaml_mapping(doc: Mapping[str, Any], level: int) -> list[str]:
    pad = "  " * level
    lines: list[str] = []
    for key, value in doc.items():
        if not _plain(str(key)):
            raise NotEmulated(f"the YAML key {key!r}")
        if isinstance(value, Mapping):
            lines.append(f"{pad}{key}:")
            lines.extend(_yaml_mapping(value, level + 1))
        elif isinstance(value, Sequence) and not isinstance(value, str):
            lines.append(f"{pad}{key}:")
            for item in value:
                if not isinstance(item, str):
                    raise NotEmulated("a YAML list item that is not a string")
                lines.append(f"{pad}  - {_yaml_scalar(item, level + 2)}")
        elif isinstance(value, str):
            lines.append(f"{pad}{key}: {_yaml_scalar(value, level + 1)}")
        else:
            raise NotEmulated(f"a YAML value of type {type(value).__name__}")
    return lines
