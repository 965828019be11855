// capacity: a representative load test against an OpenAI-compatible endpoint (vLLM, KServe's
// Hugging Face runtime): the highest rate whose objectives hold, its latency curve, and the cost
// of a thousand tokens and of a request within objective there. The work is gpuaas_capacity's;
// this is flags, the objective's file, the price and the output.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gpuaas/capacity/capacity_report.hpp"
#include "gpuaas/capacity/capacity_search.hpp"
#include "gpuaas/capacity/load_runner.hpp"
#include "gpuaas/capacity/quality_command.hpp"
#include "gpuaas/policy/policy_loader.hpp"

namespace gpuaas::ctl {
namespace {

std::atomic<bool> g_stop{false};

void on_interrupt(int) {
  g_stop = true;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

// The objectives: the ServiceObjective's (--objective), then each flag given over it.
Result<capacity::Objectives> objectives_of(const CapacityOptions& o) {
  capacity::Objectives obj;
  if (!o.objective_file.empty()) {
    auto loaded = policy::load_policy_files({o.objective_file});
    if (!loaded.ok()) return Status::invalid(loaded.errors.front().str());
    const policy::ServiceObjective* so = nullptr;
    for (const auto& s : loaded.set.service_objectives)
      if (o.objective_name.empty() || s.name == o.objective_name) {
        if (so && o.objective_name.empty())
          return Status::invalid(o.objective_file +
                                 ": several ServiceObjectives; name one with --objective-name");
        so = &s;
      }
    if (!so)
      return Status::invalid(o.objective_file + ": no ServiceObjective" +
                             (o.objective_name.empty() ? "" : " named " + o.objective_name));
    obj.ttft_p95 = so->ttft_p95;
    obj.tpot_p95 = so->tpot_p95;
    obj.e2e_p95 = so->e2e_p95;
    obj.max_error_rate = so->error_budget;
    obj.min_quality = so->quality_threshold;
  }
  const std::pair<const std::string*, std::optional<double>*> latencies[] = {
      {&o.ttft_p95, &obj.ttft_p95}, {&o.tpot_p95, &obj.tpot_p95}, {&o.e2e_p95, &obj.e2e_p95}};
  const char* flags[] = {"--ttft-p95", "--tpot-p95", "--e2e-p95"};
  for (int i = 0; i < 3; ++i) {
    if (latencies[i].first->empty()) continue;
    auto v = policy::parse_latency(*latencies[i].first);
    if (!v)
      return Status::invalid(std::string(flags[i]) + " " + *latencies[i].first +
                             ": not a latency above 0 (e.g. 400ms, 1.5s)");
    *latencies[i].second = v;
  }
  if (o.max_error_rate >= 0) obj.max_error_rate = o.max_error_rate;
  if (o.min_quality >= 0) obj.min_quality = o.min_quality;
  obj.confidence = o.confidence;
  return obj;
}

// --flavor: the GPU-hour price gpuaasd uses for the flavor (CostModel, OpenCost or NodePool).
Result<capacity::Pricing> flavor_price(const CtlContext& ctx, const CapacityOptions& o) {
  auto a = ctx.ask_answer("report", "");
  if (!a) return a.status();
  if (a->error) return Status::invalid("the daemon's report: " + a->raw);
  const auto j = nlohmann::json::parse(a->raw, nullptr, false);
  const auto* flavors = j.is_object() && j.contains("cluster") && j["cluster"].is_object() &&
                                j["cluster"].contains("flavors") &&
                                j["cluster"]["flavors"].is_array()
                            ? &j["cluster"]["flavors"]
                            : nullptr;
  if (flavors) {
    for (const auto& f : *flavors) {
      if (!f.is_object() || f.value("flavor", "") != o.flavor) continue;
      const double price = f.value("gpu_hour_price", 0.0);
      const std::string source = f.value("price_source", "none");
      if (price <= 0)
        return Status::invalid("flavor " + o.flavor + " has no GPU-hour price in gpuaasd (source " +
                               source + "); give --gpu-hour-price");
      capacity::Pricing p;
      p.gpu_hour = price;
      p.gpus = o.gpus;
      p.currency = j.value("currency", "USD");
      p.source = "flavor " + o.flavor + " (" + source + ")";
      return p;
    }
  }
  return Status::invalid("flavor " + o.flavor + " is not in gpuaasd's report (no node of it yet?)");
}

}  // namespace

int capacity(const CtlContext& ctx, const CapacityOptions& o) {
  auto objectives = objectives_of(o);
  if (!objectives) return fail(objectives.status());
  if (o.step_seconds <= 0) return fail(Status::invalid("--step-seconds must be above 0"));
  const double warmup = o.warmup_seconds >= 0 ? o.warmup_seconds : o.step_seconds / 5;
  if (warmup >= o.step_seconds)
    return fail(Status::invalid("--warmup-seconds must be shorter than --step-seconds"));

  auto mix = o.trace.empty() ? Result<capacity::RequestMix>(
                                   capacity::RequestMix::fixed(o.prompt_tokens, o.output_tokens))
                             : capacity::RequestMix::from_trace(o.trace, o.max_prompt_tokens,
                                                                o.max_output_tokens);
  if (!mix) return fail(mix.status());

  capacity::LoadTarget target;
  target.base_url = o.url;
  target.chat = o.chat;
  target.ignore_eos = o.ignore_eos;
  target.keep_text = !o.check.empty();
  target.request_timeout = o.request_timeout;
  target.stall_timeout = o.stall_timeout;
  target.headers = o.headers;
  target.model = o.model;
  if (target.model.empty()) {
    auto m = capacity::discover_model(target);
    if (!m) return fail(m.status());
    target.model = *m;
  }

  capacity::Pricing pricing;
  pricing.gpus = o.gpus;
  pricing.currency = o.currency;
  if (o.gpu_hour_price > 0) {
    pricing.gpu_hour = o.gpu_hour_price;
    pricing.source = "--gpu-hour-price";
  } else if (!o.flavor.empty()) {
    auto p = flavor_price(ctx, o);
    if (!p) return fail(p.status());
    pricing = *p;
  }

  capacity::SearchOptions so;
  so.start_rps = o.start_rps;
  so.max_rps = o.max_rps;
  so.precision = o.precision;
  so.confirm_steps = o.confirm_steps;
  so.max_steps = o.max_steps;

  g_stop = false;
  auto previous = std::signal(SIGINT, on_interrupt);
  std::cerr << "capacity: " << target.model << " at " << o.url << ", "
            << capacity::describe(*objectives) << "; steps of " << o.step_seconds
            << " s (Ctrl-C stops with what was measured)\n";
  int index = 0;
  uint64_t seed = o.seed;
  const capacity::StepRunner run = [&](double rate) {
    auto step =
        capacity::run_load_step(target, *mix, rate, o.step_seconds, warmup, seed++, &g_stop);
    if (!o.check.empty()) capacity::apply_quality_command(o.check, step.records, o.check_timeout);
    return step;
  };
  capacity::CapacityReport report;
  report.search = capacity::find_capacity(so, *objectives, run, [&](const capacity::SearchStep& s) {
    std::cerr << capacity::progress_line(++index, s) << "\n";
  });
  std::signal(SIGINT, previous);

  report.url = o.url;
  report.model = target.model;
  report.endpoint = o.chat ? "chat" : "completions";
  report.requests = mix->source();
  report.step_seconds = o.step_seconds;
  report.objectives = *objectives;
  report.search_options = so;
  report.pricing = pricing;
  if (!o.chart.empty()) {
    std::ofstream f(o.chart);
    f << capacity::report_svg(report);
    if (!f) std::cerr << "gpuaasctl: cannot write the chart to " << o.chart << "\n";
  }
  if (o.json) {
    std::cout << capacity::report_json(report) << "\n";
  } else {
    std::cout << capacity::report_text(report);
  }
  if (report.search.interrupted) return 130;
  if (!report.search.stopped.empty()) {
    std::cerr << "gpuaasctl: capacity: " << report.search.stopped << "\n";
    return kExitInvalidInput;
  }
  return kExitOk;
}

}  // namespace gpuaas::ctl
