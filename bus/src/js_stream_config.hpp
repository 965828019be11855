// StreamSettings -> nats.c's jsStreamConfig, in one place. The object owns the subject array the
// config points into, so it must outlive every call that uses get().
#pragma once

#include <nats/nats.h>

#include <vector>

#include "gpuaas/bus/stream.hpp"

namespace gpuaas::bus {

class JsStreamConfig {
 public:
  explicit JsStreamConfig(const StreamSettings& st) {
    jsStreamConfig_Init(&cfg_);
    for (const auto& s : st.subjects) subjects_.push_back(s.c_str());
    cfg_.Name = st.name.c_str();
    cfg_.Subjects = subjects_.data();
    cfg_.SubjectsLen = static_cast<int>(subjects_.size());
    cfg_.Storage = st.storage == Storage::kFile ? js_FileStorage : js_MemoryStorage;
    cfg_.Replicas = st.replicas;
    cfg_.MaxAge = std::chrono::nanoseconds(st.max_age).count();
    cfg_.MaxBytes = st.max_bytes;
    cfg_.Duplicates = std::chrono::nanoseconds(st.duplicate_window).count();
    cfg_.Retention = js_LimitsPolicy;  // events are kept for replay whatever consumers acked
  }
  JsStreamConfig(const JsStreamConfig&) = delete;
  JsStreamConfig& operator=(const JsStreamConfig&) = delete;

  jsStreamConfig* get() { return &cfg_; }

 private:
  std::vector<const char*> subjects_;
  jsStreamConfig cfg_;
};

}  // namespace gpuaas::bus
