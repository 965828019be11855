// gpuaasctl's commands; each returns the process exit code (see ctl_context.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ctl_context.hpp"

namespace gpuaas::ctl {

enum class ObjectChange { kApply, kDelete };

struct PublishOptions {
  std::string file;
  std::string default_namespace = "default";
  bool namespace_given =
      false;  // -n: overrides what the manifest says, as kubectl does (error on conflict)
  // A tenant's request for a workload (submissions.<ns>.<Kind>) instead of observed state
  // (events.<ns>.<Kind>, what the bridge publishes): --submit, or implied by --scope.
  bool submit = false;
};
int publish_objects(const CtlContext& ctx, ObjectChange change, const PublishOptions& o);
int push_metrics(const CtlContext& ctx, const std::string& file);

enum class WatchTarget { kActions, kEvents, kDeadletter };
struct WatchOptions {
  WatchTarget target = WatchTarget::kEvents;
  int64_t count = 0;   // 0: no limit
  double timeout = 0;  // seconds; 0: no limit
  bool json = false;
  bool ticks = false;  // events: include the daemon's ticks
};
int watch(const CtlContext& ctx, const WatchOptions& o);

struct StateOptions {
  bool json = false;
  bool summary = false;                   // counts only, whatever the cluster's size
  bool nodes = false, workloads = false;  // pages of one section
  std::size_t limit = 0;                  // one page of this many; 0: every page, 500 each
  std::string after, ns, flavor;          // the cursor; filters (workloads; nodes)
};
int show_state(const CtlContext& ctx, const StateOptions& o);
int show_plugins(const CtlContext& ctx, bool json);
struct ExplainOptions {
  std::string workload;  // "namespace/name"; empty: every queued workload, by pages
  bool json = false;
  std::string ns, after;  // pages: one namespace; the cursor (a workload key)
  std::size_t limit = 0;  // one page of this many; 0: every page, 500 each
};
// Why a workload waits and when it may start; or why each queued workload does.
int explain(const CtlContext& ctx, const ExplainOptions& o);
struct ReportOptions {
  std::string since;      // a duration of event time; empty: all of it
  bool projects = false;  // a row per project (namespace) too
  bool json = false;
  std::size_t limit = 0;  // one page of this many tenants; 0: every page, 500 each
  std::string after;      // the page after this tenant
};
// GPU-hours, outcomes and cost per tenant.
int show_report(const CtlContext& ctx, const ReportOptions& o);

// The highest request rate an OpenAI-compatible endpoint sustains at its objectives, and what a
// good answer costs there (a load test; docs/capacity.md). Needs no gpuaasd unless --flavor.
struct CapacityOptions {
  std::string url, model, trace, check, chart, objective_file, objective_name, flavor;
  std::vector<std::string> headers;
  std::string ttft_p95, tpot_p95, e2e_p95;       // latencies as written ("400ms"); empty: not set
  double max_error_rate = -1, min_quality = -1;  // -1: the objective's, else the default
  double confidence = 0.9;
  double step_seconds = 30, warmup_seconds = -1;  // -1: a fifth of the step
  double start_rps = 1, max_rps = 1000, precision = 0.05;
  int confirm_steps = 3, max_steps = 40;
  int prompt_tokens = 256, output_tokens = 128;  // without --trace
  int max_prompt_tokens = 0, max_output_tokens = 0;
  bool chat = false, ignore_eos = false, json = false;
  double request_timeout = 120, stall_timeout = 30, check_timeout = 10;
  double gpu_hour_price = 0;
  int gpus = 1;
  std::string currency = "USD";
  uint64_t seed = 1;
};
int capacity(const CtlContext& ctx, const CapacityOptions& o);

// Offline, no server: validates policy files (or directories of them) as one set, and that
// gpuaasd can publish them under a server's max_payload (bytes; 0: not checked).
int check_policy(const std::vector<std::string>& paths, int64_t max_payload);

}  // namespace gpuaas::ctl
