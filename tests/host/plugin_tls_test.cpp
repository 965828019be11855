// Plugins built with the SDK carry no thread-local storage. A dlopen()ed library's TLS is dynamic
// TLS, which LeakSanitizer of clang 14 misreads on glibc 2.36 and crashes on (the fuzz targets load
// the real plugins), and which every thread of the host would pay for at first use.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace gpuaas::host {
namespace {

namespace fs = std::filesystem;

// The program header types of an ELF64 file, or a message naming what is wrong with it.
std::vector<Elf64_Word> segment_types(const fs::path& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr header{};
  if (!in.read(reinterpret_cast<char*>(&header), sizeof header) ||
      std::string(reinterpret_cast<const char*>(header.e_ident), SELFMAG) != ELFMAG ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize != sizeof(Elf64_Phdr)) {
    *error = path.string() + ": not an ELF64 file";
    return {};
  }
  std::vector<Elf64_Word> types;
  for (Elf64_Half i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment{};
    in.seekg(static_cast<std::streamoff>(header.e_phoff + i * sizeof segment));
    if (!in.read(reinterpret_cast<char*>(&segment), sizeof segment)) {
      *error = path.string() + ": program header " + std::to_string(i) + " cut short";
      return {};
    }
    types.push_back(segment.p_type);
  }
  return types;
}

std::vector<fs::path> libraries_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".so") out.push_back(entry.path());
  }
  return out;
}

TEST(PluginTlsTest, NoPluginHasAThreadLocalSegment) {
  std::vector<fs::path> plugins = libraries_in(GPUAAS_PLUGIN_DIR);
  for (const auto& p : libraries_in(GPUAAS_TEST_PLUGINS)) plugins.push_back(p);
  ASSERT_GE(plugins.size(), 6u) << "the real plugins are built into " << GPUAAS_PLUGIN_DIR;
  for (const auto& plugin : plugins) {
    std::string error;
    const auto types = segment_types(plugin, &error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_FALSE(types.empty()) << plugin;
    for (Elf64_Word type : types) EXPECT_NE(type, PT_TLS) << plugin << " has a PT_TLS segment";
  }
}

TEST(PluginTlsTest, TheCheckSeesATlsSegment) {
  // The test binary itself has thread_locals (gtest's), so the reader does find one when it is
  // there.
  static thread_local int used = 1;
  ASSERT_EQ(used, 1);
  std::string error;
  const auto types = segment_types("/proc/self/exe", &error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_NE(std::find(types.begin(), types.end(), PT_TLS), types.end());
}

}  // namespace
}  // namespace gpuaas::host
