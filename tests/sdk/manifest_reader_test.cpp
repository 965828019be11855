#include "gpuaas/kube/manifest_reader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "nats_fixture.hpp"

namespace gpuaas::kube {
namespace {

using nlohmann::json;

TEST(ManifestReader, MultiDocumentYamlSkipsEmptyDocuments) {
  auto r = parse_manifests(R"(---
apiVersion: v1
kind: Node
metadata:
  name: a
---
---
# only a comment
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: x}
spec:
  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1, memory: "1Gi"}}}]
)",
                           "f.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  auto pod = json::parse((*r)[1].json);
  EXPECT_EQ(pod["metadata"]["namespace"], "x");
  // Plain scalars get YAML types, quoted ones stay strings.
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], 1);
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["limits"]["memory"], "1Gi");
  EXPECT_EQ((*r)[1].origin.substr(0, 7), "f.yaml:");
}

TEST(ManifestReader, QuotedScalarsStayStrings) {
  auto r = parse_manifests(
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels:\n"
      "    a: \"true\"\n    b: \"8\"\n    c: 'null'\n    d: true\n",
      "q.yaml");
  ASSERT_TRUE(r.is_ok());
  auto labels = json::parse((*r)[0].json)["metadata"]["labels"];
  EXPECT_EQ(labels["a"], "true");
  EXPECT_EQ(labels["b"], "8");
  EXPECT_EQ(labels["c"], "null");
  EXPECT_EQ(labels["d"], true);
}

TEST(ManifestReader, JsonObjectsAndLists) {
  auto r = parse_manifests(R"({"apiVersion":"v1","kind":"List","items":[
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}},
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"b"}}]}
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"c"}})",
                           "l.json");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ(json::parse((*r)[2].json)["metadata"]["name"], "c");
}

TEST(ManifestReader, ErrorsNameFileAndLine) {
  auto bad_yaml = parse_manifests("apiVersion: v1\nkind: Node\nmetadata: {name: [\n", "bad.yaml");
  ASSERT_FALSE(bad_yaml.is_ok());
  EXPECT_NE(bad_yaml.status().message().find("bad.yaml:"), std::string::npos)
      << bad_yaml.status().message();
  auto no_name = parse_manifests("apiVersion: v1\nkind: Node\nmetadata: {}\n", "n.yaml");
  ASSERT_FALSE(no_name.is_ok());
  EXPECT_NE(no_name.status().message().find("metadata.name"), std::string::npos);
  auto no_kind = parse_manifests("apiVersion: v1\nmetadata: {name: a}\n", "k.yaml");
  ASSERT_FALSE(no_kind.is_ok());
  EXPECT_NE(no_kind.status().message().find("kind"), std::string::npos);
  auto scalar = parse_manifests("just a string\n", "s.yaml");
  EXPECT_FALSE(scalar.is_ok());
  auto bad_json = parse_manifests("{\"apiVersion\": ", "j.json");
  EXPECT_FALSE(bad_json.is_ok());
  EXPECT_FALSE(read_manifests("/nonexistent/file.yaml").is_ok());
}

TEST(ManifestReader, ReadsEveryPublishedSampleManifest) {
  namespace fs = std::filesystem;
  fs::path root = fs::path(gpuaas::testing::shared_dir()) / "manifests";
  if (!fs::exists(root)) GTEST_SKIP() << "no " << root;
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().extension() != ".yaml") continue;
    auto r = read_manifests(e.path().string());
    ASSERT_TRUE(r.is_ok()) << e.path() << ": " << r.status().message();
    for (const auto& m : *r) {
      auto j = json::parse(m.json);
      EXPECT_TRUE(j["metadata"].contains("name") || j["metadata"].contains("generateName"))
          << m.origin;
    }
    ++files;
  }
  EXPECT_GT(files, 20);
}

// The demo's own manifests must stay readable (the demo applies them).
TEST(ManifestReader, ReadsTheDemoAndExampleManifests) {
  namespace fs = std::filesystem;
  const fs::path repo = GPUAAS_SOURCE_DIR;
  for (const char* f : {"deploy/demo/cluster.yaml", "sdk/examples/simple-job/simplejob.yaml"}) {
    auto r = read_manifests((repo / f).string());
    ASSERT_TRUE(r.is_ok()) << f << ": " << r.status().message();
    EXPECT_FALSE(r->empty()) << f;
  }
}

}  // namespace
}  // namespace gpuaas::kube
