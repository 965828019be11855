#!/usr/bin/env bash
# The demo: a simulated day on a shared GPU cluster under gpuaas and two baselines; then a real
# nats-server on 127.0.0.1, gpuaasd on an example policy, a small GPU cluster
# published as Kubernetes objects and a dcgm-exporter scrape, then what the daemon holds.
# Usage: deploy/demo/run-demo.sh [BUILD_DIR]. Leaves nothing running; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for ((i=${#PIDS[@]}-1; i>=0; i--)); do kill "${PIDS[i]}" 2>/dev/null || true; wait "${PIDS[i]}" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

NATS_PORT=$(free_port)
ADMIN=127.0.0.1:$(free_port)
export GPUAAS_SERVER=nats://127.0.0.1:$NATS_PORT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# Part 1: a day on a shared GPU cluster, simulated (virtual time, gpuaasd's real decisions), side
# by side with two simpler policies; the chart lands in $CHART_DIR.
CHART_DIR=${CHART_DIR:-/tmp}
step "A day on a shared GPU cluster: gpuaas-sim --scenario deploy/demo/day/scenario.yaml --compare static-fifo,kueue-like,gpuaas"
"$B/bin/gpuaas-sim" --scenario deploy/demo/day/scenario.yaml --seed 1 \
  --compare static-fifo,kueue-like,gpuaas --report "$CHART_DIR/gpuaas-demo-day.json" \
  --chart "$CHART_DIR/gpuaas-demo-day.svg"
echo "(report: $CHART_DIR/gpuaas-demo-day.json, chart: $CHART_DIR/gpuaas-demo-day.svg)"

# Part 2: the same daemon live, on a real nats-server, with objects as a bridge would publish them.
step "nats-server with JetStream on $GPUAAS_SERVER"
nats-server -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$WORK/jetstream" >"$WORK/nats.log" 2>&1 & PIDS+=($!)
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/"$NATS_PORT") 2>/dev/null && break; sleep 0.1; done

step "gpuaasd --policy policies/examples/two-teams.yaml --plugins $B/plugins (admin on $ADMIN)"
"$B/bin/gpuaasd" --policy policies/examples/two-teams.yaml --plugins "$B/plugins" --admin "$ADMIN" \
  >"$WORK/gpuaasd.log" 2>&1 & PIDS+=($!)
for _ in $(seq 100); do "$B/bin/gpuaasctl" state >/dev/null 2>&1 && break; sleep 0.1; done
sed -n '1,14p' "$WORK/gpuaasd.log"

step "gpuaasctl plugins (the workload kinds the daemon understands)"
"$B/bin/gpuaasctl" plugins

step "gpuaasctl apply -f deploy/demo/cluster.yaml"
"$B/bin/gpuaasctl" apply -f deploy/demo/cluster.yaml
step "gpuaasctl push-metrics deploy/demo/dcgm-scrape.prom"
"$B/bin/gpuaasctl" push-metrics deploy/demo/dcgm-scrape.prom
if [ -d ../shared/manifests/gpu-node ]; then
  step "gpuaasctl apply -f ../shared/manifests/gpu-node/virtual-gpu-node.yaml (published by kwok)"
  "$B/bin/gpuaasctl" apply -f ../shared/manifests/gpu-node/virtual-gpu-node.yaml
fi

step "bad input: a message that is not an event goes to the dead-letter subject"
"$B/bin/gpuaasctl" watch deadletter --count 1 --timeout 10 > "$WORK/dead.txt" &
WATCH=$!
for _ in $(seq 20); do
  sleep 0.3
  kill -0 $WATCH 2>/dev/null || break
  python3 - "$NATS_PORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.recv(4096)
body = b"this is not an event"
s.sendall(b'CONNECT {"verbose":false}\r\nPUB gpuaas.v1.events.team-a.Pod %d\r\n%s\r\nPING\r\n' % (len(body), body))
s.recv(64)
PY
done
wait $WATCH || true
cat "$WORK/dead.txt"

# Let the daemon apply what was published (bounded wait on its own counter).
for _ in $(seq 50); do
  "$B/bin/gpuaasctl" state --json | python3 -c 'import json,sys; s=json.load(sys.stdin); sys.exit(0 if len(s["nodes"])>=2 and s["metrics"]["series"]>=7 else 1)' && break
  sleep 0.1
done
step "gpuaasctl state"
"$B/bin/gpuaasctl" state

step "what the plugins say each workload asks for"
"$B/bin/gpuaasctl" state --json | python3 -c "$(cat <<'PY'
import json, sys
s = json.load(sys.stdin)
for w in s["workloads"]:
    d = w.get("demand")
    if not d:
        continue
    sets = ", ".join("%s x%d (%s)" % (p["name"], p["count"], " ".join("%s=%s" % kv for kv in p["per_pod"].items()))
                     for p in d["pod_sets"])
    print("  %s %s/%s [%s, plugin %s, queue %s]: %s" % (w["kind"], w["namespace"], w["name"], w["state"],
          w["plugin"], w["queue"] or "-", sets))
PY
)"

step "per-GPU activity the daemon matched to nodes (from dcgm-exporter labels)"
"$B/bin/gpuaasctl" state --json | python3 -c "$(cat <<'PY'
import json, sys
s = json.load(sys.stdin)
for n in s["nodes"]:
    for gpu, m in sorted(n.get("gpu_metrics", {}).items()):
        print("  %s gpu %s: utilization %s%%" % (n["name"], gpu, m.get("DCGM_FI_DEV_GPU_UTIL", "-")))
for w in s["workloads"]:
    if not w.get("plugin"):
        continue
    util = w["metrics"].get("DCGM_FI_DEV_GPU_UTIL")
    print("  %s %s/%s: pods %s, GPU utilization %s" % (w["kind"], w["namespace"], w["name"],
          ", ".join(w["pods"]), "%.0f%% mean over %d GPUs" % (util["mean"], util["series"]) if util else "-"))
PY
)"

step "admission: gpuaasctl apply -f deploy/demo/queued-jobs.yaml (suspended PyTorchJobs in the teams' queues)"
"$B/bin/gpuaasctl" watch actions --timeout 6 --json > "$WORK/actions.json" &
WATCH=$!
sleep 0.5
"$B/bin/gpuaasctl" apply -f deploy/demo/queued-jobs.yaml
wait $WATCH || true
echo "decisions on gpuaas.v1.actions (the plugin's patch plus a placement hint):"
python3 - "$WORK/actions.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    a = json.loads(line)
    t = a["target"]
    hint = a.get("body", {}).get("metadata", {}).get("annotations", {}).get("gpuaas.io/placement")
    where = ""
    if hint:
        h = json.loads(hint)
        where = " on %s: %s" % (h["flavor"], "; ".join("%s -> %s" % (p["podSet"], p["nodes"]) for p in h["podSets"]))
    print("  %s %s/%s [%s]%s" % (a["operation"], t["namespace"], t["name"], a["rule"], where))
    print("    %s" % a["reason"])
PY
for w in team-b/eval-1 team-b/train-1; do
  step "gpuaasctl explain $w"
  "$B/bin/gpuaasctl" explain "$w" || true
done

step "curl http://$ADMIN/metrics (excerpt)"
curl -fsS "http://$ADMIN/metrics" | grep -E '^gpuaas_(events|admission_decisions|policy_reloads)' || true
echo
echo "demo done: the daemon held the cluster above; everything it started is stopped now."
