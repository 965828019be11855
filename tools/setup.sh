#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (run as root): installs what is missing, builds,
# then runs the demo or every test.
#   bash tools/setup.sh demo    install, build, run the demo (the README's main command)
#   bash tools/setup.sh test    install, build, run every test, then the fuzz targets for a while
#   bash tools/setup.sh build   install and build only
# BUILD_DIR (default build) and JOBS (default: all cores) may be set in the environment; for the
# fuzz targets (docs/fuzzing.md), FUZZ_BUILD_DIR (default BUILD_DIR-fuzz) and FUZZ_SECONDS (per
# target, default 20; 0 skips fuzzing).
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-demo}
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
FUZZ_BUILD_DIR=${FUZZ_BUILD_DIR:-${BUILD_DIR}-fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git ca-certificates curl python3
  libnats-dev nats-server libprotobuf-dev protobuf-compiler libboost-dev libboost-filesystem-dev
  libspdlog-dev libyaml-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev
  nlohmann-json3-dev libcivetweb-dev libsimdjson-dev libjemalloc-dev libssl-dev prometheus
  libcurl4-openssl-dev openssl
  clang libclang-rt-14-dev clang-tidy
)
# kubectl for tests/bridge/kubectl_test.cpp: Debian's, unless some kubectl is there already (a
# newer one from another package would conflict with it).
command -v kubectl >/dev/null 2>&1 || PACKAGES+=(kubernetes-client)

install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages: ${missing[*]}; run as root (or install them) first" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# ccache keyed on paths relative to the checkout: a fresh clone in another folder (CI) reuses what
# an earlier build compiled; precompiled headers are cacheable with these sloppiness settings.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd)}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}

# build [TARGET...]: everything, or only the named targets (the demo needs no tests).
build() {
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUAAS_WERROR=ON >/dev/null
  if [ $# -gt 0 ]; then
    cmake --build "$BUILD_DIR" -j "$JOBS" --target "$@"
  else
    cmake --build "$BUILD_DIR" -j "$JOBS"
  fi
}

# fuzz: a clang build of the fuzz targets only (ASan, UBSan, libFuzzer), each run for FUZZ_SECONDS.
fuzz() {
  [ "$FUZZ_SECONDS" != 0 ] || return 0
  CC=clang CXX=clang++ cmake -S . -B "$FUZZ_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGPUAAS_FUZZ=ON -DGPUAAS_BUILD_TESTS=OFF -DGPUAAS_WERROR=ON >/dev/null
  cmake --build "$FUZZ_BUILD_DIR" -j "$JOBS" --target fuzz
  bash tests/fuzz/run.sh "$FUZZ_BUILD_DIR" "$FUZZ_SECONDS"
}

install_missing
if [ "$MODE" = demo ]; then build gpuaasd gpuaasctl gpuaas-sim gpuaas_plugins; else build; fi
case "$MODE" in
  demo) exec bash deploy/demo/run-demo.sh "$BUILD_DIR" ;;
  test)
    junit="$(cd "$BUILD_DIR" && pwd)/ctest-junit.xml"
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 600 --output-junit "$junit"
    # A suite whose SetUpTestSuite fails shows its tests as skipped, which ctest does not count as
    # a failure: look for gtest's line in every test's output.
    if grep -q "SetUpTestSuite or TearDownTestSuite" "$junit"; then
      echo "setup: a test suite's set-up failed; its tests show as skipped:" >&2
      grep -o "FAILED  \] [A-Za-z0-9_/]*: SetUpTestSuite or TearDownTestSuite" "$junit" | sort -u >&2
      exit 1
    fi
    fuzz
    ;;
  build) ;;
  *) echo "usage: $0 demo|test|build" >&2; exit 2 ;;
esac
