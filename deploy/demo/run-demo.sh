#!/usr/bin/env bash
# The demo: a simulated day on a shared GPU cluster under gpuaas and two baselines; then a real
# nats-server on 127.0.0.1, gpuaasd on an example policy, a small GPU cluster
# published as Kubernetes objects and a dcgm-exporter scrape, then what the daemon holds.
# Then idle reclaim with a daemon of its own: a RayCluster goes to zero, its GPUs are lent and
# taken back. Then node scale-out ahead of bursts, simulated; last, a service's replicas sized
# from its capacity, simulated. Usage: deploy/demo/run-demo.sh [BUILD_DIR]; SKIP_DAY=1 skips the simulated day (it
# takes minutes). Leaves nothing running; safe to run again.
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
if [ "${SKIP_DAY:-0}" != 1 ]; then
step "A day on a shared GPU cluster: gpuaas-sim --scenario deploy/demo/day/scenario.yaml --compare static-fifo,kueue-like,gpuaas"
"$B/bin/gpuaas-sim" --scenario deploy/demo/day/scenario.yaml --seed 1 \
  --compare static-fifo,kueue-like,gpuaas --report "$CHART_DIR/gpuaas-demo-day.json" \
  --chart "$CHART_DIR/gpuaas-demo-day.svg"
echo "(report: $CHART_DIR/gpuaas-demo-day.json, chart: $CHART_DIR/gpuaas-demo-day.svg)"
step "gpuaasd's own ledger after the simulated day (what gpuaasctl report prints; docs/cost.md)"
python3 - "$CHART_DIR/gpuaas-demo-day.json" <<'PY'
import json, sys
r = next(x for x in json.load(open(sys.argv[1]))["runs"] if x["policy"] == "gpuaas")["daemon_report"]
print("  %-12s %10s %8s %14s %9s %10s %12s" % ("TENANT", "ALLOCATED", "BUSY", "IDLE-RESERVED", "OUTCOMES", "COST", "PER-OUTCOME"))
for t in r["tenants"]:
    h, c = t["gpu_hours"], t["cost"]
    cpo = "-" if t["cost_per_outcome"] is None else "%.2f" % t["cost_per_outcome"]
    print("  %-12s %10.1f %8.1f %14.1f %9d %10.2f %12s" % (t["tenant"] or "(none)", h["allocated"], h["busy"],
          h["idle_reserved"], t["outcomes"]["total"], c["total"], cpo))
c = r["cluster"]
print("  cluster: %.1f GPU-hours of capacity, cost %.2f %s, idle (charged to nobody) %.2f" % (
      c["capacity_gpu_hours"], c["cost"], r["currency"], c["idle_cost"]))
PY
fi

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

step "curl http://$ADMIN/metrics (excerpt; docs/observability.md lists every family)"
curl -fsS "http://$ADMIN/metrics" |
  grep -E '^gpuaas_(events_processed|pending_workloads|admitted_workloads|cluster_queue_resource_usage\{.*gpu|gpu_allocated_seconds|cost_total|decisions_total)' || true

step "gpuaasctl report --projects (GPU-hours, outcomes and cost per tenant; seconds of event time so far)"
"$B/bin/gpuaasctl" report --projects

# Part 3: idle reclaim. A daemon of its own (subject root "reclaim", fast ticks) on the same
# nats-server keeps the tour's objects and quotas out of it. Nothing applies gpuaasd's patches
# here, so demo.py plays the bridge: it merges each patch into raycluster.json and we publish it.
step "Idle reclaim: a RayCluster goes to zero, its GPUs are lent and taken back"
RD=deploy/demo/reclaim
RCTL=("$B/bin/gpuaasctl" --subject-root reclaim)
RACT=$WORK/reclaim-actions.json
RAY=$WORK/raycluster.json
cp "$RD/raycluster.json" "$RAY"
printf 'subjectRoot: reclaim\ntickInterval: 200ms\npolicyWatchInterval: 0s\n' >"$WORK/reclaim-gpuaasd.yaml"
echo "gpuaasd --config (subjectRoot: reclaim, tickInterval: 200ms) --policy $RD/policy.yaml"
"$B/bin/gpuaasd" --config "$WORK/reclaim-gpuaasd.yaml" --policy "$RD/policy.yaml" \
  --plugins "$B/plugins" --admin "127.0.0.1:$(free_port)" >"$WORK/gpuaasd-reclaim.log" 2>&1 & PIDS+=($!)
