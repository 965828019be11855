// Actions through the notebook controller's stop annotation: while it is present the controller
// keeps the notebook's StatefulSet at 0 replicas, without it at 1. Nothing else owns that replica
// count, and the notebook has no suspend flag, so the annotation is both "held" and "scaled to 0".
#include <array>
#include <chrono>
#include <cstdio>

#include "workbench.hpp"

namespace gpuaas::workbench {
namespace {

using plugin::Guard;
using plugin::Patch;

const std::array<std::string, 1> kTemplates = {kPodSpec};

// The stop value scale_to_zero wrote, kept beside the SDK's record of the original (absent)
// annotation, so that scale_back can tell our stop from one the user made since.
constexpr const char* kIdleStopAnnotation = "workbench.gpuaas.io/idle-stop";
const std::array<std::string, 2> kScalePointers = {
    kStopPointer, "/metadata/annotations/workbench.gpuaas.io~1idle-stop"};

// Forgets an earlier scale-to-zero: after an admission or a suspension, scale_back must not
// remove a stop that it did not make.
void forget_scale(Json& o) {
  plugin::erase_annotation(o, plugin::kScaledFromAnnotation);
  plugin::erase_annotation(o, kIdleStopAnnotation);
}

void check_annotations(const plugin::Workload& w) {
  const Json* a = w.find("/metadata/annotations");
  if (a != nullptr && !a->is_null() && !a->is_object()) {
    throw plugin::InvalidInput("/metadata/annotations: not an object");
  }
}

}  // namespace

std::string stop_value(const v1::ActionRequest& r) {
  const int64_t secs = r.has_time() ? r.time().seconds() : 0;
  // Before 1970 or past year 9999 is no event time of ours (Timestamp allows 0001..9999).
  if (secs <= 0 || secs > 253402300799) return kNoTimeStopValue;
  using namespace std::chrono;
  const sys_seconds at{seconds{secs}};
  const auto day = floor<days>(at);
  const year_month_day ymd{day};
  const hh_mm_ss hms{at - day};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return buf;
}

// Admission: the flavor into the pod template (originals recorded by the SDK) and the stop
// annotation removed. Guarded: the template is replaced whole, a concurrent edit must not be lost.
Patch admit(const plugin::Workload& w, const v1::ActionRequest& r) {
  check_annotations(w);
  Json o = w.json();
  plugin::apply_flavor(o, kTemplates, r);
  plugin::erase_annotation(o, kStopAnnotation);
  forget_scale(o);
  return Patch::between(w, o, Guard::kResourceVersion);
}

// Suspension: the template as it was before admission, and the notebook stopped. A stop that is
// already there keeps its time.
Patch suspend(const plugin::Workload& w, const v1::ActionRequest& r) {
  check_annotations(w);
  Json o = w.json();
  plugin::restore_templates(o);
  forget_scale(o);
  if (!w.has_annotation(kStopAnnotation)) {
    plugin::mutable_annotations(o)[kStopAnnotation] = stop_value(r);
  }
  return Patch::between(w, o, Guard::kResourceVersion);
}

// Scale to zero: a notebook already stopped (by its user, the culler or a suspension) stays as it
// is and nothing is recorded, so scale_back will not start it. Otherwise the stop is set and the
// SDK records that the annotation was absent. The quota reservation is the daemon's business.
// Guarded: a stop the user set meanwhile must not be overwritten and recorded as ours.
Patch scale_to_zero(const plugin::Workload& w, const v1::ActionRequest& r) {
  check_annotations(w);
  if (w.has_annotation(kStopAnnotation)) return {};
  Json o = w.json();
  plugin::scale_to(o, kScalePointers, Json(stop_value(r)));
  return Patch::between(w, o, Guard::kResourceVersion);
}

// Scale back: only what scale_to_zero recorded is undone. When the stop's value is no longer the
// one we wrote, the user stopped the notebook again since: the record goes, the stop stays.
Patch scale_back(const plugin::Workload& w, const v1::ActionRequest&) {
  check_annotations(w);
  Json o = w.json();
  const bool user_stop = w.has_annotation(kStopAnnotation) &&
                         w.annotation(kStopAnnotation) != w.annotation(kIdleStopAnnotation);
  const Json* current = w.find(kStopPointer);
  const Json kept = current != nullptr ? *current : Json();
  if (!plugin::scale_back(o)) return {};
  if (user_stop) plugin::mutable_annotations(o)[kStopAnnotation] = kept;
  return Patch::between(w, o, Guard::kResourceVersion);
}

}  // namespace gpuaas::workbench
