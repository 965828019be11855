// Discovery for the fake API server, so that kubectl (and client-go's RESTMapper) can map kinds to
// resources: /api (APIVersions), /api/v1 and /apis/<group>/<version> (APIResourceList), /apis
// (APIGroupList), /apis/<group> (APIGroup) and /version, all built from the resources the store
// was told of. Only the legacy (unaggregated) form: clients that ask for aggregated discovery
// (apidiscovery.k8s.io/v2) fall back to it on an application/json answer, as they do with older
// API servers. /openapi/v2 and /openapi/v3 stay 404, which kubectl takes as "no schema".
#pragma once

#include <optional>
#include <string>

#include "fake_api_server.hpp"
#include "fake_api_store.hpp"

namespace gpuaas::bridge {

// The answer to a GET of a discovery path, or nullopt when the request is not one (the store
// serves it). Checks the bearer token as the store does. The caller holds store.mutex.
// `server_address` ("127.0.0.1:PORT") goes into serverAddressByClientCIDRs.
std::optional<Reply> DiscoveryReply(const FakeStore& store, const FakeApiServer::Request& request,
                                    const std::string& server_address);

}  // namespace gpuaas::bridge
