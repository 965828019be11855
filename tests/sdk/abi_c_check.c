/* Compiled as strict C: the plugin ABI header must stay plain C (no C++ in the boundary). */
#include "gpuaas/plugin/abi.h"

static gpuaas_rc no_create(gpuaas_bytes config, gpuaas_plugin** out, gpuaas_bytes* error) {
  (void)config;
  *out = NULL;
  error->data = "not implemented";
  error->size = 15;
  return GPUAAS_RC_NOT_SUPPORTED;
}

static const gpuaas_kind kinds[] = {{"example.io", "v1", "Example"}};
static const gpuaas_plugin_api api = {sizeof(gpuaas_plugin_api), no_create, NULL, NULL, NULL,
                                      NULL, NULL};
static const gpuaas_kind_info kind_info[] = {
    {sizeof(gpuaas_kind_info), GPUAAS_SCOPE_NAMESPACED, "examples", GPUAAS_HOLD_SET_TRUE,
     GPUAAS_PODS_BY_OWNER, "/spec/suspend", NULL, NULL, GPUAAS_KIND_QUEUED_ONLY,
     GPUAAS_BINDING_REQUIRED}};
static const gpuaas_plugin_descriptor descriptor = {
    sizeof(gpuaas_plugin_descriptor), GPUAAS_PLUGIN_ABI_MAJOR, GPUAAS_PLUGIN_ABI_MINOR,
    "example", "0.0.1", kinds, 1, 0, GPUAAS_PLUGIN_EVENT_SCHEMA, "alpha", &api,
    kind_info, sizeof(gpuaas_kind_info)};

const gpuaas_plugin_descriptor* gpuaas_abi_c_check(void) { return &descriptor; }
