// The intake's decode path on one NATS message, as gpuaasd's EventApplier takes it: subject ->
// category, namespace, kind; body -> gpuaas.v1.Event (the wire-bytes fast path, the protobuf
// parser or the JSON mapping, by content type); object JSON -> KubeObject; then the model.
//
// Input: byte 0 chooses the content-type header (bits 0-1: none, protobuf, JSON, something else)
// and whether the body is also given to the object decoder on its own (bit 2); then the subject up
// to the first '\n'; the rest is the body. Seeds: corpus/event, and make_seeds.py from
// ../shared/manifests at run time.
#include <google/protobuf/stubs/logging.h>
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuaas/bus/subjects.hpp"
#include "gpuaas/core/cluster_model.hpp"
#include "gpuaas/core/event_applier.hpp"
#include "gpuaas/core/object_decoder.hpp"

namespace {

const std::optional<std::string_view> kContentTypes[] = {
    std::nullopt, std::string_view("application/protobuf"), std::string_view("application/json"),
    std::string_view("text/plain")};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Each rejected input logs a dead-letter warning; thousands a second drown the fuzzer's output.
  spdlog::set_level(spdlog::level::off);
  // So does protobuf's complaint about each string field that is not UTF-8.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace gpuaas;
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(bytes), size);
  const unsigned mode = static_cast<unsigned char>(in[0]);
  std::string_view rest = in.substr(1);
  const std::size_t nl = rest.find('\n');
  const std::string_view subject = nl == std::string_view::npos ? rest : rest.substr(0, nl);
  const std::string_view body =
      nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);

  // A model per input, so each run is independent of the ones before it.
  core::ClusterModel model;
  core::EventApplier applier(bus::Subjects(), "fuzz", nullptr);
  core::Delivery d{subject, body, kContentTypes[mode & 3u], 1};
  applier.apply(d, model);
  (void)applier.take_deadletters();

  if ((mode & 4u) != 0) {
    core::ObjectDecoder decoder;
    (void)decoder.decode(std::string(body));
  }
  return 0;
}
