#include "gpuaas/reclaim/arrival_model.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuaas::core::reclaim {

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

void ColdStartBudget::record_gap(Millis gap, Millis timeout, double weight) {
  const int ours = gap > timeout ? 1 : 0;
  const int reference = gap > settings_.knative_timeout ? 1 : 0;
  cold_starts_ += ours;
  reference_cold_starts_ += reference;
  weight = std::max(1.0, weight);
  weighted_ += weight * ours;
  weighted_reference_ += weight * reference;
  // The gap's own verdict moves lambda; the cumulative counts only nudge it (see the header).
  double step = kGapStep * (ours - reference);
  const double target = kTargetShare * weighted_reference_;
  if (weighted_ > target) {
    step += kDebtStep;
  } else if (weighted_ < target) {
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

std::optional<Millis> ArrivalModel::median_gap() const {
  if (gaps_.empty()) return std::nullopt;
  std::vector<Millis> sorted(gaps_.begin(), gaps_.end());
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2),
                   sorted.end());
  return sorted[sorted.size() / 2];
}

Millis ArrivalModel::timeout(double lambda_seconds, double weight) const {
  if (gaps_.empty() || gaps_.size() < settings_.min_gaps) return settings_.knative_timeout;
  const Millis lo = settings_.min_timeout;
  const Millis hi = std::max(settings_.min_timeout, settings_.max_timeout);
  const double lambda = std::max(0.0, lambda_seconds) * std::max(1.0, weight);

  std::vector<Millis> sorted(gaps_.begin(), gaps_.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> prefix(sorted.size() + 1, 0.0);  // seconds of the i shortest gaps
  for (std::size_t i = 0; i < sorted.size(); ++i) prefix[i + 1] = prefix[i] + seconds(sorted[i]);

  // cost(T) = E[min(g, T)] + lambda * P(g > T) per gap, in GPU-seconds. A few dozen gaps say
  // little of the tail: the gaps seen are mixed with one exponential gap of the same mean
  // (Poisson arrivals), so that a service whose gaps were all short is not sent to zero just
  // past them, and waiting longer always costs the tail's warm time.
  const double n = static_cast<double>(sorted.size());
  const double mean = prefix.back() / n;
  const auto cost = [&](Millis t) {
    const auto longer = std::upper_bound(sorted.begin(), sorted.end(), t);
    const auto shorter = static_cast<std::size_t>(longer - sorted.begin());
    const auto n_longer = static_cast<double>(sorted.size() - shorter);
    const double tail = mean > 0 ? std::exp(-seconds(t) / mean) : 0.0;
    const double warm = prefix[shorter] + n_longer * seconds(t) + mean * (1 - tail);
    return (warm + lambda * (n_longer + tail)) / (n + 1);
  };

  // Candidates ascending, strict improvement only: on a tie the shorter timeout wins, as only
  // the few gaps seen back a longer one. Past the longest gap, multiples of the mean.
  std::vector<Millis> candidates;
  for (const Millis g : sorted) candidates.push_back(g + settings_.resolution);
  for (int k = 1; k <= 16; ++k)
    candidates.push_back(sorted.back() + Millis(static_cast<int64_t>(mean * 1000 * k / 2)));
  candidates.push_back(settings_.knative_timeout);
  std::sort(candidates.begin(), candidates.end());
  Millis best = lo;
  double best_cost = cost(lo);
  for (const Millis g : candidates) {
    const Millis t = std::clamp(g, lo, hi);
    const double c = cost(t);
    if (c < best_cost) {
      best = t;
      best_cost = c;
    }
  }
  return best;
}

}  // namespace gpuaas::core::reclaim
