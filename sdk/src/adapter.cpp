#include "gpuaas/plugin/plugin.hpp"

#include <map>
#include <mutex>
#include <thread>

namespace gpuaas::plugin::detail {

Json parse_object(gpuaas_bytes object) {
  try {
    return Json::parse(object.data, object.data + object.size);
  } catch (const Json::parse_error& e) {
    throw InvalidInput(std::string("object JSON: ") + e.what());
  }
}

Json parse_config(gpuaas_bytes config) {
  if (config.size == 0) return Json::object();
  Json j;
  try {
    j = Json::parse(config.data, config.data + config.size);
  } catch (const Json::parse_error& e) {
    throw InvalidInput(std::string("plugin configuration: ") + e.what());
  }
  if (!j.is_object()) throw InvalidInput("plugin configuration: not a JSON object");
  return j;
}

v1::ActionSet to_action_set(const Workload& w, Patch patch, const v1::ActionRequest& request) {
  v1::ActionSet set;
  if (patch.empty()) return set;  // already in the wanted state
  v1::Action* a = set.add_actions();
  *a->mutable_target() = w.ref();
  if (patch.delete_object) {
    a->set_operation(v1::Action::DELETE);  // the bridge sends no body with a DELETE
  } else {
    a->set_operation(v1::Action::MERGE_PATCH);
    a->set_body_json(patch.body.dump());
  }
  a->set_reason(request.reason());
  return set;
}

// One slot per thread, as the ABI promises, but not in thread_local storage: a thread_local in a
// dlopen()ed library lives in dynamic TLS, which LeakSanitizer of clang 14 misreads on glibc 2.36
// and crashes on at exit, depending on the heap's layout. Map nodes never move, so a slot's
// reference stays valid while other threads add theirs.
std::string& create_error() {
  static std::mutex mutex;
  static std::map<std::thread::id, std::string> messages;
  std::lock_guard lock(mutex);
  return messages[std::this_thread::get_id()];
}

}  // namespace gpuaas::plugin::detail
