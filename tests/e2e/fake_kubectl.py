"""A stand-in for kubectl (the Kube class runs it as its `kubectl`): a JSON state file of objects per kind, every
command appended to a log. A deleted object stays listed for two more `get`s, as an Ingress does until the load
balancer controller's finalizer has removed its ALB; deleting the NodePools removes their NodeClaims (Karpenter).
FAKE_KUBECTL_UNREACHABLE makes every command fail as kubectl does when the API server does not answer; the kinds
listed in the state's "absent" have no CRD."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    state_path = Path(os.environ["FAKE_KUBECTL_STATE"])
    state = json.loads(state_path.read_text())
    args = argv[2:] if argv[:1] == ["--kubeconfig"] else argv
    with Path(os.environ["FAKE_KUBECTL_LOG"]).open("a") as log:
        log.write(" ".join(args) + "\n")
    if os.environ.get("FAKE_KUBECTL_UNREACHABLE"):
        print("E1205 07:00:00 memcache.go:265] couldn't get current server API group list: Get "
              "\"https://ABC.gr7.us-west-2.eks.amazonaws.com/api\": dial tcp 203.0.113.9:443: i/o timeout\n"
              "Unable to connect to the server: dial tcp 203.0.113.9:443: i/o timeout", file=sys.stderr)
        return 1
    if args[:2] == ["get", "--raw"]:
        print(json.dumps({"major": "1", "minor": "34"}))
        return 0
    if args[0] == "get" and args[1] in state.get("absent", []):
        print(f"error: the server doesn't have a resource type \"{args[1].split('.')[0]}\"", file=sys.stderr)
        return 1
    verb, kind = args[0], args[1] if len(args) > 1 else ""
    objects = state.setdefault("objects", {}).setdefault(kind, [])
    if verb == "get":
        for item in objects:
            if item.get("deleting") is not None:
                item["deleting"] -= 1
        objects[:] = [i for i in objects if i.get("deleting") is None or i["deleting"] >= 0]
        print(json.dumps({"items": objects}))
    elif verb == "delete":
        if "--all" in args:
            state["objects"][kind] = []
            if kind == "nodepools.karpenter.sh":
                for claim in state["objects"].get("nodeclaims.karpenter.sh", []):
                    claim["deleting"] = 2
        else:
            for item in objects:
                if item["metadata"]["name"] == args[2]:
                    item["deleting"] = 2
            if kind == "persistentvolumeclaims":  # the bound PV (reclaim policy Delete) goes after its claim
                for volume in state["objects"].get("persistentvolumes", []):
                    if volume["spec"]["claimRef"]["name"] == args[2]:
                        volume["deleting"] = 4
    state_path.write_text(json.dumps(state))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
