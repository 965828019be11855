// Which Kubernetes kinds are cluster-scoped. kubectl learns scope from API discovery; without an
// API server, the cluster-scoped kinds gpuaas meets are listed here, for gpuaasctl (which puts
// an object on its namespace's subject) and gpuaasd (which accepts these only on the cluster's).
// Everything else is namespaced.
#pragma once

#include <string_view>

namespace gpuaas {

bool cluster_scoped_kind(std::string_view kind);

}  // namespace gpuaas
