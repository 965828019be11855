// watch actions|events|deadletter: print what passes, one line per message.
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gpuaas/wire/event_codec.hpp"
#include "gpuaas/wire/streams.hpp"

namespace gpuaas::ctl {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted = true; }

// One line for a person; JSON lines print the full message instead.
std::string human_action(const v1::Action& a) {
  return a.target().kind() + " " + a.target().namespace_() + "/" + a.target().name() + " " +
         v1::Action::Operation_Name(a.operation()) + " (" + a.rule() + "): " + a.reason();
}

std::string render(WatchTarget target, const bus::Message& m, bool json) {
  switch (target) {
    case WatchTarget::kActions: {
      v1::Action a;
      if (!a.ParseFromString(m.data)) return json ? R"({"error":"undecodable action"})" : "?";
      return json ? wire::action_to_json(a) : human_action(a);
    }
    case WatchTarget::kDeadletter: {
      v1::DeadLetter d;
      if (!d.ParseFromString(m.data)) return json ? R"({"error":"undecodable dead letter"})" : "?";
      if (json) return wire::deadletter_to_json(d);
      return d.subject() + " (seq " + std::to_string(d.stream_sequence()) + "): " + d.reason();
    }
    case WatchTarget::kEvents: {
      v1::Event e;
      if (auto s = wire::decode_event(m.data, m.header("content-type"), e); !s) {
        nlohmann::json j = {{"subject", m.subject}, {"error", s.message()}};
        return json ? j.dump() : m.subject + ": " + s.message();
      }
      if (json) return wire::event_to_json(e);
      std::string what = e.type();
      if (e.has_metrics()) what += " (" + std::to_string(e.metrics().samples_size()) + " samples)";
      return m.subject + " " + what + " " + e.id();
    }
  }
  return {};
}

}  // namespace

int watch(const CtlContext& ctx, const WatchOptions& o) {
  auto bus = ctx.connect();
  if (!bus) return fail(bus.status());
  auto subjects = ctx.subjects();
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  auto deadline =
      o.timeout > 0
          ? Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.timeout * 1000))
          : Clock::time_point::max();
  int64_t printed = 0;
  auto done = [&] {
    return g_interrupted || (o.count > 0 && printed >= o.count) || Clock::now() >= deadline;
  };

  if (o.target == WatchTarget::kActions) {
    // Through JetStream: each decision is stored once (deduplicated by decision id), so a replay
    // by the daemon never shows twice here.
    auto tail = (*bus)->open_tail(wire::streams(ctx.subject_root).actions.name,
                                  subjects.all(bus::SubjectCategory::kActions));
    if (!tail) return fail(tail.status());
    while (!done()) {
      auto wait =
          std::min<Clock::duration>(std::chrono::milliseconds(250), deadline - Clock::now());
      auto batch = (*tail)->fetch(256, std::chrono::duration_cast<std::chrono::milliseconds>(wait));
      if (!batch) return fail(batch.status());
      for (std::size_t i = 0; i < (*batch)->size() && !(o.count > 0 && printed >= o.count); ++i) {
        bus::Message m{std::string((*batch)->subject(i)), {}, std::string((*batch)->data(i))};
        std::cout << render(o.target, m, o.json) << "\n" << std::flush;
        ++printed;
      }
    }
    return kExitOk;
  }

  std::mutex mu;
  std::condition_variable cv;
  auto on_message = [&](const bus::Message& m) {
    std::lock_guard lock(mu);
    if (o.count > 0 && printed >= o.count) return;
    std::cout << render(o.target, m, o.json) << "\n" << std::flush;
    ++printed;
    cv.notify_all();
  };
  std::vector<std::unique_ptr<bus::Subscription>> subs;
  std::vector<std::string> patterns;
  if (o.target == WatchTarget::kDeadletter) {
    patterns = {subjects.all(bus::SubjectCategory::kDeadletter)};
  } else {
    patterns = {subjects.all(bus::SubjectCategory::kEvents),
                subjects.all(bus::SubjectCategory::kMetrics),
                subjects.all(bus::SubjectCategory::kSubmissions)};
    if (o.ticks) patterns.push_back(subjects.ticks());
  }
  for (const auto& p : patterns) {
    auto sub = (*bus)->subscribe(p, on_message);
    if (!sub) return fail(sub.status());
    subs.push_back(std::move(sub).value());
  }
  if (auto s = (*bus)->flush(std::chrono::seconds(2)); !s) return fail(s);
  std::unique_lock lock(mu);
  while (!done()) cv.wait_for(lock, std::chrono::milliseconds(100));
  lock.unlock();
  subs.clear();
  return kExitOk;
}

}  // namespace gpuaas::ctl
