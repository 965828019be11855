#include "gpuaas/capacity/capacity_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace gpuaas::capacity {
namespace {

constexpr double kLowestRate = 0.01;  // requests per second; below it the answer is 0

class Search {
 public:
  Search(const SearchOptions& o, const Objectives& obj, const StepRunner& run,
         const SearchProgress& progress)
      : o_(o), obj_(obj), point_(obj), run_(run), progress_(progress) {
    point_.confidence = 0;
  }

  SearchResult go() {
    double lo = 0, hi = 0, rate = std::max(kLowestRate, o_.start_rps);
    // Ramp: double until a step fails or the ceiling holds.
    while (hi == 0) {
      auto r = step("ramp", rate);
      if (!r) return finish(lo);
      if (!*r) {
        hi = rate;
      } else if (rate >= o_.max_rps) {
        lo = rate;
        break;
      } else {
        lo = rate;
        rate = std::min(o_.max_rps, rate * 2);
      }
    }
    // Bisect between the last pass (or nothing) and the first failure.
    while (hi > 0 && (hi - lo) / hi > o_.precision && hi > kLowestRate) {
      const double mid = (lo + hi) / 2;
      auto r = step("bisect", mid);
      if (!r) return finish(lo);
      (*r ? lo : hi) = mid;
    }
    // Confirm on pooled steps, lowering the rate until it holds with the confidence asked.
    while (lo >= kLowestRate) {
      auto& runs = runs_[lo];
      while (static_cast<int>(runs.size()) < std::max(1, o_.confirm_steps)) {
        if (!step("confirm-step", lo)) return finish(0);
      }
      StepResult pooled = pool(lo, runs);
      const bool held = pooled.pass;
      result_.steps.push_back({"confirm", pooled});
      if (progress_) progress_(result_.steps.back());
      if (held) {
        result_.at_sustainable = std::move(pooled);
        result_.bound = hi > 0 ? "bracketed" : "at_least";
        result_.sustainable_rps = lo;
        return std::move(result_);
      }
      hi = lo;
      lo *= 1 - o_.precision;
    }
    result_.sustainable_rps = 0;
    result_.bound = "none";
    return std::move(result_);
  }

 private:
  // One step: true when its point estimates hold; nullopt when the search must stop.
  std::optional<bool> step(const char* phase, double rate) {
    if (steps_run_ >= o_.max_steps) {
      result_.stopped = "stopped after " + std::to_string(o_.max_steps) + " steps (--max-steps)";
      return std::nullopt;
    }
    ++steps_run_;
    StepRun raw = run_(rate);
    StepResult s = summarize_step(raw.rate, raw.seconds, raw.warmup, raw.records, point_);
    s.interrupted = raw.interrupted;
    const bool held = s.pass;
    const bool down = s.server_down;
    result_.steps.push_back({phase, s});
    if (progress_) progress_(result_.steps.back());
    if (raw.interrupted) {
      result_.interrupted = true;
      result_.stopped = "interrupted";
      return std::nullopt;
    }
    if (down) {
      result_.stopped = "no request reached the server: " + s.first_error;
      return std::nullopt;
    }
    // At the first, lowest rate an endpoint that answers nothing is broken, not overloaded.
    if (steps_run_ == 1 && s.sent > 0 && s.answered == 0) {
      char at[32];
      std::snprintf(at, sizeof at, "%.2f", rate);
      result_.stopped =
          std::string("no request was answered at ") + at + " req/s: " + s.first_error;
      return std::nullopt;
    }
    runs_[rate].push_back(std::move(raw));
    return held;
  }

  // Every step at `rate` as one, each shifted past the one before so batches stay apart.
  StepResult pool(double rate, const std::vector<StepRun>& runs) const {
    std::vector<RequestRecord> all;
    double offset = 0, warmup = runs.front().warmup, measured = 0;
    for (const auto& r : runs) {
      for (const auto& rec : r.records) {
        if (rec.sent < r.warmup) continue;
        RequestRecord shifted = rec;
        shifted.sent = rec.sent - r.warmup + warmup + offset;
        all.push_back(std::move(shifted));
      }
      offset += r.seconds - r.warmup;
      measured += r.seconds - r.warmup;
    }
    return summarize_step(rate, warmup + measured, warmup, std::move(all), obj_);
  }

  SearchResult finish(double lo) {
    // Stopped early: the best rate that held so far, unconfirmed.
    result_.sustainable_rps = lo;
    result_.bound = lo > 0 ? "unconfirmed" : "none";
    return std::move(result_);
  }

  const SearchOptions& o_;
  const Objectives& obj_;
  Objectives point_;
  const StepRunner& run_;
  const SearchProgress& progress_;
  std::map<double, std::vector<StepRun>> runs_;
  SearchResult result_;
  int steps_run_ = 0;
};

}  // namespace

SearchResult find_capacity(const SearchOptions& options, const Objectives& objectives,
                           const StepRunner& run, const SearchProgress& progress) {
  return Search(options, objectives, run, progress).go();
}

}  // namespace gpuaas::capacity
