#include "file_trust.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace gpuaas::host::plugin {

Check check_trusted(const std::filesystem::path& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return refuse(RefusalReason::kPermissions,
                  fmt::format("cannot stat {} {}: {}", what, path.string(), std::strerror(errno)));
  }
  const unsigned mode = st.st_mode & 07777;
  if ((st.st_mode & S_IWOTH) != 0) {
    return refuse(RefusalReason::kPermissions,
                  fmt::format("{} {} is writable by others (mode {:04o}); run chmod o-w on it",
                              what, path.string(), mode));
  }
  const uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0) {
    return refuse(RefusalReason::kPermissions,
                  fmt::format("{} {} is owned by uid {}, not by gpuaasd's user (uid {}) or root",
                              what, path.string(), st.st_uid, me));
  }
  return std::nullopt;
}

Check check_library_trusted(const std::filesystem::path& library,
                            const std::filesystem::path& manifest) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path found_in = fs::absolute(library, ec).parent_path();
  const fs::path real = fs::canonical(library, ec);
  if (ec) {
    return refuse(RefusalReason::kLoad,
                  fmt::format("cannot resolve library {}: {}", library.string(), ec.message()));
  }
  if (auto bad = check_trusted(real, "library")) return bad;
  if (auto bad = check_trusted(real.parent_path(), "directory")) return bad;
  if (fs::canonical(found_in, ec) != real.parent_path() && !ec) {
    if (auto bad = check_trusted(found_in, "directory")) return bad;
  }
  if (!manifest.empty() && fs::exists(manifest, ec)) {
    if (auto bad = check_trusted(manifest, "manifest")) return bad;
  }
  return std::nullopt;
}

}  // namespace gpuaas::host::plugin
