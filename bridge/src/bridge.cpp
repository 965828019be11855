#include "gpuaas/bridge/bridge.hpp"

#include <spdlog/spdlog.h>

#include "gpuaas/bridge/action_applier.hpp"
#include "gpuaas/bridge/admission_webhook.hpp"
#include "gpuaas/bridge/decision_reporter.hpp"
#include "gpuaas/bridge/metrics_source.hpp"
#include "gpuaas/bridge/resource_watcher.hpp"
#include "gpuaas/host/plugin_host.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace gpuaas::bridge {
namespace {

wire::ChangeType change_of(WatchEvent::Type t) {
  switch (t) {
    case WatchEvent::Type::kAdded:
      return wire::ChangeType::kAdded;
    case WatchEvent::Type::kDeleted:
      return wire::ChangeType::kDeleted;
    default:
      return wire::ChangeType::kModified;
  }
}

// Sleeps up to `d`, in slices, returning early once `stop` is set.
void sleep_unless(const std::atomic<bool>& stop, std::chrono::milliseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (!stop.load() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

Bridge::Bridge(BridgeConfig cfg, bus::Bus& bus, KubeClient& kube, telemetry::Registry& registry)
    : cfg_(std::move(cfg)), bus_(bus), kube_(kube), registry_(registry), metrics_(registry) {
  publisher_ = std::make_unique<EventPublisher>(bus_, bus::Subjects(cfg_.root),
                                                "gpuaas-bridge/" + cfg_.cluster, stop_);
  kube_.on_request([this](const std::string& verb, long status, double seconds) {
    metrics_.api_request(verb, status, seconds);
  });
  kube_.set_write_budget({cfg_.kubernetes.qps, cfg_.kubernetes.burst});
  kube_.on_write(
      [this](const std::string& verb, double waited) { metrics_.api_write(verb, waited); });
}

Bridge::~Bridge() { stop(); }

std::string Bridge::webhook_address() const { return webhook_ ? webhook_->address() : ""; }

Status Bridge::start() {
  if (!cfg_.webhook.listen.empty()) {
    AdmissionWebhookOptions o;
    o.listen = cfg_.webhook.listen;
    o.cert_file = cfg_.webhook.cert_file;
    o.key_file = cfg_.webhook.key_file;
    o.queue_label = cfg_.webhook.queue_label;
    o.rules = cfg_.webhook.holds;
    o.placement_gates = cfg_.webhook.placement_gates;
    if (o.placement_gates && !cfg_.plugins_dir.empty()) {
      // The webhook's own instances: demand() is called from its threads, on every queued
      // CREATE of a kind whose binding is required. Refusals are logged by the host.
      plugins_ = std::make_unique<host::PluginHost>();
      plugins_->load_directory(cfg_.plugins_dir);
      o.plugins = plugins_.get();
    } else if (o.placement_gates) {
      spdlog::warn("webhook: no plugins (--plugins), so no pod template is gated");
    }
    auto w = AdmissionWebhook::start(o, registry_);
    if (!w) return w.status();
    webhook_ = std::move(w).value();
    std::string held;
    for (const auto& r : o.rules) held += (held.empty() ? "" : ", ") + r.kind;
    spdlog::info("admission webhook on https://{}/mutate, holding {}", webhook_->address(),
                 held.empty() ? "nothing (no plugin declares a hold)" : held);
  }

  auto kv = bus_.open_kv(ledger_settings(cfg_));
  if (!kv) {
    return Status(kv.status().code(), "the bridge's state bucket: " + kv.status().message());
  }
  ledger_ = std::make_unique<AppliedLedger>(std::move(kv).value());
  auto salt = ledger_->msg_id_salt();
  if (!salt)
    return Status(salt.status().code(), "the bridge's state bucket: " + salt.status().message());
  publisher_->set_msg_id_salt(*salt);
  reporter_ = std::make_unique<DecisionReporter>(kube_, cfg_);
  applier_ = std::make_unique<ActionApplier>(kube_, cfg_, *ledger_, *publisher_, stop_, &metrics_);
  if (cfg_.actions.report_events && cfg_.actions.apply) {
    applier_->on_applied([this](const v1::Action& a, const v1::ActionResult&) {
      auto r = reporter_->report_action(a, observed_now());
      if (!r.ok())
        spdlog::warn("Kubernetes Event for {}: HTTP {} {}", a.decision_id(), r.status, r.error);
    });
    auto sub = bus_.subscribe(
        bus::Subjects(cfg_.root).all(bus::SubjectCategory::kStatus), [this](const bus::Message& m) {
          v1::Event ev;
          auto ct = m.header("content-type");
          if (!wire::decode_event(m.data, ct, ev) || !ev.queue().has_workload_status()) return;
          auto r = reporter_->report_status(ev.queue().workload_status());
          if (!r.ok() && r.status != 404) {
            spdlog::warn("status annotation on {}: HTTP {} {}",
                         ev.queue().workload_status().workload().name(), r.status, r.error);
          }
        });
    if (!sub) return sub.status();
    status_sub_ = std::move(sub).value();
  }

  threads_.emplace_back([this] {
    const auto settings = action_consumer_settings(cfg_);
    while (!stop_.load()) {
      if (auto s = applier_->run(bus_, settings); !s) {
        // Most often: the actions stream does not exist yet (gpuaasd creates it).
        spdlog::warn("actions: {} (retrying)", s.message());
        sleep_unless(stop_, std::chrono::seconds(2));
      }
    }
  });

  for (const auto& r : cfg_.resources) {
    if (!r.watch) continue;
    WatchOptions o;
    o.timeout_seconds = cfg_.watch.timeout_seconds;
    o.page_size = cfg_.watch.page_size;
    auto w = std::make_unique<ResourceWatcher>(
        kube_, ResourceType{r.api_version, r.kind, r.plural, r.namespaced},
        [this, kind = r.kind](const ObjectChange& c) {
          auto s = publisher_->publish_object(kind, c.namespace_, c.uid, c.resource_version,
                                              change_of(c.type), c.object_json, observed_now());
          if (s) {
            metrics_.events_published(kind);
          } else {
            spdlog::warn("{} {}/{}: not published: {}", kind, c.namespace_, c.name, s.message());
            metrics_.events_refused(kind);
          }
        },
        o);
    ResourceWatcher* raw = w.get();
    watchers_.push_back(std::move(w));
    threads_.emplace_back([this, raw, &r] { watch_loop(*raw, r); });
  }

  if (!cfg_.metrics.scrape.empty() || !cfg_.metrics.prometheus_url.empty()) {
    threads_.emplace_back([this] { metrics_loop(); });
  }
  threads_.emplace_back([this] { watch_stats_loop(); });
  return Status::ok();
}

// The watchers count for themselves; their counts reach /metrics every few seconds.
void Bridge::watch_stats_loop() {
  std::vector<ResourceWatcher::Stats> last(watchers_.size());
  while (true) {
    for (std::size_t i = 0; i < watchers_.size(); ++i) {
      auto now = watchers_[i]->stats();
      const std::string& kind = watchers_[i]->type().kind;
      metrics_.watch_restarts(kind, now.watches - last[i].watches);
      metrics_.relists(kind, now.relists - last[i].relists);
      metrics_.watch_errors(kind, now.errors - last[i].errors);
      last[i] = std::move(now);
    }
    if (stop_.load()) return;
    sleep_unless(stop_, std::chrono::seconds(5));
  }
}

void Bridge::watch_loop(ResourceWatcher& w, const ResourceConfig& r) {
  spdlog::info("watching {} ({})", r.kind, collection_path(r));
  w.run(stop_);
}

void Bridge::metrics_loop() {
  MetricsSourceOptions o;
  for (const auto& url : cfg_.metrics.scrape) o.targets.push_back({url});
  o.prometheus.url = cfg_.metrics.prometheus_url;
  o.prometheus.queries = cfg_.metrics.queries;
  MetricsSource source(std::move(o));
  while (!stop_.load()) {
    const auto now = observed_now();
    auto round = source.collect(wire::to_unix_ms(now));
    for (const auto& e : round.errors) {
      spdlog::warn("metrics: {}", e);
      metrics_.scrape_error();
    }
    for (const auto& b : round.batches) {
      if (auto s = publisher_->publish_metrics(b.namespace_, b.batch, now); !s) {
        spdlog::warn("metrics for {}: {}", b.namespace_, s.message());
      }
    }
    metrics_.metric_samples(round.samples);
    sleep_unless(stop_, cfg_.metrics.interval);
  }
}

void Bridge::stop() {
  if (stop_.exchange(true)) return;
  kube_.stop();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
  status_sub_.reset();
  webhook_.reset();
}

}  // namespace gpuaas::bridge
