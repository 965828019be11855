// SHA-256 of a file, as lowercase hex (what `sha256sum` and CMake's file(SHA256) print).
#pragma once

#include <filesystem>
#include <string>

#include "gpuaas/base/status.hpp"

namespace gpuaas::host::plugin {

Result<std::string> file_sha256(const std::filesystem::path& path);

}  // namespace gpuaas::host::plugin
