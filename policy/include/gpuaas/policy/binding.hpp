// How an admitted workload's pods are held to the nodes placement chose (docs/admission.md):
// required narrows each gated pod to its node, preferred gives its templates a preferred node
// affinity and no gate, off publishes the plan only. kKindDefault: what the kind's plugin says.
#pragma once

namespace gpuaas::policy {

enum class Binding { kKindDefault, kRequired, kPreferred, kOff };

}  // namespace gpuaas::policy
