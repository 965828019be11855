// load_policy_files: files in the order given, a directory as its sorted YAML files, unreadable
// paths as errors naming them.
#include "gpuaas/policy/policy_loader.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "policy_test_support.hpp"

namespace gpuaas::policy {
namespace {

namespace fs = std::filesystem;
using testing::joined;

class PolicyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpuaas-policy-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    auto path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }
  fs::path dir_;
};

const char* kFlavor =
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: %}\n";

std::string flavor(const std::string& name) {
  std::string s = kFlavor;
  return s.replace(s.find('%'), 1, name);
}

TEST_F(PolicyFiles, DirectoryStandsForItsYamlFilesSorted) {
  write("policies/b.yml", flavor("b"));
  write("policies/a.yaml", flavor("a") + "---\n" + flavor("c"));
  write("policies/notes.txt", "not yaml at all: [");
  write("policies/sub/d.yaml", flavor("d"));  // not recursive
  auto r = load_policy_files({(dir_ / "policies").string()});
  ASSERT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.set.files.size(), 2u);
  EXPECT_EQ(fs::path(r.set.files[0]).filename(), "a.yaml");
  EXPECT_EQ(fs::path(r.set.files[1]).filename(), "b.yml");
  ASSERT_EQ(r.set.flavors.size(), 3u);
  EXPECT_EQ(r.set.flavors[0].name, "a");
  EXPECT_EQ(r.set.flavors[1].name, "c");
  EXPECT_EQ(r.set.flavors[2].name, "b");
  EXPECT_EQ(r.set.flavors[2].at.str(), r.set.files[1] + ":3:18");
}

TEST_F(PolicyFiles, FilesInTheOrderGiven) {
  auto z = write("z.yaml", flavor("z"));
  auto a = write("a.yaml", flavor("z"));
  auto r = load_policy_files({z, a});
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(),
            a + ":3:18: ResourceFlavor \"z\" is defined twice (first at " + z + ":3:18)");
}

TEST_F(PolicyFiles, UnreadableFileIsAnErrorNamingIt) {
  auto ok = write("ok.yaml", flavor("a"));
  auto missing = (dir_ / "missing.yaml").string();
  auto r = load_policy_files({missing, ok});
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_EQ(r.errors[0].str(), missing + ": cannot read the file: No such file or directory");
  EXPECT_EQ(r.set.flavors.size(), 1u);  // the readable file still loads
  EXPECT_EQ(r.set.files, std::vector<std::string>{ok});
}

TEST_F(PolicyFiles, EmptyDirectoryIsAWarning) {
  fs::create_directories(dir_ / "empty");
  auto r = load_policy_files({(dir_ / "empty").string()});
  EXPECT_TRUE(r.ok()) << joined(r.errors);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].message.find("no .yaml or .yml files"), std::string::npos);
}

TEST_F(PolicyFiles, EmptyFilesAndDocumentsAreFine) {
  auto empty = write("empty.yaml", "");
  auto comments = write("comments.yaml", "# nothing yet\n---\n---\n");
  auto r = load_policy_files({empty, comments});
  EXPECT_TRUE(r.ok()) << joined(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  EXPECT_EQ(r.set.files.size(), 2u);
}

TEST(ContractCheck, NotAQuantityInTheSharedPolicy) {
  // What the contract check does: nominalQuota 256 becomes "lots".
  std::ifstream in(testing::shared_dir() + "/checks/data/policy.yaml");
  ASSERT_TRUE(in);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto good = parse_policy_texts({{"policy.yaml", text}});
  ASSERT_TRUE(good.ok()) << joined(good.errors);
  const auto at = text.find("nominalQuota: 256");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 17, "nominalQuota: lots");
  auto bad = parse_policy_texts({{"bad.yaml", text}});
  ASSERT_EQ(bad.errors.size(), 1u) << joined(bad.errors);
  EXPECT_EQ(bad.errors[0].at.file, "bad.yaml");
  EXPECT_EQ(bad.errors[0].at.line, 22);
  EXPECT_EQ(bad.errors[0].at.column, 29);
  EXPECT_NE(bad.errors[0].message.find("nominalQuota: \"lots\" is not a quantity"),
            std::string::npos);
}

// Fuzzing (tests/fuzz/corpus/policy): nesting past yaml-cpp's depth guard (2000) is an error at a
// place in the file, not a stack overflow; nesting below it is checked like any other value.
std::string repeated(std::string_view piece, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += piece;
  return s;
}

const char* kDeepHead =
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: deep}\nspec:\n"
    "  resourceGroups: ";

TEST(DeepNesting, PastTheDepthGuardIsAnError) {
  for (const int depth : {2500, 100000}) {
    auto r = parse_policy_texts(
        {{"deep.yaml", kDeepHead + repeated("[", depth) + repeated("]", depth) + "\n"}});
    ASSERT_FALSE(r.ok()) << depth;
    EXPECT_EQ(r.errors[0].at.file, "deep.yaml");
    EXPECT_GT(r.errors[0].at.line, 0);
  }
  auto block =
      parse_policy_texts({{"block.yaml", kDeepHead + ("\n  " + repeated("- ", 2500)) + "x\n"}});
  EXPECT_FALSE(block.ok());
}

TEST(DeepNesting, BelowTheDepthGuardIsChecked) {
  const std::string text =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: deep}\nspec:\n"
      "  nodeLabels: " +
      repeated("{a: ", 1500) + "1" + repeated("}", 1500) + "\n";
  // A label's value must be a string, not a mapping: an ordinary error.
  EXPECT_FALSE(parse_policy_texts({{"deep.yaml", text}}).ok());
}

// Found by fuzz_policy: yaml-cpp 0.7's LoadAll never returned on a stray ",", growing memory.
TEST(StrayToken, IsAnErrorNamingItsLine) {
  for (const std::string text : {",", ",\n", "# c\n,\n"}) {
    auto r = parse_policy_texts({{"comma.yaml", text}});
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.errors[0].at.file, "comma.yaml");
  }
  const std::string flavor =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: a}\n";
  auto r = parse_policy_texts({{"two.yaml", flavor + "---\n,\n" + flavor}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].at.line, 5);
  // Document markers still split documents, with the right lines.
  auto ok = parse_policy_texts({{"ok.yaml", flavor + "...\n---\n" +
                                               "apiVersion: kueue.x-k8s.io/v1beta1\nkind: "
                                               "ResourceFlavor\nmetadata: {name: b}\n"}});
  EXPECT_TRUE(ok.ok());
}

}  // namespace
}  // namespace gpuaas::policy
