#include "fake_api_server.hpp"

#include <stdexcept>

namespace gpuaas::bridge {

struct FakeApiServer::Impl {};

FakeApiServer::FakeApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FakeApiServer::~FakeApiServer() = default;

std::unique_ptr<FakeApiServer> FakeApiServer::start() {
  throw std::runtime_error("FakeApiServer: not implemented yet");
}
std::unique_ptr<FakeApiServer> FakeApiServer::start_tls(const std::string&, const std::string&) {
  throw std::runtime_error("FakeApiServer: not implemented yet");
}
std::string FakeApiServer::url() const { return ""; }
void FakeApiServer::add_resource(const std::string&, const std::string&, const std::string&, bool,
                                 bool) {}
std::string FakeApiServer::put(const nlohmann::json&) { return ""; }
void FakeApiServer::remove(const std::string&, const std::string&, const std::string&,
                           const std::string&) {}
std::optional<nlohmann::json> FakeApiServer::get(const std::string&, const std::string&,
                                                 const std::string&, const std::string&) const {
  return std::nullopt;
}
std::string FakeApiServer::resource_version() const { return ""; }
void FakeApiServer::require_token(const std::string&) {}
void FakeApiServer::forget_history_before(const std::string&) {}
void FakeApiServer::send_error_event(int) {}
void FakeApiServer::fail_next(const std::string&, const std::string&, int, const std::string&) {}
void FakeApiServer::bookmark() {}
void FakeApiServer::close_watches() {}
std::vector<FakeApiServer::Request> FakeApiServer::requests() const { return {}; }
void FakeApiServer::clear_requests() {}
int FakeApiServer::open_watches() const { return 0; }
bool FakeApiServer::wait_for_watches(int, int) const { return false; }

}  // namespace gpuaas::bridge
