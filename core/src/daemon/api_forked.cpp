// API answers from a frozen copy of the state. At the size of a real cluster a state view or a
// page of explanations takes hundreds of milliseconds to render; under the model's read lock
// that is as long a pause of the intake. Instead the API's thread takes the lock only to fork:
// the child renders the answer from its copy-on-write copy, exactly as the live path would, and
// sends it back with any refusal to count; the intake goes on meanwhile.
#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "daemon/api.hpp"
#include "daemon/forked_work.hpp"
#include "gpuaas/telemetry/registry.hpp"
#include "gpuaas/telemetry/text_serializer.hpp"
#include "gpuaas/wire/utf8.hpp"

namespace gpuaas::core {
namespace {

// A forked child is single-threaded and lives for one answer: plain globals are its own.
bool g_in_child = false;
int g_child_refusal = -1;
int64_t g_max_payload = 0;

// The asker waits a few seconds (gpuaasctl's timeout); a child that sends nothing for longer
// is stuck (a lock an absent thread held at the fork) and is killed.
constexpr auto kStall = std::chrono::seconds(10);

}  // namespace

bool Api::in_forked_child() { return g_in_child; }

int64_t Api::max_payload() const { return g_in_child ? g_max_payload : ctx_.bus.max_payload(); }

void Api::note_child_refusal(ApiRefusal reason) { g_child_refusal = static_cast<int>(reason); }

std::shared_lock<std::shared_mutex> Api::read_lock() const {
  if (g_in_child) return {};
  return std::shared_lock(ctx_.model_mu);
}

bool Api::fork_worth_it() const {
  const int64_t above = ctx_.config.api_fork_above;
  if (above < 0 || g_in_child) return false;
  std::shared_lock lock(ctx_.model_mu);
  const std::size_t size = ctx_.model.nodes().size() + ctx_.model.workloads().size();
  return size > static_cast<std::size_t>(above);
}

std::optional<std::string> Api::answer_forked(std::string_view endpoint, std::string_view ns,
                                              const bus::Message& request) const {
  std::lock_guard one(fork_mu_);
  const int64_t payload = ctx_.bus.max_payload();
  auto child = [&] {
    std::shared_lock lock(ctx_.model_mu);  // held still for the fork only
    return ForkedWork::start([&] {
      g_in_child = true;
      g_max_payload = payload;
      std::string answer = dispatch(endpoint, ns, request);
      // One byte ahead of the answer: the refusal the parent counts, or none.
      return std::string(1, static_cast<char>(g_child_refusal + 1)) + answer;
    });
  }();
  if (!child) {
    spdlog::warn("API {}: {}; answering in place", wire::printable(request.subject),
                 child.status().message());
    return std::nullopt;
  }
  auto bytes = child->collect(kStall);
  if (!bytes || bytes->empty()) {
    count_refusal(ApiRefusal::kHandlerError);
    const std::string why = bytes ? "the forked child sent nothing" : bytes.status().message();
    spdlog::error("API {}: the request failed: {}", wire::printable(request.subject), why);
    return nlohmann::json{{"error", "the request failed inside gpuaasd: " + why}}.dump();
  }
  const int refusal = static_cast<unsigned char>((*bytes)[0]) - 1;
  std::string answer = bytes->substr(1);
  if (refusal >= 0 && refusal < static_cast<int>(ApiRefusal::kCount)) {
    count_refusal(static_cast<ApiRefusal>(refusal));
    if (refusal == static_cast<int>(ApiRefusal::kHandlerError))
      spdlog::error("API {}: the request failed: {}", wire::printable(request.subject), answer);
  }
  return answer;
}

// The child's refresh moves counters only in its own copy: the parent's registry keeps what it
// showed last, and each child adds to that what the ledger accrued since, so every scrape shows
// the whole value.
std::string Api::metrics_text() const {
  if (!ctx_.registry) return {};
  std::lock_guard one(fork_mu_);  // also: no thread holds the metrics' own locks at a fork
  auto render = [this] {
    if (ctx_.pipeline) ctx_.pipeline->refresh_metrics(ctx_.model);
    return telemetry::TextSerializer().Serialize(ctx_.registry->Collect());
  };
  if (fork_worth_it()) {
    auto child = [&] {
      std::shared_lock lock(ctx_.model_mu);  // held still for the fork only
      return ForkedWork::start([&] {
        g_in_child = true;
        return render();
      });
    }();
    if (child) {
      auto bytes = child->collect(kStall);
      if (bytes && !bytes->empty()) return std::move(*bytes);
      spdlog::error("/metrics: the forked child failed ({}); rendering in place",
                    bytes ? "it sent nothing" : bytes.status().message());
    } else {
      spdlog::warn("/metrics: {}; rendering in place", child.status().message());
    }
  }
  {
    std::shared_lock lock(ctx_.model_mu);
    if (ctx_.pipeline) ctx_.pipeline->refresh_metrics(ctx_.model);
  }
  return telemetry::TextSerializer().Serialize(ctx_.registry->Collect());
}

}  // namespace gpuaas::core
