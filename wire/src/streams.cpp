#include "gpuaas/wire/streams.hpp"

#include <cctype>

#include "gpuaas/bus/subjects.hpp"

namespace gpuaas::wire {

std::string stream_prefix(const std::string& root) {
  std::string p;
  for (char c : root) {
    p.push_back(std::isalnum(static_cast<unsigned char>(c)) != 0
                    ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                    : '_');
  }
  return p;
}

Streams streams(const std::string& root) {
  bus::Subjects subj(root);
  const std::string prefix = stream_prefix(root);
  Streams s;
  s.events.name = prefix + "_EVENTS";
  s.events.subjects = {subj.all(bus::SubjectCategory::kEvents),
                       subj.all(bus::SubjectCategory::kMetrics), subj.ticks(),
                       subj.all(bus::SubjectCategory::kSubmissions)};
  s.actions.name = prefix + "_ACTIONS";
  s.actions.subjects = {subj.all(bus::SubjectCategory::kActions)};
  s.deadletter.name = prefix + "_DEADLETTER";
  s.deadletter.subjects = {subj.all(bus::SubjectCategory::kDeadletter)};
  return s;
}

}  // namespace gpuaas::wire
