// Each broken plugin is refused with one sentence naming what is wrong, counted by reason, and
// load_directory goes on: the good plugin in the same directory still loads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuaas/host/plugin_host.hpp"
#include "plugin_test_support.hpp"

namespace gpuaas::host {
namespace {

using ::testing::ContainsRegex;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using testing::metric;
using testing::plugin_case;
using testing::TempDir;

struct RefusalCase {
  const char* dir;     // test-plugins/<dir>/lib<dir>.so, next to libgood.so
  const char* fact;    // what the reason must say
  const char* reason;  // the metric label
};

void PrintTo(const RefusalCase& c, std::ostream* os) { *os << c.dir; }

class PluginRefusalTest : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(PluginRefusalTest, RefusesWithTheFactAndStillLoadsTheGoodPlugin) {
  const RefusalCase& c = GetParam();
  telemetry::Registry registry;
  PluginHost host(&registry);
  const auto refusals = host.load_directory(plugin_case(c.dir));

  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_THAT(refusals[0].path, EndsWith(std::string("/lib") + c.dir + ".so"));
  EXPECT_THAT(refusals[0].reason, HasSubstr(c.fact));
  EXPECT_EQ(host.refusals().size(), 1u);
  EXPECT_EQ(metric(registry, "gpuaas_plugin_refusals_total", {{"reason", c.reason}}), 1.0);

  const auto loaded = host.plugins();
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0].name, "example");
  EXPECT_THAT(loaded[0].path, EndsWith("/libgood.so"));
  EXPECT_NE(host.find("example.com/v1", "Widget"), nullptr);
  EXPECT_EQ(metric(registry, "gpuaas_plugins_loaded"), 1.0);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PluginRefusalTest,
    ::testing::Values(
        RefusalCase{"abi_major", "built for plugin ABI 2.x, this gpuaasd speaks 1.", "abi"},
        RefusalCase{"abi_minor", "built for plugin ABI 1.99, newer than this gpuaasd's", "abi"},
        RefusalCase{"half_cap", "declares capability ACTIVITY but its activity() is NULL",
                    "capabilities"},
        RefusalCase{"unknown_cap", "unknown capability bits 0x10000000000", "capabilities"},
        RefusalCase{"schema",
                    "built for event schema \"gpuaas.v2\", this gpuaasd speaks "
                    "\"gpuaas.v1\"",
                    "schema"},
        RefusalCase{"bad_version", "version \"1.2\" is not a semantic version", "descriptor"},
        RefusalCase{"create_fails", "create() failed (code 3): widget controller config is broken",
                    "create"},
        RefusalCase{"no_symbol", "does not export gpuaas_plugin_get_descriptor", "symbol"},
        RefusalCase{"widget_conflict",
                    "plugin other claims kind example.com/v1 Widget, already handled by plugin "
                    "example",
                    "kind_conflict"},
        RefusalCase{"bad_plural",
                    "kind_info of example.com/v1 Widget: plural \"Widgets\" is not a resource "
                    "name",
                    "kind_info"},
        RefusalCase{"bad_hold",
                    "kind_info of example.com/v1 Widget: hold SET_TRUE needs a JSON pointer",
                    "kind_info"},
        RefusalCase{"bad_binding",
                    "kind_info of example.com/v1 Widget: unknown binding 7 (this host knows 0 to "
                    "3)",
                    "kind_info"},
        RefusalCase{"no_manifest", "no manifest: ", "manifest"},
        RefusalCase{"bad_checksum",
                    "checksum mismatch: manifest says "
                    "0000000000000000000000000000000000000000000000000000000000000000, file is ",
                    "checksum"}),
    [](const auto& param_info) { return std::string(param_info.param.dir); });

TEST(PluginPermissionsTest, WorldWritableLibraryIsRefusedBeforeLoading) {
  TempDir dir;
  dir.copy_good();
  const auto writable = dir.copy_good("writable");
  std::filesystem::permissions(writable, std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  PluginHost host;
  const auto refusals = host.load_directory(dir.path());
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_THAT(refusals[0].reason, HasSubstr("libwritable.so is writable by others (mode 0"));
  EXPECT_EQ(host.plugins().size(), 1u);
}

TEST(PluginPermissionsTest, WorldWritableDirectoryIsRefused) {
  TempDir dir;
  dir.copy_good();
  std::filesystem::permissions(dir.path(), std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  PluginHost host;
  const auto refusals = host.load_directory(dir.path());
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_THAT(refusals[0].reason,
              HasSubstr("directory " + dir.path().string() + " is writable by others"));
  EXPECT_TRUE(host.plugins().empty());
}

TEST(PluginPermissionsTest, LibraryOwnedBySomeoneElseIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file away";
  TempDir dir;
  const auto foreign = dir.copy_good("foreign");
  ASSERT_EQ(::chown(foreign.c_str(), 4242, 4242), 0);
  PluginHost host;
  const Status s = host.load(foreign);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_THAT(s.message(), HasSubstr("libforeign.so is owned by uid 4242, not by gpuaasd's user"));
}

TEST(PluginPermissionsTest, ChecksCanBeTurnedOffForDevelopment) {
  TempDir dir;
  dir.copy(plugin_case("no_manifest"), "no_manifest", "no_manifest");
  std::filesystem::permissions(dir.path(), std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  PluginHost host(nullptr, {.verify_manifest = false, .check_permissions = false});
  EXPECT_TRUE(host.load_directory(dir.path()).empty());
  EXPECT_EQ(host.plugins().size(), 1u);
}

TEST(PluginManifestTest, ManifestThatDisagreesWithTheDescriptorIsRefused) {
  TempDir dir;
  const auto so = dir.copy_good();
  const auto yaml = dir.path() / "libgood.yaml";
  std::string text = testing::read_file(yaml);
  text.replace(text.find("name: example"), 13, "name: someone");
  testing::write_file(yaml, text);
  PluginHost host;
  const Status s = host.load(so);
  EXPECT_THAT(
      s.message(),
      HasSubstr("manifest libgood.yaml says name \"someone\", the library says \"example\""));
}

TEST(PluginManifestTest, BadYamlIsRefusedWithFileAndLine) {
  TempDir dir;
  const auto so = dir.copy_good();
  testing::write_file(dir.path() / "libgood.yaml", "name: example\nversion: [1.2.0\nkinds: x\n");
  PluginHost host;
  const Status s = host.load(so);
  EXPECT_THAT(s.message(), ContainsRegex("libgood\\.yaml:[0-9]+: bad YAML"));
}

TEST(PluginConflictTest, SamePluginNameTwiceIsRefused) {
  TempDir first;
  TempDir second;
  PluginHost host;
  ASSERT_TRUE(host.load(first.copy_good()).is_ok());
  const Status s = host.load(second.copy_good());
  EXPECT_THAT(s.message(), HasSubstr("a plugin named example is already loaded from " +
                                     (first.path() / "libgood.so").string()));
  EXPECT_EQ(host.plugins().size(), 1u);
}

TEST(PluginHostTest, MissingDirectoryIsOneRefusal) {
  PluginHost host;
  const auto refusals = host.load_directory("/nonexistent/gpuaas-plugins");
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].path, "/nonexistent/gpuaas-plugins");
  EXPECT_THAT(refusals[0].reason, HasSubstr("cannot read the plugin directory"));
}

}  // namespace
}  // namespace gpuaas::host
