"""A stand-in for kubectl (the Kube class runs it as its `kubectl`): a JSON state file of objects per kind, every
command appended to a log. A deleted object stays listed for two more `get`s, as an Ingress does until the load
balancer controller's finalizer has removed its ALB; deleting the NodePools removes their NodeClaims (Karpenter)."""

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
    state_path.write_text(json.dumps(state))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
