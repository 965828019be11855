// Admission as Kueue does it for a Job: the flavor goes into spec.template.spec and spec.suspend
// turns false; suspension sets spec.suspend and restores the template. Kubernetes lets
// spec.template change only while the Job is suspended and has never started (no
// status.startTime). Kueue clears startTime through the status subresource when it stops a Job;
// an action here is one merge patch on the object, so the template of a Job that runs or has
// run stays as it is: SUSPEND then only sets the flag, and ADMIT refuses a flavor that would
// change it.
// Both patches carry the resourceVersion: they flip the flag and replace the tolerations list
// whole, and whether the template may change depends on the status they were computed from.
#include <array>

#include "batch_job.hpp"

namespace gpuaas::batch_job {
namespace {

const std::array<std::string, 1> kPodSpecs = {kPodSpec};

// Why the API server would refuse a change of spec.template on this version of the Job: the
// field and the rule, or "" when it accepts one.
std::string template_frozen(const Workload& w) {
  if (!w.flag_at(kSuspend, false)) return "/spec/suspend: the Job is not suspended";
  const Json* started = w.find("/status/startTime");
  if (started != nullptr && !started->is_null()) return "/status/startTime: the Job has run";
  return "";
}

void set_suspend(Json& o, bool value) {
  if (const Json* spec = plugin::locate(o, "/spec", false); spec == nullptr || !spec->is_object()) {
    throw plugin::InvalidInput("/spec: not an object");
  }
  *plugin::locate(o, kSuspend, true) = value;
}

}  // namespace

plugin::Patch job_admit(const Workload& w, const v1::ActionRequest& request) {
  const std::string frozen = template_frozen(w);  // a malformed flag is refused, not overwritten
  Json o = w.json();
  plugin::apply_flavor(o, kPodSpecs, request);
  if (!frozen.empty() && o["spec"]["template"] != w.at("/spec/template")) {
    throw plugin::InvalidInput(frozen + ", so Kubernetes keeps spec.template as it is (flavor \"" +
                               w.annotation(plugin::kFlavorAnnotation) + "\"); flavor \"" +
                               request.flavor() + "\" would change it");
  }
  set_suspend(o, false);
  return plugin::Patch::between(w, o, plugin::Guard::kResourceVersion);
}

plugin::Patch job_suspend(const Workload& w) {
  const bool frozen = !template_frozen(w).empty();
  Json o = w.json();
  // Otherwise the flavor stays recorded; an ADMIT to the same flavor runs the Job again.
  if (!frozen) plugin::restore_templates(o);
  set_suspend(o, true);
  return plugin::Patch::between(w, o, plugin::Guard::kResourceVersion);
}

}  // namespace gpuaas::batch_job