for _ in $(seq 100); do "${RCTL[@]}" state >/dev/null 2>&1 && break; sleep 0.1; done
"${RCTL[@]}" watch actions --timeout 180 --json >"$RACT" & PIDS+=($!)
sleep 0.5  # the watcher reads the actions from now on: let it subscribe first
# await NAME RULE SECONDS [COMMAND...]: a bounded wait for gpuaasd's action, COMMAND run between
# looks (a scraper pushing samples).
await() {
  local name=$1 rule=$2 secs=$3
  shift 3
  for _ in $(seq $((secs * 2))); do
    python3 "$RD/demo.py" has "$RACT" "$name" "$rule" && return 0
    if [ $# -gt 0 ]; then "$@" >/dev/null; fi
    sleep 0.5
  done
  echo "no $rule action for $name within ${secs}s; gpuaasd's log:" >&2
  tail -20 "$WORK/gpuaasd-reclaim.log" >&2
  return 1
}
ray_apply() { "${RCTL[@]}" apply -f "$RAY" >/dev/null; }

echo "gpuaasctl apply -f $RD/objects.yaml, then -f raycluster.json (suspended, queue serve: 2 GPUs)"
"${RCTL[@]}" apply -f "$RD/objects.yaml" >/dev/null
ray_apply
await chat-ray admission/quota 15
python3 "$RD/demo.py" show "$RACT" chat-ray admission/quota
python3 "$RD/demo.py" bridge "$RACT" chat-ray admission/quota "$RAY"
ray_apply
"${RCTL[@]}" apply -f "$RD/pods.yaml" >/dev/null
echo "the bridge applied it: chat-ray runs (status.state ready) with its pods ($RD/pods.yaml)"

echo
echo "dcgm-exporter reports the worker's GPUs idle (push-metrics $RD/idle-scrape.prom every 0.5s):"
echo "the policy's idle window is 2s, and the daemon looks every 5s of event time"
await chat-ray reclaim/idle 30 "${RCTL[@]}" push-metrics "$RD/idle-scrape.prom"
python3 "$RD/demo.py" show "$RACT" chat-ray reclaim/idle
python3 "$RD/demo.py" bridge "$RACT" chat-ray reclaim/idle "$RAY"
ray_apply
awk 'w; /^---$/ {w = 1}' "$RD/pods.yaml" >"$WORK/worker-pod.yaml"  # the second pod, the worker
"${RCTL[@]}" delete -f "$WORK/worker-pod.yaml" >/dev/null
echo "the bridge applied it: the worker pod is gone, the head stays"
step "gpuaasctl explain team-a/chat-ray (at zero: quota reserved and lent)"
"${RCTL[@]}" explain team-a/chat-ray
"${RCTL[@]}" explain team-a/chat-ray --json | python3 "$RD/demo.py" explain

step "gpuaasctl apply -f $RD/batch-job.yaml (team-b, queue batch: no GPUs of its own)"
"${RCTL[@]}" apply -f "$RD/batch-job.yaml"
await eval-sweep admission/quota 15
python3 "$RD/demo.py" show "$RACT" eval-sweep admission/quota
# The bridge applies it (a preemption is a patch against the job as it runs).
sed 's/suspend: true/suspend: false/; s/resourceVersion: "1"/resourceVersion: "2"/' \
  "$RD/batch-job.yaml" >"$WORK/eval-sweep-running.yaml"
"${RCTL[@]}" apply -f "$WORK/eval-sweep-running.yaml" >/dev/null
echo "the bridge applied it: eval-sweep runs on chat-ray's lent GPUs"

step "Ray work arrives: push-metrics $RD/ray-tasks.prom (a task waiting for a node)"
"${RCTL[@]}" push-metrics "$RD/ray-tasks.prom"
# Quota is reserved usage, as in Kueue: the borrower on the lent GPUs is preempted first, and
# chat-ray is admitted back once it has stopped (until then it is Waking).
await eval-sweep reclaim/lend 15
python3 "$RD/demo.py" show "$RACT" eval-sweep reclaim/lend
sed 's/resourceVersion: "1"/resourceVersion: "3"/' "$RD/batch-job.yaml" >"$WORK/eval-sweep-stopped.yaml"
"${RCTL[@]}" apply -f "$WORK/eval-sweep-stopped.yaml" >/dev/null
echo "the bridge applied it: eval-sweep is suspended"
await chat-ray reclaim/wake 15
python3 "$RD/demo.py" show "$RACT" chat-ray reclaim/wake
python3 "$RD/demo.py" bridge "$RACT" chat-ray reclaim/wake "$RAY"
ray_apply
"${RCTL[@]}" apply -f "$RD/pods.yaml" >/dev/null
echo "the bridge applied it: chat-ray's worker is back; eval-sweep waits in its queue again"
for _ in $(seq 50); do  # bounded: until the daemon has taken the suspended job back in its queue
  "${RCTL[@]}" explain team-b/eval-sweep --json 2>/dev/null | grep -q '"state": *"Pending"' && break
  sleep 0.1
done
step "gpuaasctl explain team-a/chat-ray (back, its quota its own again)"
"${RCTL[@]}" explain team-a/chat-ray --json | python3 "$RD/demo.py" explain
"${RCTL[@]}" state --json | python3 -c "$(cat <<'PY'
import json, sys
for q in json.load(sys.stdin)["cluster_queues"]:
    gpus = [r for r in q["resources"] if r["resource"] == "nvidia.com/gpu"]
    print("  ClusterQueue %s: %s of %s GPUs in use, %d admitted, %d pending" % (
        q["name"], gpus[0]["usage"], gpus[0]["nominal"], q["admitted"], q["pending"]))
PY
)"

