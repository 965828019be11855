// The daemon's API request path, as a request reaches gpuaasd over NATS: Daemon::answer() with
// any subject under api.>, any reply subject and any body, on a daemon that holds the demo
// cluster, two tenants' jobs and the two-teams policy, with the real plugins. Every answer must be
// one JSON object (an error is {"error": ...}); a crash, an exception or an answer that is not
// JSON is a finding. Nothing the input carries may end the process.
//
// Input: byte 0 picks the endpoint (bits 0-2: state, plugins, explain, report, or the input's
// own), whether the request is scoped (bit 3) and the reply (bits 4-5: an inbox, the input's own,
// a stream's purge API, none); then the scope (or endpoint), '\n', the reply, '\n', the body.
// Seeds: corpus/api.
#include <google/protobuf/stubs/logging.h>
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gpuaas/bus/memory_bus.hpp"
#include "gpuaas/core/daemon.hpp"
#include "gpuaas/core/plugin_interpreter.hpp"
#include "gpuaas/host/plugin_host.hpp"
#include "gpuaas/wire/event_codec.hpp"

namespace {

using nlohmann::json;
namespace core = gpuaas::core;
namespace wire = gpuaas::wire;

core::Daemon* gpuaasd = nullptr;
const gpuaas::bus::Subjects kSubjects("gpuaas");

void publish(gpuaas::bus::Bus& bus, const std::string& subject, const json& object, int n) {
  auto ev =
      wire::make_object_event(wire::ChangeType::kAdded, object.dump(), "seed-" + std::to_string(n),
                              "fuzz", wire::EventTime(std::chrono::seconds(1'800'000'000 + n)));
  if (!bus.publish_stored(wire::encode_event(ev, subject), ev.id())) std::abort();
}

json job(const std::string& ns, const std::string& name, int gpus) {
  return {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata",
       {{"name", name}, {"namespace", ns}, {"labels", {{"kueue.x-k8s.io/queue-name", "main"}}}}},
      {"spec",
       {{"suspend", true},
        {"parallelism", 1},
        {"template",
         {{"spec",
           {{"containers",
             json::array({{{"name", "main"},
                           {"resources",
                            {{"requests", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}}}}}}};
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  google::protobuf::SetLogHandler(nullptr);
  gpuaas::host::PluginHostOptions options;
  options.max_consecutive_failures = 0;
  auto* host = new gpuaas::host::PluginHost(nullptr, options);
  host->load_directory(GPUAAS_FUZZ_PLUGIN_DIR);
  if (host->plugins().empty()) {
    std::fprintf(stderr, "fuzz_api: no plugin loaded from %s\n", GPUAAS_FUZZ_PLUGIN_DIR);
    std::abort();
  }
  auto* interpreter = new core::PluginInterpreter(*host);
  auto* bus = gpuaas::bus::make_memory_bus().release();
  core::DaemonConfig cfg = core::default_config();
  cfg.server = core::kEmbeddedServer;
  cfg.tick_interval = std::chrono::milliseconds(0);
  cfg.policy_watch_interval = std::chrono::milliseconds(0);
  cfg.admin_listen.clear();
  cfg.snapshots.every_events = 0;
  cfg.policy_files = {GPUAAS_FUZZ_SOURCE_DIR "/policies/examples/two-teams.yaml"};
  gpuaasd = new core::Daemon(cfg, *bus, nullptr, interpreter);
  if (!gpuaasd->start()) std::abort();
  json node = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", "gpu-1"}, {"labels", {{"nvidia.com/gpu.product", "NVIDIA-H100"}}}}},
      {"status",
       {{"capacity", {{"nvidia.com/gpu", "8"}}},
        {"allocatable", {{"nvidia.com/gpu", "8"}}},
        {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
  publish(*bus, kSubjects.events("", "Node"), node, 1);
  int n = 2;
  for (const char* ns : {"team-a", "team-b"})
    for (int gpus : {1, 4, 16})
      publish(*bus, kSubjects.submissions(ns, "Job"), job(ns, "job-" + std::to_string(gpus), gpus),
              n++);
  for (int i = 0; i < 100; ++i) {
    auto got = gpuaasd->step(std::chrono::milliseconds(1));
    if (!got) std::abort();
    if (*got == 0) break;
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(bytes), size);
  const unsigned mode = static_cast<unsigned char>(in[0]);
  std::string_view rest = in.substr(1);
  auto next = [&rest] {
    const std::size_t nl = rest.find('\n');
    std::string_view part = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    return part;
  };
  const std::string_view scope = next();
  const std::string_view own_reply = next();
  static constexpr const char* kEndpoints[] = {"state", "plugins", "explain", "report"};
  gpuaas::bus::Message request;
  const unsigned endpoint = mode & 7u;
  if (endpoint < 4) {
    request.subject = (mode & 8u) != 0 ? kSubjects.api(kEndpoints[endpoint], scope)
                                       : kSubjects.api(kEndpoints[endpoint]);
  } else {
    request.subject = kSubjects.prefix() + ".api." + std::string(scope);
  }
  switch ((mode >> 4) & 3u) {
    case 0:
      request.reply = "_INBOX.fuzz.1";
      break;
    case 1:
      request.reply = own_reply;
      break;
    case 2:
      request.reply = "$JS.API.STREAM.PURGE.GPUAAS_EVENTS";
      break;
    default:
      break;
  }
  request.data = rest;
  const std::optional<std::string> answer = gpuaasd->answer(request);
  if (answer) {
    json parsed = json::parse(*answer, nullptr, false);
    if (parsed.is_discarded() || !(parsed.is_object() || parsed.is_array())) {
      std::fprintf(stderr, "fuzz_api: an answer that is not JSON: %.200s\n", answer->c_str());
      std::abort();
    }
  } else if (gpuaas::bus::Subjects("gpuaas").unanswerable_reply(request.reply).empty()) {
    std::fprintf(stderr, "fuzz_api: no answer to a request with reply %s\n", request.reply.c_str());
    std::abort();
  }
  return 0;
}
