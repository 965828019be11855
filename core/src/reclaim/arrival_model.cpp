#include "gpuaas/reclaim/arrival_model.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuaas::reclaim {

namespace {

double seconds(Millis m) { return std::chrono::duration<double>(m).count(); }

// lambda's calibration (the header says why it is not a plain sign rule): log-lambda moves by
// kGapStep when a gap was a cold start for one policy only, and by kDebtStep towards ours being
// kTargetShare of the reference's cold starts. Tuned on the population test's workload over ten
// seeds; larger steps let lambda swing and lose zero-seconds, smaller ones react too late.
constexpr double kGapStep = 0.05;
constexpr double kDebtStep = 0.002;
constexpr double kTargetShare = 0.98;  // a little below, so that noise does not leave us above

}  // namespace

ColdStartBudget::ColdStartBudget(const ArrivalSettings& s)
    : settings_(s),
      lambda_seconds_(std::clamp(seconds(s.knative_timeout), s.min_lambda_seconds,
                                 std::max(s.min_lambda_seconds, s.max_lambda_seconds))) {}

void ColdStartBudget::record_gap(Millis gap, Millis timeout) {
  const int ours = gap > timeout ? 1 : 0;
  const int reference = gap > settings_.knative_timeout ? 1 : 0;
  cold_starts_ += ours;
  reference_cold_starts_ += reference;
  // The gap's own verdict moves lambda; the cumulative counts only nudge it (see the header).
  double step = kGapStep * (ours - reference);
  const double target = kTargetShare * static_cast<double>(reference_cold_starts_);
  if (static_cast<double>(cold_starts_) > target) {
    step += kDebtStep;
  } else if (static_cast<double>(cold_starts_) < target) {
    step -= kDebtStep;
  }
  lambda_seconds_ =
      std::clamp(lambda_seconds_ * std::exp(step), settings_.min_lambda_seconds,
                 std::max(settings_.min_lambda_seconds, settings_.max_lambda_seconds));
}

double ColdStartBudget::lambda_seconds() const { return lambda_seconds_; }
uint64_t ColdStartBudget::cold_starts() const { return cold_starts_; }
uint64_t ColdStartBudget::reference_cold_starts() const { return reference_cold_starts_; }

ArrivalModel::ArrivalModel(const ArrivalSettings& s) : settings_(s) {}

std::optional<Millis> ArrivalModel::observe(Time t) {
  if (!last_) {
    last_ = t;
    return std::nullopt;
  }
  if (t <= *last_) return std::nullopt;
  const Millis gap = t - *last_;
  last_ = t;
  gaps_.push_back(gap);
  while (gaps_.size() > settings_.history) gaps_.pop_front();
  return gap;
}

std::optional<Time> ArrivalModel::last_arrival() const { return last_; }

std::size_t ArrivalModel::gaps() const { return gaps_.size(); }

Millis ArrivalModel::timeout(double lambda_seconds) const {
  if (gaps_.empty() || gaps_.size() < settings_.min_gaps) return settings_.knative_timeout;
  const Millis lo = settings_.min_timeout;
  const Millis hi = std::max(settings_.min_timeout, settings_.max_timeout);
  const double lambda = std::max(0.0, lambda_seconds);

  std::vector<Millis> sorted(gaps_.begin(), gaps_.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> prefix(sorted.size() + 1, 0.0);  // seconds of the i shortest gaps
  for (std::size_t i = 0; i < sorted.size(); ++i) prefix[i + 1] = prefix[i] + seconds(sorted[i]);

  // cost(T) = sum min(g, T) + lambda * #{g > T}, in GPU-seconds.
  const auto cost = [&](Millis t) {
    const auto longer = std::upper_bound(sorted.begin(), sorted.end(), t);
    const auto shorter = static_cast<std::size_t>(longer - sorted.begin());
    const auto n_longer = static_cast<double>(sorted.size() - shorter);
    return prefix[shorter] + n_longer * (seconds(t) + lambda);
  };

  // Candidates ascending, strict improvement only: on a tie the shorter timeout wins, as only
  // the few gaps seen back a longer one.
  Millis best = lo;
  double best_cost = cost(lo);
  for (const Millis g : sorted) {
    const Millis t = std::clamp(g + settings_.resolution, lo, hi);
    const double c = cost(t);
    if (c < best_cost) {
      best = t;
      best_cost = c;
    }
  }
  return best;
}

}  // namespace gpuaas::reclaim
