// What a plugin built against ABI 1.0 (no gpuaas_kind_info) gets for each of its kinds: the
// plural, scope, hold and pods gpuaas had built in for the kinds its own plugins claimed before
// 1.1, so that upgrading gpuaasd or the bridge changes nothing for an old plugin.
#pragma once

#include "gpuaas/host/workload_plugin.hpp"

namespace gpuaas::host::plugin {

// Fills the description of `kind` (group, version and kind set) from the 1.0 table; a kind the
// table does not know: plural = lower-case kind + "s", namespaced, not held, pods by owner.
void apply_1_0_defaults(PluginKind& kind);

// The binding of a kind that declares none (GPUAAS_BINDING_DEFAULT, or a plugin before ABI 1.2):
// a session's pods come and go with its user, so preferred; anything else required.
KindBinding default_binding(bool session);

}  // namespace gpuaas::host::plugin
