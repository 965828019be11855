// The daemon's request-reply API (what gpuaasctl state, plugins, explain and report ask).
#include <spdlog/spdlog.h>

#include <charconv>

#include "daemon_counters.hpp"
#include "gpuaas/core/admission_controller.hpp"
#include "gpuaas/core/daemon.hpp"
#include "gpuaas/core/state_view.hpp"

namespace gpuaas::core {

std::string Daemon::state_json() const {
  std::shared_lock lock(model_mu_);
  return render_state_json(model_, counters_->stats, config_,
                           admission_ ? admission_->queues_json(model_) : "[]",
                           admission_ ? admission_->pools_json(model_) : "[]");
}

std::string Daemon::report_json(std::string_view since_seconds) const {
  std::optional<std::chrono::seconds> since;
  if (!since_seconds.empty()) {
    int64_t v = 0;
    auto [end, ec] =
        std::from_chars(since_seconds.data(), since_seconds.data() + since_seconds.size(), v);
    if (ec != std::errc() || end != since_seconds.data() + since_seconds.size() || v < 0)
      return R"({"error":"the report window is a whole number of seconds"})";
    since = std::chrono::seconds(v);
  }
  std::shared_lock lock(model_mu_);
  if (!admission_) return R"({"error":"the report needs a policy: gpuaasd runs without --policy"})";
  return admission_->report_json(model_, since);
}

std::string Daemon::plugins_json() const {
  // The interpreter's own lock guards its plugin list; the model lock keeps it from changing
  // under a concurrent apply.
  std::shared_lock lock(model_mu_);
  const WorkloadInterpreter* in = model_.interpreter();
  return in == nullptr ? R"({"plugins":[],"refused":[]})" : in->plugins_json();
}

std::string Daemon::explain_json(std::string_view workload) const {
  std::shared_lock lock(model_mu_);
  if (!admission_) return R"({"error":"admission is off: gpuaasd runs without --policy"})";
  return admission_->explain_json(workload, model_);
}

void Daemon::serve_api() {
  auto serve = [this](const char* endpoint, std::string (Daemon::*answer)() const) {
    auto sub = bus_.serve(subjects_.api(endpoint), "gpuaasd",
                          [this, answer](const bus::Message&) { return (this->*answer)(); });
    if (sub) {
      api_.push_back(std::move(sub).value());
    } else {
      spdlog::error("API {}: {}", endpoint, sub.status().message());
    }
  };
  serve("state", &Daemon::state_json);
  serve("plugins", &Daemon::plugins_json);
  auto serve_query = [this](const char* endpoint,
                            std::string (Daemon::*answer)(std::string_view) const) {
    auto sub =
        bus_.serve(subjects_.api(endpoint), "gpuaasd",
                   [this, answer](const bus::Message& m) { return (this->*answer)(m.data); });
    if (sub) {
      api_.push_back(std::move(sub).value());
    } else {
      spdlog::error("API {}: {}", endpoint, sub.status().message());
    }
  };
  serve_query("explain", &Daemon::explain_json);
  serve_query("report", &Daemon::report_json);
}

}  // namespace gpuaas::core
