#!/usr/bin/env bash
# Runs every fuzz target of a GPUAAS_FUZZ build for a bounded time (docs/fuzzing.md).
#   tests/fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
# Per target: the inputs in tests/fuzz/regressions/TARGET once each, then fuzzing for SECONDS on a
# copy of its seed corpus in a temporary directory (the repository is never written). Logs go to
# BUILD_DIR/fuzz-logs, crashing inputs to BUILD_DIR/fuzz-artifacts. Exits non-zero when any
# target crashed, leaked, hit undefined behaviour, ran out of memory or timed out.
# GPUAAS_SHARED_DIR (default ../shared beside the repository) gives extra seeds from its
# manifests, made at run time (make_seeds.py).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$(cd "$1" && pwd)
seconds=$2
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(api event plugins policy prometheus_text)
shared=${GPUAAS_SHARED_DIR:-$repo/../shared}

# UBSan reports are fatal (the build also has -fno-sanitize-recover); leaks are reported at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuaas-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
logs=$build/fuzz-logs
artifacts=$build/fuzz-artifacts
mkdir -p "$logs" "$artifacts"

# Seed corpora: the repository's, plus what is made at run time.
for t in "${targets[@]}"; do
  mkdir -p "$work/$t"
  if [ -d "$here/corpus/$t" ]; then cp -r "$here/corpus/$t/." "$work/$t/"; fi
done
[ -d "$work/policy" ] && cp "$repo"/policies/examples/*.yaml "$work/policy/" 2>/dev/null || true
if [ -d "$work/event" ] || [ -d "$work/plugins" ]; then
  mkdir -p "$work/event" "$work/plugins"
  python3 "$here/make_seeds.py" "$work" "$shared/manifests" || echo "fuzz: no generated seeds"
fi

failed=()
for t in "${targets[@]}"; do
  bin=$build/bin/fuzz_$t
  if [ ! -x "$bin" ]; then
    echo "fuzz: $bin is missing (configure with -DGPUAAS_FUZZ=ON, then ninja fuzz)" >&2
    failed+=("$t(missing)")
    continue
  fi
  regressions=("$here/regressions/$t"/*)
  if [ -e "${regressions[0]}" ]; then
    if "$bin" -rss_limit_mb=2048 -timeout=10 "${regressions[@]}" >"$logs/$t-regressions.log" 2>&1; then
      echo "fuzz: $t: ${#regressions[@]} regression inputs pass"
    else
      echo "fuzz: $t: a regression input fails again; $logs/$t-regressions.log:" >&2
      tail -n 40 "$logs/$t-regressions.log" >&2
      failed+=("$t(regressions)")
    fi
  fi
  seeds=$(find "$work/$t" -type f | wc -l)
  if "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$t-" "$work/$t" >"$logs/$t.log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$logs/$t.log" | grep -o '[0-9]*$' || true)
    echo "fuzz: $t: ${seconds}s, ${runs:-?} runs from $seeds seeds, no finding"
  else
    echo "fuzz: $t: FAILED; the input is in $artifacts, the log in $logs/$t.log:" >&2
    tail -n 60 "$logs/$t.log" >&2
    failed+=("$t")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]}" >&2
  exit 1
fi