# Part 4: node scale-out (simulated). Three sweeps of 4-GPU jobs hit a pool that starts with one
# node; gpuaasd reads the demand's trend and asks for nodes before the jobs that need them arrive;
# the reactive baseline waits for pending pods (and buys twice for nodes whose GPUs come late).
step "Scale-out ahead of bursts: gpuaas-sim --scenario deploy/demo/scaleout/scenario.yaml --compare kueue-like,gpuaas"
"$B/bin/gpuaas-sim" --scenario deploy/demo/scaleout/scenario.yaml --seed 1 \
  --compare kueue-like,gpuaas --report "$CHART_DIR/gpuaas-demo-scaleout.json" | sed -n '1,16p'
echo "gpuaasd's first scale-out of the first sweep (its log): the backlog is empty, nothing waits"
echo "yet; the demand's trend says what will be needed one provisioning time from now:"
# (The log goes to a file first: grep -m would close the pipe early, and pipefail would stop us.)
GPUAAS_SIM_LOG=info "$B/bin/gpuaas-sim" --scenario deploy/demo/scaleout/scenario.yaml --seed 1 \
  >/dev/null 2>"$WORK/scaleout.log"
grep -m 3 'NodePool h100: add' "$WORK/scaleout.log" | sed 's/^.*NodePool/  NodePool/'
echo "(report: $CHART_DIR/gpuaas-demo-scaleout.json; docs/scale-out.md explains the rules)"

# Part 5: serving from capacity (simulated). One InferenceService takes every request of the Azure
# LLM conversation trace (an hour, 19,366 requests with their token counts). Under Knative's
# defaults its replicas follow 70 requests in flight each; under gpuaas, gpuaasd sets KServe's
# autoscaler to the rate one replica sustains at the objective (p95 TTFT 2 s), its floor from the
# demand forecast and its ceiling from the quota (SET_SCALE, docs/capacity.md).
TRACE=../shared/traces/AzureLLMInferenceTrace_conv.csv
if [ -f "$TRACE" ]; then
  step "Serving from capacity: gpuaas-sim --azure-llm $TRACE --services 1 --compare knative,gpuaas"
  "$B/bin/gpuaas-sim" --azure-llm "$TRACE" --services 1 --seed 1 --compare knative,gpuaas \
    --report "$CHART_DIR/gpuaas-demo-serving.json" | grep -E '^(scenario|requests in|GPU-s per|TTFT|most replicas|GPU-hours allocated)'
  GPUAAS_SIM_LOG=info "$B/bin/gpuaas-sim" --azure-llm "$TRACE" --services 1 --seed 1 \
    >/dev/null 2>"$WORK/serving.log"
  echo "gpuaasd's first bounds for the service (its log):"
  grep -m 2 'InferenceService llm/llm-0: replicas' "$WORK/serving.log" | sed 's/^.*InferenceService/  InferenceService/'
  python3 - "$CHART_DIR/gpuaas-demo-serving.json" <<'PY'
import json, sys
runs = {r["policy"]: r["requests"] for r in json.load(open(sys.argv[1]))["runs"]}
for p in ("knative", "gpuaas"):
    q = runs[p]
    print(f"{p:>8}: {q['within_objective']} of {q['total']} requests within objective "
          f"({100 * q['within_objective'] / q['total']:.1f}%), cost per request within objective "
          f"{q['cost_per_request_within_objective']:.6f}")
PY
  echo "(report: $CHART_DIR/gpuaas-demo-serving.json)"
else
  step "Serving from capacity: skipped ($TRACE is not here)"
fi

echo
echo "demo done: the daemons held the clusters above; everything it started is stopped now."
