#include "daemon/output.hpp"

#include <string>

namespace gpuaas::core {

PendingOutput pending_decision(Outbound out, uint64_t sequence) {
  return PendingOutput{std::move(out.message), sequence, out.action, out.action};
}

std::vector<PendingOutput> pending_deadletters(
    std::vector<std::pair<bus::Message, uint64_t>> deadletters) {
  std::vector<PendingOutput> out;
  out.reserve(deadletters.size());
  for (auto& [msg, seq] : deadletters) out.push_back({std::move(msg), seq, false, true});
  return out;
}

// JetStream drops a repeat of a stored message within the duplicate window; beyond it, consumers
// drop repeats by decision id and, with several daemons, actions from an epoch older than one
// they have seen.
Status publish_output(bus::Bus& bus, const PendingOutput& out, bool& stored) {
  auto id = out.message.header("ce-id");
  stored = out.stored && id.has_value();
  if (!stored) return bus.publish(out.message);
  return bus.publish_stored_async(out.message, std::string(*id));
}

}  // namespace gpuaas::core
