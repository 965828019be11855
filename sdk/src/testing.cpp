#include "gpuaas/plugin/testing.hpp"

#include <nlohmann/json.hpp>

#include "gpuaas/kube/manifest_reader.hpp"
#include "gpuaas/plugin/patch.hpp"

namespace gpuaas::plugin::testing {
namespace {

gpuaas_bytes bytes(std::string_view s) { return gpuaas_bytes{s.data(), s.size()}; }

template <typename M>
M reply(gpuaas_rc rc, gpuaas_bytes out, const char* what) {
  std::string text(out.data == nullptr ? "" : std::string(out.data, out.size));
  if (rc != GPUAAS_RC_OK) throw CallFailed(rc, text);
  M m;
  if (!m.ParseFromString(text))
    throw CallFailed(GPUAAS_RC_INTERNAL, std::string(what) + ": garbage reply");
  return m;
}

void require(bool present, const char* fn) {
  if (!present) throw CallFailed(GPUAAS_RC_NOT_SUPPORTED, std::string("the plugin has no ") + fn);
}

}  // namespace

FakeHost::FakeHost(gpuaas_plugin_descriptor_fn entry, std::string config_json)
    : descriptor_(entry()) {
  if (descriptor_ == nullptr || descriptor_->api == nullptr) {
    throw std::runtime_error("the plugin returned no descriptor");
  }
  gpuaas_bytes error{};
  gpuaas_rc rc = descriptor_->api->create(bytes(config_json), &instance_, &error);
  if (rc != GPUAAS_RC_OK) throw CallFailed(rc, std::string(error.data, error.size));
}

FakeHost::~FakeHost() {
  if (instance_ != nullptr) descriptor_->api->destroy(instance_);
}

std::string FakeHost::summary() const {
  const gpuaas_plugin_descriptor& d = *descriptor_;
  std::string s = std::string(d.name) + " " + d.version + " " + d.status + " abi " +
                  std::to_string(d.abi_major) + "." + std::to_string(d.abi_minor) + " " +
                  d.event_schema + " |";
  for (uint32_t i = 0; i < d.kind_count; ++i) {
    const gpuaas_kind& k = d.kinds[i];
    std::string group = k.group == nullptr ? "" : k.group;
    s += std::string(i == 0 ? " " : ", ") + (group.empty() ? "" : group + "/") + k.version + " " +
         k.kind;
  }
  s += " |";
  const std::pair<uint64_t, const char*> caps[] = {
      {GPUAAS_CAP_DEMAND, "demand"},       {GPUAAS_CAP_LIFECYCLE, "lifecycle"},
      {GPUAAS_CAP_ADMISSION, "admission"}, {GPUAAS_CAP_SCALE_TO_ZERO, "scale-to-zero"},
      {GPUAAS_CAP_ACTIVITY, "activity"},   {GPUAAS_CAP_AUTOSCALE, "autoscale"}};
  for (const auto& [bit, name] : caps) {
    if ((d.capabilities & bit) != 0) s += std::string(" ") + name;
  }
  return s;
}

v1::WorkloadDemand FakeHost::demand(std::string_view object_json) {
  require(descriptor_->api->demand != nullptr, "demand()");
  gpuaas_bytes out{};
  gpuaas_rc rc = descriptor_->api->demand(instance_, bytes(object_json), &out);
  return reply<v1::WorkloadDemand>(rc, out, "demand");
}

v1::WorkloadLifecycle FakeHost::lifecycle(std::string_view object_json) {
  require(descriptor_->api->lifecycle != nullptr, "lifecycle()");
  gpuaas_bytes out{};
  gpuaas_rc rc = descriptor_->api->lifecycle(instance_, bytes(object_json), &out);
  return reply<v1::WorkloadLifecycle>(rc, out, "lifecycle");
}

v1::ActionSet FakeHost::action(gpuaas_action_kind kind, std::string_view object_json,
                               const v1::ActionRequest& request) {
  require(descriptor_->api->action != nullptr, "action()");
  std::string req = request.SerializeAsString();
  gpuaas_bytes out{};
  gpuaas_rc rc = descriptor_->api->action(instance_, kind, bytes(object_json), bytes(req), &out);
  return reply<v1::ActionSet>(rc, out, "action");
}

v1::WorkloadActivity FakeHost::activity(std::string_view object_json,
                                        const v1::MetricBatch& samples) {
  require(descriptor_->api->activity != nullptr, "activity()");
  std::string batch = samples.SerializeAsString();
  gpuaas_bytes out{};
  gpuaas_rc rc = descriptor_->api->activity(instance_, bytes(object_json), bytes(batch), &out);
  return reply<v1::WorkloadActivity>(rc, out, "activity");
}

std::string FakeHost::apply(std::string_view object_json, const v1::ActionSet& actions) {
  nlohmann::json obj = nlohmann::json::parse(object_json);
  for (const auto& a : actions.actions()) {
    nlohmann::json patch = nlohmann::json::parse(a.body_json());
    // The API server checks a carried resourceVersion, then drops it from the stored object.
    if (patch.contains("metadata") && patch["metadata"].contains("resourceVersion")) {
      std::string want = patch["metadata"]["resourceVersion"];
      std::string have = obj["metadata"].value("resourceVersion", "");
      if (want != have) {
        throw CallFailed(GPUAAS_RC_INVALID_INPUT,
                         "conflict: patch for resourceVersion " + want + ", object is at " + have);
      }
      patch["metadata"].erase("resourceVersion");
    }
    merge_apply(obj, patch);
  }
  return obj.dump();
}

std::vector<std::string> load_manifests(const std::string& path) {
  auto docs = kube::read_manifests(path);
  if (!docs) throw std::runtime_error(docs.status().message());
  std::vector<std::string> out;
  for (auto& m : *docs) out.push_back(std::move(m.json));
  return out;
}

std::string load_manifest(const std::string& path, std::string_view kind, std::string_view name) {
  for (auto& doc : load_manifests(path)) {
    auto j = nlohmann::json::parse(doc);
    if (j.value("kind", "") != kind) continue;
    if (!name.empty() && j["metadata"].value("name", "") != name) continue;
    return doc;
  }
  throw std::runtime_error(path + ": no " + std::string(kind) +
                           (name.empty() ? "" : " named " + std::string(name)));
}

v1::MetricSample sample(std::string name, std::vector<std::pair<std::string, std::string>> labels,
                        double value, int64_t at_ms) {
  v1::MetricSample s;
  s.set_name(std::move(name));
  for (auto& [k, v] : labels) {
    auto* l = s.add_labels();
    l->set_name(std::move(k));
    l->set_value(std::move(v));
  }
  s.set_value(value);
  s.set_timestamp_ms(at_ms);
  return s;
}

}  // namespace gpuaas::plugin::testing
