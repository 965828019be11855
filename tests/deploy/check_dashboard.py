#!/usr/bin/env python3
"""Checks deploy/grafana/gpuaas-dashboard.json (and the metric names of deploy/prometheus/alerts.yml).

  check_dashboard.py --dashboard D.json --alerts alerts.yml [--promtool PATH] [--families SRC]

Always: the JSON parses and is importable as is (uid, title, schemaVersion >= 37, a datasource
variable, the cluster_queue and namespace variables, every panel with a gridPos, a datasource
and targets with expr and refId). With --promtool: every dashboard expr parses as PromQL (the
Grafana variables replaced by plain values). With --families (a URL such as
http://127.0.0.1:9464/metrics/families, or a file holding its JSON): every gpuaas_* metric
named in the dashboard's and the alerts' expressions is a family gpuaasd registers, so a
renamed metric breaks this check rather than a panel in production.
Exits 1 with one line per problem.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request

METRIC = re.compile(r"gpuaas_[a-z0-9_]+")
# Series suffixes Prometheus derives from one histogram (or summary) family.
DERIVED = ("_bucket", "_sum", "_count")
# Grafana's variables, replaced by values promtool accepts, for the PromQL syntax check.
GRAFANA_VARS = [
    ("$__rate_interval", "5m"),
    ("$__interval", "1m"),
    ("$__range", "1h"),
    ("$cluster_queue", ".*"),
    ("$namespace", ".*"),
]


def dashboard_exprs(dash, problems):
    """Every expr of the dashboard (targets and variable queries), checking the structure."""
    exprs = []
    for key in ("uid", "title"):
        if not dash.get(key):
            problems.append(f"dashboard: no {key}")
    if dash.get("schemaVersion", 0) < 37:
        problems.append(f"dashboard: schemaVersion {dash.get('schemaVersion')} < 37")
    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        problems.append("dashboard: no datasource variable of type datasource/prometheus")
    for name in ("cluster_queue", "namespace"):
        v = variables.get(name)
        query = (v or {}).get("query")
        query = query.get("query") if isinstance(query, dict) else query
        if not v or v.get("type") != "query" or not str(query).startswith("label_values("):
            problems.append(f"dashboard: no {name} variable from label_values")
            continue
        exprs.append((f"variable {name}", query))

    panels = []
    for p in dash.get("panels", []):
        panels.append(p)
        panels.extend(p.get("panels", []))  # collapsed rows hold their panels
    ids = set()
    for p in panels:
        where = f"panel {p.get('id')} '{p.get('title')}'"
        if p.get("id") in ids:
            problems.append(f"{where}: duplicate id")
        ids.add(p.get("id"))
        grid = p.get("gridPos", {})
        if not all(isinstance(grid.get(k), int) for k in ("h", "w", "x", "y")):
            problems.append(f"{where}: no gridPos with h, w, x and y")
        elif grid["x"] + grid["w"] > 24:
            problems.append(f"{where}: wider than the 24-column grid")
        if p.get("type") == "row":
            continue
        if not p.get("datasource"):
            problems.append(f"{where}: no datasource")
        targets = p.get("targets") or []
        if not targets:
            problems.append(f"{where}: no targets")
        ref_ids = [t.get("refId") for t in targets]
        if len(set(ref_ids)) != len(ref_ids) or not all(ref_ids):
            problems.append(f"{where}: targets need distinct refIds")
        for t in targets:
            if not t.get("expr"):
                problems.append(f"{where}: target {t.get('refId')} has no expr")
            else:
                exprs.append((f"{where} target {t.get('refId')}", t["expr"]))
    return exprs


def alert_exprs(path):
    with open(path) as f:
        text = f.read()
    try:
        import yaml
    except ImportError:  # without PyYAML: every name anywhere in the file counts
        return [(path, text)]
    rules = yaml.safe_load(text)
    return [
        (f"{path} rule {r.get('alert') or r.get('record')}", r["expr"])
        for g in rules.get("groups", [])
        for r in g.get("rules", [])
    ]


def load_families(src):
    if re.match(r"https?://", src):
        with urllib.request.urlopen(src, timeout=10) as r:
            data = json.load(r)
    else:
        with open(src) as f:
            data = json.load(f)
    return {f["name"]: f.get("type", "") for f in data}


def family_of(name, families):
    if name in families:
        return name
    for suffix in DERIVED:
        base = name[: -len(suffix)]
        if name.endswith(suffix) and families.get(base) in ("histogram", "summary"):
            return base
    return None


def check_promql(promtool, exprs, problems):
    """Dashboard exprs through `promtool check rules` as recording rules: PromQL syntax."""
    rules = []
    for i, (where, expr) in enumerate(exprs):
        if expr.startswith("label_values("):
            continue
        for var, value in GRAFANA_VARS:
            expr = expr.replace(var, value)
        rules.append({"record": f"dashboard:expr_{i}", "expr": expr, "_where": where})
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "dashboard_rules.yml")
        with open(path, "w") as f:
            body = [{k: v for k, v in r.items() if k != "_where"} for r in rules]
            json.dump({"groups": [{"name": "dashboard", "rules": body}]}, f)  # JSON is YAML
        r = subprocess.run([promtool, "check", "rules", path], capture_output=True, text=True)
        if r.returncode != 0:
            problems.append("dashboard: PromQL does not parse:\n" + r.stdout + r.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dashboard", required=True)
    ap.add_argument("--alerts", required=True)
    ap.add_argument("--promtool", help="check the dashboard's PromQL with this promtool")
    ap.add_argument("--families", help="URL of gpuaasd's /metrics/families, or a JSON file")
    args = ap.parse_args()

    problems = []
    try:
        with open(args.dashboard) as f:
            dash = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{args.dashboard}: {e}")
        return 1
    exprs = dashboard_exprs(dash, problems)
    if args.promtool:
        check_promql(args.promtool, exprs, problems)
    exprs += alert_exprs(args.alerts)

    names = 0
    if args.families:
        families = load_families(args.families)
        if not families:
            problems.append(f"{args.families}: no families")
        for where, expr in exprs:
            for name in sorted(set(METRIC.findall(expr))):
                names += 1
                if family_of(name, families) is None:
                    problems.append(f"{where}: {name} is not a family gpuaasd registers")

    for p in problems:
        print(p)
    if not problems:
        print(f"ok: {len(exprs)} expressions" + (f", {names} metric names" if args.families else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
