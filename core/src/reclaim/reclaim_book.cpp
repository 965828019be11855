#include "reclaim_book.hpp"

#include <algorithm>

namespace gpuaas::core {

reclaim::ArrivalSettings arrival_settings() {
  reclaim::ArrivalSettings s;
  s.min_timeout = std::chrono::seconds(30);
  return s;
}

const char* to_string(ReclaimPhase p) {
  switch (p) {
    case ReclaimPhase::kActive:
      return "Active";
    case ReclaimPhase::kAtZero:
      return "AtZero";
    case ReclaimPhase::kReleased:
      return "Released";
    case ReclaimPhase::kWaking:
      return "Waking";
    case ReclaimPhase::kTakingBack:
      return "TakingBack";
  }
  return "Active";
}

void ReclaimBook::set_policy(const policy::PolicySet& set) {
  std::vector<ReclaimRule> rules;
  // A NotebookPolicy's culling is an idle rule for sessions (the kinds plugins declare so:
  // notebooks) with a GPU threshold and kernels.
  for (const auto& nb : set.notebook_policies) {
    if (!nb.culling.enabled) continue;
    ReclaimRule r;
    r.id = "NotebookPolicy/" + nb.name;
    r.spec.name = nb.name;
    r.spec.selector = nb.selector;
    r.sessions_only = true;
    r.spec.idle_window = nb.culling.idle_time;
    r.spec.thresholds = {
        policy::IdleThreshold{policy::kMetricGpuUtil, nb.culling.gpu_threshold, true, nb.at}};
    r.spec.kernel_activity = true;
    r.spec.action = nb.culling.action;
    r.spec.keep_quota_for = nb.culling.keep_quota_for;
    r.spec.grace_period = std::chrono::seconds(0);
    r.spec.stabilization_window = std::chrono::seconds(0);
    r.spec.cooldown = std::chrono::seconds(0);
    r.spec.lend_idle_quota = false;
    r.spec.at = nb.at;
    rules.push_back(std::move(r));
  }
  for (const auto& p : set.idle_reclaim_policies) {
    ReclaimRule r;
    r.id = "IdleReclaimPolicy/" + p.name;
    r.spec = p;
    rules.push_back(std::move(r));
  }
  // Budgets carry over a reload of the same rule: what was learned stays.
  for (auto& r : rules) {
    if (!r.spec.learn_arrivals) continue;
    for (auto& old : rules_)
      if (old.id == r.id && old.budget) r.budget = std::move(old.budget);
    // The exchange rate is the policy's: a fixed price per cold start is predictable, where a
    // rate calibrated online against Knative swung with the noise of scraped arrivals.
    auto s = arrival_settings();
    s.min_lambda_seconds = s.max_lambda_seconds =
        static_cast<double>(r.spec.cold_start_cost.count());
    s.knative_timeout = std::chrono::seconds(90);
    if (r.budget && r.budget->lambda_seconds() != s.min_lambda_seconds) r.budget.reset();
    if (!r.budget) r.budget = std::make_unique<reclaim::ColdStartBudget>(s);
  }
  rules_ = std::move(rules);
  notebooks_ = set.notebook_policies;
}

ReclaimRule* ReclaimBook::match(const KubeObject& obj, const std::string& cluster_queue,
                                bool session) {
  for (auto& r : rules_)
    if ((session || !r.sessions_only) && selector_matches(r.spec.selector, obj, cluster_queue))
      return &r;
  return nullptr;
}

ReclaimRule* ReclaimBook::rule(const std::string& id) {
  for (auto& r : rules_)
    if (r.id == id) return &r;
  return nullptr;
}

const ReclaimRule* ReclaimBook::rule(const std::string& id) const {
  for (const auto& r : rules_)
    if (r.id == id) return &r;
  return nullptr;
}

const policy::NotebookPolicy* ReclaimBook::gate_of(const KubeObject& obj, bool session) const {
  if (!session) return nullptr;
  for (const auto& nb : notebooks_) {
    policy::WorkloadSelector sel = nb.selector;
    sel.cluster_queues.clear();  // the queue is known only once queued
    if (nb.gate && selector_matches(sel, obj, "")) return &nb;
  }
  return nullptr;
}

ReclaimState* ReclaimBook::find(const std::string& key) {
  auto it = states_.find(key);
  return it == states_.end() ? nullptr : &it->second;
}

const ReclaimState* ReclaimBook::find(const std::string& key) const {
  auto it = states_.find(key);
  return it == states_.end() ? nullptr : &it->second;
}

bool ReclaimBook::holds_out(const std::string& key) const {
  const ReclaimState* s = find(key);
  return s != nullptr && s->phase == ReclaimPhase::kReleased;
}

}  // namespace gpuaas::core
