// Semantic versions (semver.org 2.0.0): MAJOR.MINOR.PATCH[-pre.release][+build.metadata].
#pragma once

#include <string_view>

namespace gpuaas::host::plugin {

// True for "1.2.0", "0.1.0-alpha.1", "2.0.0+git.abc"; false for "1.2", "01.2.3", "1.2.3-".
bool is_semver(std::string_view version);

}  // namespace gpuaas::host::plugin
