// The manifest reader, the file checksum and the sanitizing of plugin messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugin_manifest.hpp"
#include "plugin_test_support.hpp"
#include "plugin_text.hpp"
#include "sha256.hpp"

namespace gpuaas::host::plugin {
namespace {

using host::testing::TempDir;
using host::testing::write_file;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kSha[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

class ManifestTest : public ::testing::Test {
 protected:
  Result<PluginManifest> read(const std::string& text) {
    write_file(path_, text);
    return read_manifest(path_);
  }
  std::string error(const std::string& text) {
    auto m = read(text);
    return m ? "read" : m.status().message();
  }

  TempDir dir_;
  std::filesystem::path path_ = dir_.path() / "libx.yaml";
};

TEST_F(ManifestTest, ReadsNameVersionKindsAndSha) {
  const auto m = read(std::string("name: ray\nversion: 1.2.0\nkinds:\n") +
                      "  - {group: ray.io, version: v1, kind: RayCluster}\n" +
                      "  - {version: v1, kind: Pod}\nsha256: " + kSha + "\n");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ(m->name, "ray");
  EXPECT_EQ(m->version, "1.2.0");
  EXPECT_THAT(m->kinds,
              ElementsAre(PluginKind{"ray.io", "v1", "RayCluster"}, PluginKind{"", "v1", "Pod"}));
  EXPECT_EQ(m->sha256, kSha);
}

TEST_F(ManifestTest, SaysFileAndLineOfWhatIsWrong) {
  const std::string f = path_.string();
  EXPECT_EQ(error("name: ray\nversion: 1.0.0\nkinds: []\nsha256: " + std::string(kSha)),
            f + ":3: kinds must be a non-empty list of {group, version, kind}");
  EXPECT_EQ(error("name: ray\nversion: 1.0.0\nkinds: [{kind: X}]\nsha256: " + std::string(kSha)),
            f + ":3: missing key version");
  EXPECT_EQ(error("name: ray\nversion: 1.0.0\nkinds: [{version: v1, kind: X}]\nsha256: abc\n"),
            f + ":4: sha256 must be 64 hex digits");
  EXPECT_EQ(error("name: [ray]\n"), f + ":1: name must be a string");
  EXPECT_EQ(error("name: ray\n"), f + ":1: missing key version");
  EXPECT_THAT(error("name: ray\nversion: {1.0.0\n"), HasSubstr(f + ":3: bad YAML: "));
  EXPECT_EQ(error("- a\n"), f + ":1: the manifest must be a map");
  EXPECT_THAT(read_manifest(dir_.path() / "nope.yaml").status().message(),
              HasSubstr("no manifest: "));
}

TEST(ManifestPathTest, ReplacesSoWithYaml) {
  EXPECT_EQ(manifest_path_for("/p/libgpuaas_ray.so"), "/p/libgpuaas_ray.yaml");
}

TEST(Sha256Test, HashesAFile) {
  TempDir dir;
  write_file(dir.path() / "abc", "abc");
  EXPECT_EQ(file_sha256(dir.path() / "abc").value(), kSha);
  EXPECT_FALSE(file_sha256(dir.path() / "missing").is_ok());
}

TEST(PrintableTest, KeepsUtf8AndReplacesTheRest) {
  EXPECT_EQ(printable(nullptr, 0), "(no message)");
  EXPECT_EQ(printable("a\nb\tc", 5), "a b c");
  const std::string utf8 = "gr\xc3\xbc\xc3\x9f";
  EXPECT_EQ(printable(utf8.data(), utf8.size()), utf8);
  EXPECT_EQ(printable("\xff\xc3x\xed\xa0\x80", 6), "??x???");  // bad, truncated, surrogate
  const std::string long_text(5000, 'x');
  const std::string cut = printable(long_text.data(), long_text.size());
  EXPECT_EQ(cut.size(), 1027u);
  EXPECT_EQ(cut.substr(1020), "xxxx...");
}

}  // namespace
}  // namespace gpuaas::host::plugin
