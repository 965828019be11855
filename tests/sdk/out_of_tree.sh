#!/usr/bin/env bash
# The SDK as an outside plugin author meets it: install gpuaas, build sdk/examples/simple-job out
# of tree against the installed package, run its tests, load it into a real gpuaasd (with a real
# nats-server on 127.0.0.1) beside the four installed plugins, and see all five in
# `gpuaasctl plugins` (the installed ones load only if install rewrote their manifests after their
# RPATH) and the example's demand in `state`.
# Usage: out_of_tree.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
step() { echo "== $*"; }

step "install the SDK into $WORK/prefix"
cmake --install "$BUILD" --prefix "$WORK/prefix" >"$WORK/install.log"
ls "$WORK/prefix/lib/cmake/gpuaas-sdk/gpuaas-sdk-config.cmake" >/dev/null

step "build the example plugin out of tree"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$SRC/sdk/examples/simple-job" -B "$WORK/example" "${gen[@]}" \
  -DCMAKE_PREFIX_PATH="$WORK/prefix" -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log"
cmake --build "$WORK/example" >"$WORK/build.log" || { cat "$WORK/build.log"; exit 1; }
ls "$WORK/example/plugins/libsimple_job.so" "$WORK/example/plugins/libsimple_job.yaml"
ctest --test-dir "$WORK/example" --output-on-failure

step "load it into gpuaasd, beside the installed plugins"
PLUGINS="$WORK/prefix/lib/gpuaas/plugins"
cp "$WORK/example/plugins/libsimple_job.so" "$WORK/example/plugins/libsimple_job.yaml" "$PLUGINS/"
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
mkdir -p "$WORK/js"
nats-server -a 127.0.0.1 -p "$port" -js -sd "$WORK/js" >"$WORK/nats.log" 2>&1 &
PIDS+=($!)
URL=nats://127.0.0.1:$port
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
"$BUILD/bin/gpuaasd" --server "$URL" --plugins "$PLUGINS" >"$WORK/daemon.log" 2>&1 &
PIDS+=($!)
ctl() { "$BUILD/bin/gpuaasctl" --server "$URL" "$@"; }
for _ in $(seq 100); do ctl plugins >/dev/null 2>&1 && break; sleep 0.1; done
out=$(ctl plugins)
echo "$out"
grep -q "simple-job .*0.1.0 .*alpha .*SimpleJob.batch.example.com/v1alpha1" <<<"$out"
for p in batch-job kserve kubeflow-training ray workbench; do grep -q "^$p " <<<"$out"; done
if grep -q REFUSED <<<"$out"; then echo "a plugin was refused"; cat "$WORK/daemon.log"; exit 1; fi

ctl apply -f "$SRC/sdk/examples/simple-job/simplejob.yaml"
state=""
for _ in $(seq 100); do
  state=$(ctl state --json)
  grep -q '"plugin":"simple-job"' <<<"$state" && break
  sleep 0.1
done
python3 - "$state" <<'PY'
import json, sys
s = json.loads(sys.argv[1])
w = next(w for w in s["workloads"] if w["name"] == "train-small")
assert w["plugin"] == "simple-job", w
assert w["state"] == "Suspended", w
assert w["demand"]["gpus"] == 4, w["demand"]
assert w["demand"]["pod_sets"][0]["count"] == 2, w["demand"]
print("state: train-small", w["state"], "demand", w["demand"]["total"])
PY
echo "out-of-tree plugin: OK"
