// PolicySet lookups and the Kubernetes semantics of label selectors and tolerations.
#include "gpuaas/policy/policy_set.hpp"

#include <algorithm>

namespace gpuaas::policy {
namespace {

template <typename T>
const T* find_by_name(const std::vector<T>& items, const std::string& name) {
  auto it = std::find_if(items.begin(), items.end(), [&](const T& x) { return x.name == name; });
  return it == items.end() ? nullptr : &*it;
}

void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          static const char* kHex = "0123456789abcdef";
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

bool has_value(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

}  // namespace

std::string SourceRef::str() const {
  // Line 0: the whole file (it could not be read), so no position.
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

bool LabelSelector::matches(const LabelMap& labels) const {
  if (!present) return false;
  for (const auto& [k, v] : match_labels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  for (const auto& r : match_expressions) {
    auto it = labels.find(r.key);
    const bool has = it != labels.end();
    if (r.operator_ == "In") {
      if (!has || !has_value(r.values, it->second)) return false;
    } else if (r.operator_ == "NotIn") {
      if (has && has_value(r.values, it->second)) return false;
    } else if (r.operator_ == "Exists") {
      if (!has) return false;
    } else if (r.operator_ == "DoesNotExist") {
      if (has) return false;
    } else {
      return false;  // the loader rejects other operators; match nothing rather than guess
    }
  }
  return true;
}

// As Kubernetes' Toleration.ToleratesTaint.
bool Toleration::tolerates(const Taint& t) const {
  if (!effect.empty() && effect != t.effect) return false;
  if (!key.empty() && key != t.key) return false;
  if (operator_ == "Exists") return true;
  if (operator_ == "Equal" || operator_.empty()) return value == t.value;
  return false;
}

std::string Toleration::json() const {
  std::string out = "{";
  auto field = [&](const char* name, const std::string& v) {
    if (v.empty()) return;  // omitempty, as the Kubernetes API writes it
    if (out.size() > 1) out += ',';
    append_json_string(out, name);
    out += ':';
    append_json_string(out, v);
  };
  field("key", key);
  field("operator", operator_);
  field("value", value);
  field("effect", effect);
  if (toleration_seconds) {
    if (out.size() > 1) out += ',';
    out += "\"tolerationSeconds\":" + std::to_string(*toleration_seconds);
  }
  return out + "}";
}

const ResourceFlavor* PolicySet::flavor(const std::string& name) const {
  return find_by_name(flavors, name);
}
const Cohort* PolicySet::cohort(const std::string& name) const {
  return find_by_name(cohorts, name);
}
const ClusterQueue* PolicySet::cluster_queue(const std::string& name) const {
  return find_by_name(cluster_queues, name);
}
const LocalQueue* PolicySet::local_queue(const std::string& namespace_,
                                         const std::string& name) const {
  auto it = std::find_if(local_queues.begin(), local_queues.end(), [&](const LocalQueue& q) {
    return q.namespace_ == namespace_ && q.name == name;
  });
  return it == local_queues.end() ? nullptr : &*it;
}
const WorkloadPriorityClass* PolicySet::priority_class(const std::string& name) const {
  return find_by_name(priority_classes, name);
}

const char* to_string(QueueingStrategy v) {
  return v == QueueingStrategy::kStrictFIFO ? "StrictFIFO" : "BestEffortFIFO";
}
const char* to_string(WithinClusterQueue v) {
  switch (v) {
    case WithinClusterQueue::kLowerPriority:
      return "LowerPriority";
    case WithinClusterQueue::kLowerOrNewerEqualPriority:
      return "LowerOrNewerEqualPriority";
    default:
      return "Never";
  }
}
const char* to_string(ReclaimWithinCohort v) {
  switch (v) {
    case ReclaimWithinCohort::kLowerPriority:
      return "LowerPriority";
    case ReclaimWithinCohort::kAny:
      return "Any";
    default:
      return "Never";
  }
}
const char* to_string(BorrowWithinCohort v) {
  return v == BorrowWithinCohort::kLowerPriority ? "LowerPriority" : "Never";
}
const char* to_string(StopPolicy v) {
  switch (v) {
    case StopPolicy::kHold:
      return "Hold";
    case StopPolicy::kHoldAndDrain:
      return "HoldAndDrain";
    default:
      return "None";
  }
}
const char* to_string(FungibilityChoice v) {
  return v == FungibilityChoice::kTryNextFlavor ? "TryNextFlavor" : "MayStopSearch";
}

}  // namespace gpuaas::policy
