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

// n anchors of n aliases each: n^n values from a few hundred bytes.
std::string alias_bomb(int n) {
  std::string out = "a0: &a0 [";
  for (int i = 0; i < n; ++i) out += std::string(i ? "," : "") + "\"lol\"";
  out += "]\n";
  for (int level = 1; level < n; ++level) {
    out += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < n; ++i) out += std::string(i ? "," : "") + "*a" + std::to_string(level - 1);
    out += "]\n";
  }
  return out;
}

TEST(ManifestReader, AliasBombsAreRefusedAsKubernetesReadersRefuseThem) {
  const std::string bomb = alias_bomb(10);  // 10^10 values
  EXPECT_LT(bomb.size(), 700u);
  auto r = parse_manifests(bomb, "bomb.yaml");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("bomb.yaml:"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("excessive aliasing"), std::string::npos)
      << r.status().message();
  // 10^5 values, nearly all copies: kubectl refuses this one too.
  std::string small = "a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n";
  for (int level = 1; level < 5; ++level) {
    small += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i)
      small += std::string(i ? "," : "") + "*a" + std::to_string(level - 1);
    small += "]\n";
  }
  auto s = parse_manifests(small, "small.yaml");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.status().message().find("excessive aliasing"), std::string::npos);
}

TEST(ManifestReader, AFewAliasesAreCopiedAsYamlSays) {
  auto r = parse_manifests(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - {name: a, resources: &res {limits: {nvidia.com/gpu: 1, cpu: 2}}}
  - {name: b, resources: *res}
)",
                           "alias.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const auto pod = json::parse((*r)[0].json);
  EXPECT_EQ(pod["spec"]["containers"][1]["resources"], pod["spec"]["containers"][0]["resources"]);
  EXPECT_EQ(pod["spec"]["containers"][1]["resources"]["limits"]["cpu"], 2);
}

TEST(ManifestReader, InvalidUtf8IsAnErrorAtItsValue) {
  auto r = parse_manifests("apiVersion: v1\nkind: Node\nmetadata:\n  name: bad\xff\n", "u.yaml");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("u.yaml:4:9: invalid UTF-8 at byte 4"), std::string::npos)
      << r.status().message();
  auto key = parse_manifests(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {\"\xc0\xaf\": x}}\n", "k.yaml");
  ASSERT_FALSE(key.is_ok());
  EXPECT_NE(key.status().message().find("invalid UTF-8"), std::string::npos);
  auto ok = parse_manifests(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {a: "
      "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}}\n",
      "ok.yaml");
  EXPECT_TRUE(ok.is_ok()) << ok.status().message();
}

TEST(ManifestReader, DeepNestingIsAnErrorInJsonAndYaml) {
  const std::string deep_json =
      "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"},\"x\":" +
      std::string(100000, '[') + std::string(100000, ']') + "}";
  auto j = parse_manifests(deep_json, "deep.json");
  ASSERT_FALSE(j.is_ok());
  EXPECT_NE(j.status().message().find("deep.json:1:"), std::string::npos) << j.status().message();
  EXPECT_NE(j.status().message().find("nested more than 100 levels"), std::string::npos);
  auto y =
      parse_manifests("a: " + std::string(5000, '[') + std::string(5000, ']') + "\n", "deep.yaml");
  ASSERT_FALSE(y.is_ok());
  EXPECT_NE(y.status().message().find("deep.yaml:"), std::string::npos);
  EXPECT_NE(y.status().message().find("nested"), std::string::npos) << y.status().message();
  EXPECT_EQ(y.status().message().find("bad file"), std::string::npos) << y.status().message();
}

TEST(ManifestReader, OddShapesAreErrorsNotAborts) {
  for (const std::string text :
       {"apiVersion: v1\nkind: 5\nmetadata: {name: a}\n", "kind: List\nitems: 5\n",
        "{\"kind\": \"List\", \"items\": {\"a\": 1}}", "{\"kind\": [], \"apiVersion\": {}}",
        "apiVersion: v1\nkind: Node\nmetadata: 7\n"}) {
    EXPECT_FALSE(parse_manifests(text, "odd").is_ok()) << text;
  }
  auto dir = read_manifests(::testing::TempDir());
  ASSERT_FALSE(dir.is_ok());
  EXPECT_NE(dir.status().message().find("is a directory"), std::string::npos);
}

TEST(ManifestReader, JsonObjectsInARowKeepTheirLines) {
  std::string text;
  for (int i = 0; i < 3; ++i)
    text += "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n" +
            std::to_string(i) + "\"}}\n";
  text += "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{}}\n";
  auto r = parse_manifests(text, "rows.json");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("rows.json:4:1: metadata.name is missing"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace gpuaas::kube
