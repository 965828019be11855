#include "gpuaas/bridge/applied_ledger.hpp"

#include <charconv>

#include "gpuaas/wire/event_codec.hpp"
#include "gpuaas/wire/streams.hpp"

namespace gpuaas::bridge {
namespace {
constexpr const char* kEpochKey = "epoch";
constexpr const char* kSaltKey = "msgid-salt";

std::string new_salt() {
  std::string salt;
  for (char c : wire::random_uuid())
    if (c != '-') salt.push_back(c);
  return salt;
}
}  // namespace

AppliedLedger::AppliedLedger(std::unique_ptr<bus::KeyValue> kv) : kv_(std::move(kv)) {}

std::string AppliedLedger::key_of(const std::string& decision_id) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string key = "applied.";
  for (unsigned char c : decision_id) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
        c == '-') {
      key.push_back(static_cast<char>(c));
    } else {
      key.push_back('=');
      key.push_back(kHex[c >> 4]);
      key.push_back(kHex[c & 15]);
    }
  }
  return key;
}

Result<std::string> AppliedLedger::msg_id_salt() {
  std::lock_guard lock(mu_);
  if (!kv_) return new_salt();
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto e = kv_->get(kSaltKey);
    if (!e) return e.status();
    if (e->has_value() && !(*e)->value.empty()) return (*e)->value;
    // Another bridge may create it at the same moment: the one stored wins, read again.
    if (auto made = kv_->create(kSaltKey, new_salt());
        !made && made.status().code() != StatusCode::kConflict)
      return made.status();
  }
  return Status::unavailable("the message id salt in the bridge's bucket could not be read");
}

Result<bool> AppliedLedger::seen(const std::string& decision_id) {
  std::lock_guard lock(mu_);
  if (known_.count(decision_id) != 0) return true;
  if (!kv_) return false;
  auto e = kv_->get(key_of(decision_id));
  if (!e) return e.status();
  if (e->has_value()) known_.insert(decision_id);
  return e->has_value();
}

Status AppliedLedger::record(const std::string& decision_id, const std::string& outcome) {
  std::lock_guard lock(mu_);
  if (kv_) {
    auto r = kv_->put(key_of(decision_id), outcome);
    if (!r) return r.status();
  }
  known_.insert(decision_id);
  return Status::ok();
}

Result<uint64_t> AppliedLedger::highest_epoch() {
  std::lock_guard lock(mu_);
  if (epoch_) return *epoch_;
  uint64_t v = 0;
  if (kv_) {
    auto e = kv_->get(kEpochKey);
    if (!e) return e.status();
    if (e->has_value()) {
      const std::string& s = (*e)->value;
      std::from_chars(s.data(), s.data() + s.size(), v);
    }
  }
  epoch_ = v;
  return v;
}

Status AppliedLedger::raise_epoch(uint64_t epoch) {
  auto current = highest_epoch();
  if (!current) return current.status();
  if (epoch <= *current) return Status::ok();
  std::lock_guard lock(mu_);
  if (kv_) {
    auto r = kv_->put(kEpochKey, std::to_string(epoch));
    if (!r) return r.status();
  }
  epoch_ = epoch;
  return Status::ok();
}

bus::KvSettings ledger_settings(const BridgeConfig& cfg) {
  bus::KvSettings kv;
  kv.bucket = cfg.actions.state_bucket.empty() ? wire::stream_prefix(cfg.root) + "_BRIDGE"
                                               : cfg.actions.state_bucket;
  kv.replicas = cfg.actions.state_replicas;
  // Longer than the actions stream keeps an action (7 days): a decision still in the stream is
  // still remembered.
  kv.ttl = std::chrono::hours(24 * 8);
  return kv;
}

}  // namespace gpuaas::bridge
