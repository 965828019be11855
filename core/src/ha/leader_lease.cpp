#include "leader_lease.hpp"

#include <utility>

namespace gpuaas::core::ha {

LeaderLease::LeaderLease(bus::KeyValue& kv, std::string key, std::string holder_id)
    : kv_(kv), key_(std::move(key)), holder_id_(std::move(holder_id)) {}

Result<LeaseState> LeaderLease::try_acquire_or_renew() {
  if (state_.leader) {
    auto renewed = kv_.update(key_, holder_id_, state_.revision);
    if (renewed) {
      state_.revision = *renewed;
      return state_;
    }
    if (renewed.status().code() != StatusCode::kConflict) return renewed.status();
    // The key expired or was taken: someone else may lead with a newer epoch.
    state_ = LeaseState{};
  }
  auto current = kv_.get(key_);
  if (!current) return current.status();
  if (current->has_value() && (*current)->value != holder_id_) {
    state_ = LeaseState{.revision = (*current)->revision, .holder = (*current)->value};
    return state_;
  }
  // Absent: create it. Ours (a renew whose answer was lost, or this process lost its state):
  // take it over at its revision, which also gives a new epoch.
  auto won = current->has_value() ? kv_.update(key_, holder_id_, (*current)->revision)
                                  : kv_.create(key_, holder_id_);
  if (won) {
    state_ = LeaseState{.leader = true, .epoch = *won, .revision = *won, .holder = holder_id_};
    return state_;
  }
  if (won.status().code() != StatusCode::kConflict) return won.status();
  return observe();  // another standby won the race
}

Result<LeaseState> LeaderLease::observe() {
  auto current = kv_.get(key_);
  if (!current) return current.status();
  state_ = LeaseState{};
  if (current->has_value()) {
    state_.revision = (*current)->revision;
    state_.holder = (*current)->value;
  }
  return state_;
}

Status LeaderLease::release() {
  if (!state_.leader) return Status::ok();
  Status st = kv_.remove(key_, state_.revision);
  // Lost already (kConflict): the key is someone else's now, and we are standby either way.
  if (st || st.code() == StatusCode::kConflict) {
    state_ = LeaseState{};
    return Status::ok();
  }
  return st;
}

}  // namespace gpuaas::core::ha
