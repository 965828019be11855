#!/usr/bin/env python3
"""Helpers of run-demo.sh's idle reclaim step (standard library only).

  demo.py has ACTIONS NAME RULE          exit 0 once gpuaasd published that action
  demo.py show ACTIONS NAME RULE         print it: operation, target, rule, reason, patch
  demo.py bridge ACTIONS NAME RULE OBJ   apply its merge patch to OBJ (JSON) as the bridge would
  demo.py explain                        summarise `gpuaasctl explain --json` read on stdin
ACTIONS is the output of `gpuaasctl watch actions --json`, one action per line.
"""
import json
import sys


def find(path, name, rule):
    with open(path) as f:
        for line in f:
            try:
                a = json.loads(line)
            except ValueError:
                continue  # the line being written
            if a["target"]["name"] == name and a["rule"] == rule:
                return a
    return None


def merge(target, patch):
    """RFC 7386 JSON merge patch, what the bridge sends to the API server."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


def brief(patch):
    """The patch without pod templates and gpuaas's bookkeeping annotations, to read it."""
    if isinstance(patch, list):
        return [brief(v) for v in patch]
    if not isinstance(patch, dict):
        return patch
    out = {}
    for k, v in patch.items():
        if k == "template" or k in ("gpuaas.io/original-pod-templates", "gpuaas.io/placement"):
            out[k] = "..."
        else:
            out[k] = brief(v)
    return out


def main(argv):
    cmd = argv[1]
    if cmd == "explain":
        x = json.load(sys.stdin)
        print("  state %s, reason %s, quota_reserved_idle %s" %
              (x["state"], x["reason"], str(x.get("quota_reserved_idle")).lower()))
        r = x.get("reclaim")
        if r:
            keys = ["state", "quota", "reserved_until", "rule", "woken_at", "reason"]
            print("  reclaim: " + ", ".join("%s %s" % (k, r[k]) for k in keys if k in r))
        return 0
    a = find(argv[2], argv[3], argv[4])
    if cmd == "has":
        return 0 if a else 1
    if a is None:
        print("  (no %s action for %s)" % (argv[4], argv[3]))
        return 1
    if cmd == "show":
        t = a["target"]
        print("  %s %s %s/%s [%s]" % (a["operation"], t["kind"], t["namespace"], t["name"], a["rule"]))
        print("    %s" % a["reason"])
        print("    patch: %s" % json.dumps(brief(a["body"]), separators=(",", ":")))
        return 0
    if cmd == "bridge":
        with open(argv[5]) as f:
            obj = json.load(f)
        obj = merge(obj, a["body"])
        meta = obj["metadata"]
        meta["resourceVersion"] = str(int(meta.get("resourceVersion", "0")) + 1)
        # What KubeRay reports once the cluster runs.
        if not obj.get("spec", {}).get("suspend", False):
            obj["status"] = {"state": "ready"}
        with open(argv[5], "w") as f:
            json.dump(obj, f, indent=2)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
