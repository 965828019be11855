// policy check: validates policy files offline, as gpuaasd would load them, and prints each
// mistake as FILE:LINE:COLUMN: message (the form editors and CI logs link to).
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "gpuaas/policy/policy_loader.hpp"

namespace gpuaas::ctl {
namespace {

std::string count(size_t n, const char* singular, const char* plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

std::string summary(const policy::PolicySet& s, size_t warnings) {
  size_t implicit = std::count_if(s.cohorts.begin(), s.cohorts.end(),
                                  [](const policy::Cohort& c) { return c.implicit; });
  std::string out = "ok: " + count(s.files.size(), "file", "files") + ", " +
                    count(s.flavors.size(), "ResourceFlavor", "ResourceFlavors") + ", " +
                    count(s.cluster_queues.size(), "ClusterQueue", "ClusterQueues") + ", " +
                    count(s.cohorts.size(), "Cohort", "Cohorts");
  if (implicit > 0) out += " (" + std::to_string(implicit) + " implicit)";
  out += ", " + count(s.local_queues.size(), "LocalQueue", "LocalQueues") + ", " +
         count(s.priority_classes.size(), "WorkloadPriorityClass", "WorkloadPriorityClasses") +
         ", " +
         (s.admission.name.empty() ? std::string("no AdmissionPolicy (defaults)")
                                   : "AdmissionPolicy " + s.admission.name);
  if (warnings > 0) out += ", " + count(warnings, "warning", "warnings");
  return out;
}

// What gpuaasd publishes for these files: a PolicySet event holding each file's name and whole
// text as JSON strings (core/src/pipeline/policy_set_object.cpp), in an envelope of a few hundred
// bytes. Over the server's max_payload (less what headers take) it cannot be published.
std::size_t policy_set_event_bytes(const std::vector<std::string>& files) {
  std::size_t n = 512;  // the object's other fields and the event's envelope
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    n += nlohmann::json(f).dump().size() + nlohmann::json(ss.str()).dump().size() + 32;
  }
  return n;
}

}  // namespace

int check_policy(const std::vector<std::string>& paths, int64_t max_payload) {
  auto r = policy::load_policy_files(paths);
  // Errors and warnings interleaved by place: both lists are sorted by file, line, column.
  std::vector<std::string> order = r.set.files;
  auto rank = [&](const policy::Diagnostic& d) {
    auto it = std::find(order.begin(), order.end(), d.at.file);
    if (it == order.end()) it = order.insert(order.end(), d.at.file);  // an unreadable path
    return std::tuple(it - order.begin(), d.at.line, d.at.column);
  };
  size_t e = 0, w = 0;
  while (e < r.errors.size() || w < r.warnings.size()) {
    const bool error_next =
        w == r.warnings.size() || (e < r.errors.size() && rank(r.errors[e]) <= rank(r.warnings[w]));
    if (error_next) {
      std::cerr << r.errors[e++].str() << "\n";
    } else {
      const auto& d = r.warnings[w++];
      std::cerr << d.at.str() << ": warning: " << d.message << "\n";
    }
  }
  if (!r.ok()) {
    std::cerr << "policy check: " << count(r.errors.size(), "error", "errors") << "\n";
    return kExitInvalidInput;
  }
  if (const std::size_t bytes = policy_set_event_bytes(r.set.files);
      max_payload > 0 && static_cast<int64_t>(bytes) > max_payload - 4096) {
    std::string files;
    for (const auto& f : r.set.files) files += (files.empty() ? "" : ", ") + f;
    std::cerr << files << ": gpuaasd would publish these files as a PolicySet event of about "
              << bytes << " bytes, more than --max-payload " << max_payload
              << " (the NATS server's max_payload, less 4096 for headers) allows: raise "
                 "max_payload on the servers and pass it here, or shorten the files\n"
              << "policy check: 1 error\n";
    return kExitInvalidInput;
  }
  std::cout << summary(r.set, r.warnings.size()) << "\n";
  return kExitOk;
}

}  // namespace gpuaas::ctl
