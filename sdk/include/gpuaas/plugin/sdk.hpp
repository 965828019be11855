// The gpuaas plugin SDK: everything a plugin author includes.
#pragma once

#include "gpuaas/plugin/config.hpp"
#include "gpuaas/plugin/errors.hpp"
#include "gpuaas/plugin/gpu_util.hpp"
#include "gpuaas/plugin/lifecycle.hpp"
#include "gpuaas/plugin/patch.hpp"
#include "gpuaas/plugin/plugin.hpp"
#include "gpuaas/plugin/pod_set.hpp"
#include "gpuaas/plugin/pod_templates.hpp"
#include "gpuaas/plugin/samples.hpp"
#include "gpuaas/plugin/workload.hpp"
