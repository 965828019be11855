// The webhook over real HTTPS (civetweb + OpenSSL, a self-signed certificate made with the openssl
// CLI, libcurl as the API server): the shared sample manifests of each kind, given the queue
// label, come back with a JSON Patch that, applied, holds the workload and changes nothing else.
#include "gpuaas/bridge/admission_webhook.hpp"

#include <curl/curl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "gpuaas/base/placement.hpp"
#include "gpuaas/host/plugin_host.hpp"
#include "manifests.hpp"
#include "plugin_rules.hpp"

namespace gpuaas::bridge {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// The document of `kind` in a shared manifest file, with the queue label added.
json manifest(const std::string& file, const std::string& kind) {
  json o = load_manifest(file, kind);
  o["metadata"]["labels"][kDefaultQueueLabel] = "team-a";
  return o;
}

json review(const json& object, const std::string& operation = "CREATE",
            const std::string& uid = "705ab4f5-6393-11e8-b7cc-42010a800002") {
  const std::string api_version = object.value("apiVersion", "");
  const auto slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  const std::string version =
      slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  json request = {
      {"uid", uid},
      {"kind", {{"group", group}, {"version", version}, {"kind", object.value("kind", "")}}},
      {"resource", {{"group", group}, {"version", version}, {"resource", "things"}}},
      {"namespace", "team-a"},
      {"operation", operation},
      {"userInfo", {{"username", "alice"}}},
      {"object", object},
      {"dryRun", false}};
  if (operation == "UPDATE") request["oldObject"] = object;
  return {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};
}

std::string unbase64(const std::string& in) {
  std::string out;
  unsigned v = 0;
  int bits = 0;
  for (const char c : in) {
    const auto* p =
        std::strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", c);
    if (c == '=' || c == '\0' || p == nullptr) break;
    v = (v << 6) | static_cast<unsigned>(
                       p - "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((v >> bits) & 0xff);
    }
  }
  return out;
}

constexpr const char* kShimSource =
    "#include <openssl/ssl.h>\n"
    "#undef SSL_get_peer_certificate\n"
    "X509* SSL_get_peer_certificate(const SSL* s) { return SSL_get1_peer_certificate(s); }\n";

struct Reply {
  long status = 0;
  std::string body;
  std::string error;
};

size_t collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

class AdmissionWebhookTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/gpuaas-webhook-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    const std::string cmd =
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
        "-addext subjectAltName=IP:127.0.0.1 -keyout " +
        dir_ + "/tls.key -out " + dir_ + "/tls.crt >" + dir_ + "/openssl.log 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    // The OpenSSL 3 shim civetweb 1.15 needs (admission_webhook.hpp), built as the docs say.
    {
      std::FILE* f = std::fopen((dir_ + "/shim.c").c_str(), "w");
      ASSERT_NE(f, nullptr);
      std::fputs(kShimSource, f);
      std::fclose(f);
    }
    const std::string cc = "cc -shared -fPIC -Wl,-soname,libssl.so -o " + dir_ +
                           "/libgpuaas-civetweb-tls.so " + dir_ + "/shim.c -lssl -lcrypto >" +
                           dir_ + "/cc.log 2>&1";
    ASSERT_EQ(std::system(cc.c_str()), 0) << cc;
    registry_ = new telemetry::Registry();
    AdmissionWebhookOptions options;
    options.listen = "127.0.0.1:0";
    options.cert_file = dir_ + "/tls.crt";
    options.key_file = dir_ + "/tls.key";
    options.tls_shim = dir_ + "/libgpuaas-civetweb-tls.so";
    options.rules = built_plugin_rules();
    auto started = AdmissionWebhook::start(options, *registry_);
    ASSERT_TRUE(started) << started.status().message();
    webhook_ = std::move(*started).release();
    // The same with the built plugins asked for demands: placement gates on.
    plugins_ = new host::PluginHost();
    EXPECT_TRUE(plugins_->load_directory(std::string(GPUAAS_BIN_DIR) + "/../plugins").empty());
    options.plugins = plugins_;
    started = AdmissionWebhook::start(options, *registry_);
    ASSERT_TRUE(started) << started.status().message();
    gated_ = std::move(*started).release();
  }
  static void TearDownTestSuite() {
    delete gated_;
    delete webhook_;
    delete plugins_;
    delete registry_;
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  static Reply request(const std::string& path, const std::string* body, bool tls = true,
                       const AdmissionWebhook* to = webhook_) {
    Reply r;
    CURL* curl = curl_easy_init();
    const std::string url = std::string(tls ? "https://" : "http://") + to->address() + path;
    const std::string ca = dir_ + "/tls.crt";
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_CAINFO, ca.c_str());
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r.body);
    if (body != nullptr) {
      curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body->size()));
    }
    const CURLcode rc = curl_easy_perform(curl);
    if (rc != CURLE_OK) r.error = curl_easy_strerror(rc);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return r;
  }

  // POSTs the review; returns the response object (uid checked) and the decoded patch (null if
  // none).
  static std::pair<json, json> mutate(const json& rev, const AdmissionWebhook* to = webhook_) {
    const std::string body = rev.dump();
    const Reply r = request("/mutate", &body, true, to);
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.status, 200) << r.body;
    const json answer = json::parse(r.body, nullptr, false);
    EXPECT_EQ(answer.value("apiVersion", ""), "admission.k8s.io/v1");
    EXPECT_EQ(answer.value("kind", ""), "AdmissionReview");
    const json response = answer.value("response", json::object());
    EXPECT_EQ(response.value("uid", ""), rev["request"]["uid"]);
    EXPECT_EQ(response.value("allowed", false), true);
    if (!response.contains("patch")) {
      EXPECT_FALSE(response.contains("patchType"));
      return {response, nullptr};
    }
    EXPECT_EQ(response.value("patchType", ""), "JSONPatch");
    return {response, json::parse(unbase64(response["patch"].get<std::string>()))};
  }

  static double count(const std::string& kind, const std::string& result,
                      const std::string& family = "gpuaas_bridge_webhook_requests_total") {
    telemetry::Labels want = {{"kind", kind}};
    if (!result.empty()) want["result"] = result;
    for (const auto& f : registry_->Collect()) {
      if (f.name != family) continue;
      for (const auto& s : f.samples) {
        if (s.labels == want) return s.value;
      }
    }
    return 0;
  }

  static std::string dir_;
  static telemetry::Registry* registry_;
  static AdmissionWebhook* webhook_;  // no plugins: holds only
  static host::PluginHost* plugins_;
  static AdmissionWebhook* gated_;  // placement gates from the built plugins
};

std::string AdmissionWebhookTest::dir_;
telemetry::Registry* AdmissionWebhookTest::registry_ = nullptr;
AdmissionWebhook* AdmissionWebhookTest::webhook_ = nullptr;
host::PluginHost* AdmissionWebhookTest::plugins_ = nullptr;
AdmissionWebhook* AdmissionWebhookTest::gated_ = nullptr;

struct Sample {
  std::string file;
  std::string kind;
  std::string pointer;  // where the hold shows after the patch
  json held_value;
};

// A Pod as a Job's controller would make it from the template (kueue has no plain Pod sample).
json pod_from_job(const json& job) {
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  pod["metadata"] = job["spec"]["template"].value("metadata", json::object());
  pod["metadata"]["name"] = "sample-pod";
  pod["metadata"]["labels"][kDefaultQueueLabel] = "team-a";
  pod["spec"] = job["spec"]["template"]["spec"];
  return pod;
}

TEST_F(AdmissionWebhookTest, HoldsEachKindFromTheSharedSamples) {
  const std::vector<Sample> samples = {
      {"kueue/sample-job.yaml", "Job", "/spec/suspend", true},
      {"kuberay/ray-job.sample.yaml", "RayJob", "/spec/suspend", true},
      {"kuberay/ray-cluster.complete.yaml", "RayCluster", "/spec/suspend", true},
      {"kubeflow-training/lammps-train-gpus.yaml", "TrainJob", "/spec/suspend", true},
      {"kubeflow-training/simple.yaml", "PyTorchJob", "/spec/runPolicy/suspend", true},
      {"kueue/sample-pytorchjob.yaml", "PyTorchJob", "/spec/runPolicy/suspend", true},
      {"kubeflow-training/multi_worker_tfjob.yaml", "TFJob", "/spec/runPolicy/suspend", true},
      {"kubeflow-mpi-operator/tensorflow-benchmarks.yaml", "MPIJob", "/spec/runPolicy/suspend",
       true},
      {"kubeflow-notebook/_v1_notebook.yaml", "Notebook",
       "/metadata/annotations/kubeflow-resource-stopped", "1970-01-01T00:00:00Z"},
      {"kubeflow-notebook/_v1beta1_notebook.yaml", "Notebook",
       "/metadata/annotations/kubeflow-resource-stopped", "1970-01-01T00:00:00Z"},
      {"kserve/hf_isvc.yaml", "InferenceService", "/metadata/annotations/serving.kserve.io~1stop",
       "true"},
      {"kserve/autoscale_gpu.yaml", "InferenceService",
       "/metadata/annotations/serving.kserve.io~1stop", "true"},
  };
  const double held_jobs = count("Job", "held");
  for (const auto& s : samples) {
    SCOPED_TRACE(s.file);
    const json object = manifest(s.file, s.kind);
    ASSERT_FALSE(object.contains(json::json_pointer(s.pointer)));
    const auto [response, patch] = mutate(review(object));
    ASSERT_TRUE(patch.is_array()) << response.dump();
    const json held = object.patch(patch);
    EXPECT_EQ(held.at(json::json_pointer(s.pointer)), s.held_value);
    // Nothing else changed: every difference lies on the way to the hold.
    for (const auto& op : json::diff(object, held)) {
      EXPECT_EQ(s.pointer.rfind(op["path"].get<std::string>(), 0), 0u) << op.dump();
    }
    // And a held object is not held twice.
    EXPECT_TRUE(mutate(review(held)).second.is_null());
  }
  EXPECT_EQ(count("Job", "held"), held_jobs + 1);
  EXPECT_GE(count("Job", "passed"), 1);
}

TEST_F(AdmissionWebhookTest, PodGetsTheSchedulingGate) {
  json pod = pod_from_job(manifest("kueue/sample-job.yaml", "Job"));
  auto [response, patch] = mutate(review(pod));
  ASSERT_TRUE(patch.is_array());
  const json gated = pod.patch(patch);
  EXPECT_EQ(gated["spec"]["schedulingGates"],
            json::parse(R"([{"name":"kueue.x-k8s.io/admission"}])"));
  // Another gate already there: appended after it.
  pod["spec"]["schedulingGates"] = json::parse(R"([{"name":"example.com/other"}])");
  std::tie(response, patch) = mutate(review(pod));
  ASSERT_TRUE(patch.is_array());
  EXPECT_EQ(patch[0]["path"], "/spec/schedulingGates/-");
  EXPECT_EQ(pod.patch(patch)["spec"]["schedulingGates"].size(), 2u);
  // A Job's own pods pass: the Job was held and admitted.
  pod["metadata"]["ownerReferences"] = json::parse(
      R"([{"apiVersion":"batch/v1","kind":"Job","name":"sample-job","uid":"u","controller":true}])");
  EXPECT_TRUE(mutate(review(pod)).second.is_null());
}

// Deployments and StatefulSets as Kueue's pod integration: not held, their pod templates given
// the queue label (and a StatefulSet's pods one group) on CREATE and UPDATE.
TEST_F(AdmissionWebhookTest, DeploymentAndStatefulSetTemplatesAreLabelled) {
  const json job = manifest("kueue/sample-job.yaml", "Job");
  json deployment = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}};
  deployment["metadata"] = {{"name", "web"}, {"labels", {{kDefaultQueueLabel, "team-a"}}}};
  deployment["spec"] = {{"replicas", 2},
                        {"selector", {{"matchLabels", {{"app", "web"}}}}},
                        {"template", job["spec"]["template"]}};
  deployment["spec"]["template"]["metadata"]["labels"]["app"] = "web";
  const double labelled = count("Deployment", "labelled");
  for (const char* op : {"CREATE", "UPDATE"}) {
    SCOPED_TRACE(op);
    const auto [response, patch] = mutate(review(deployment, op));
    ASSERT_TRUE(patch.is_array()) << response.dump();
    const json out = deployment.patch(patch);
    EXPECT_EQ(out["spec"]["template"]["metadata"]["labels"][kDefaultQueueLabel], "team-a");
    // Nothing else changed, and the Deployment itself is not held.
    EXPECT_EQ(json::diff(deployment, out).size(), 1u) << json::diff(deployment, out).dump();
    EXPECT_TRUE(mutate(review(out, op)).second.is_null());
  }
  EXPECT_EQ(count("Deployment", "labelled"), labelled + 2);
  EXPECT_TRUE(mutate(review(deployment, "DELETE")).second.is_null());

  json sts = deployment;
  sts["kind"] = "StatefulSet";
  sts["metadata"]["name"] = "workers";
  sts["spec"]["replicas"] = 4;
  for (const char* op : {"CREATE", "UPDATE"}) {
    SCOPED_TRACE(op);
    const auto [response, patch] = mutate(review(sts, op));
    ASSERT_TRUE(patch.is_array()) << response.dump();
    const json meta = sts.patch(patch)["spec"]["template"]["metadata"];
    EXPECT_EQ(meta["labels"][kDefaultQueueLabel], "team-a");
    EXPECT_EQ(meta["labels"]["kueue.x-k8s.io/pod-group-name"], "statefulset-workers");
    EXPECT_EQ(meta["annotations"]["kueue.x-k8s.io/pod-group-total-count"], "4");
  }
  EXPECT_EQ(count("StatefulSet", "labelled"), 2);
  // And the pod it then makes is gated, as any other queued pod.
  json pod = pod_from_job(job);
  pod["metadata"]["ownerReferences"] = json::parse(
      R"([{"apiVersion":"apps/v1","kind":"StatefulSet","name":"workers","uid":"u","controller":true}])");
  EXPECT_TRUE(mutate(review(pod)).second.is_array());
}

// Over HTTPS with the plugins: a PyTorchJob held and gated; one whose demand fails held only and
// counted; with webhook.placementGates false, held only. Each case in placement_gates_test.cpp.
TEST_F(AdmissionWebhookTest, PlacementGatesAndTheirErrors) {
  json job = manifest("kueue/sample-pytorchjob.yaml", "PyTorchJob");
  auto [response, patch] = mutate(review(job), gated_);
  ASSERT_TRUE(patch.is_array()) << response.dump();
  const json worker = job.patch(patch)["spec"]["pytorchReplicaSpecs"]["Worker"]["template"];
  EXPECT_EQ(worker["spec"]["schedulingGates"], json::array({{{"name", kPlacementGate}}}));
  EXPECT_EQ(worker["metadata"]["labels"][kPodSetLabel], "worker");

  const std::string errors = "gpuaas_bridge_webhook_template_errors_total";
  const double before = count("PyTorchJob", "", errors);
  job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"] =
      json::parse(R"({"limits":{"nvidia.com/gpu":"lots"}})");
  std::tie(response, patch) = mutate(review(job), gated_);
  ASSERT_TRUE(patch.is_array()) << response.dump();
  EXPECT_EQ(patch.size(), 1u) << patch.dump();  // the hold alone
  EXPECT_EQ(job.patch(patch)["spec"]["runPolicy"]["suspend"], true);
  EXPECT_EQ(count("PyTorchJob", "", errors), before + 1);

  AdmissionWebhookOptions off;
  off.listen = "127.0.0.1:0";
  off.cert_file = dir_ + "/tls.crt";
  off.key_file = dir_ + "/tls.key";
  off.tls_shim = dir_ + "/libgpuaas-civetweb-tls.so";
  off.rules = built_plugin_rules();
  off.plugins = plugins_;
  off.placement_gates = false;
  telemetry::Registry registry;
  auto started = AdmissionWebhook::start(off, registry);
  ASSERT_TRUE(started) << started.status().message();
  job = manifest("kueue/sample-pytorchjob.yaml", "PyTorchJob");
  std::tie(response, patch) = mutate(review(job), started->get());
  ASSERT_TRUE(patch.is_array()) << response.dump();
  EXPECT_EQ(patch.size(), 1u) << patch.dump();
}

TEST_F(AdmissionWebhookTest, BoundAndDaemonSetPodsPass) {
  json pod = pod_from_job(manifest("kueue/sample-job.yaml", "Job"));
  json bound = pod;
  bound["spec"]["nodeName"] = "gpu-1";
  const double passed = count("Pod", "passed");
  EXPECT_TRUE(mutate(review(bound)).second.is_null());
  pod["metadata"]["ownerReferences"] = json::parse(
      R"([{"apiVersion":"apps/v1","kind":"DaemonSet","name":"dcgm","uid":"u","controller":true}])");
  EXPECT_TRUE(mutate(review(pod)).second.is_null());
  EXPECT_EQ(count("Pod", "passed"), passed + 2);
}

TEST_F(AdmissionWebhookTest, AlreadySuspendedTrainJobPasses) {
  const json trainjob = manifest("kubeflow-training/03-kueue-integration.yaml", "TrainJob");
  EXPECT_EQ(trainjob["spec"]["suspend"], true);
  EXPECT_TRUE(mutate(review(trainjob)).second.is_null());
}

TEST_F(AdmissionWebhookTest, NoLabelUpdateAndUnknownKindPass) {
  json job = manifest("kueue/sample-job.yaml", "Job");
  EXPECT_TRUE(mutate(review(job, "UPDATE")).second.is_null());
  EXPECT_TRUE(mutate(review(job, "CONNECT")).second.is_null());
  json daemonset = {{"apiVersion", "apps/v1"},
                    {"kind", "DaemonSet"},
                    {"metadata", {{"name", "d"}, {"labels", {{kDefaultQueueLabel, "q"}}}}}};
  EXPECT_TRUE(mutate(review(daemonset)).second.is_null());
  job["metadata"]["labels"].erase(kDefaultQueueLabel);
  EXPECT_TRUE(mutate(review(job)).second.is_null());
  // DELETE carries no object but oldObject: still a well-formed review.
  json del = review(job, "DELETE");
  del["request"].erase("object");
  EXPECT_TRUE(mutate(del).second.is_null());
}

TEST_F(AdmissionWebhookTest, MalformedReviewsAre400) {
  const double before = count("unknown", "invalid");
  const double before_job = count("Job", "invalid");
  auto post = [](const std::string& body) { return request("/mutate", &body); };
  Reply r = post("{not json");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, "invalid AdmissionReview: the body is not a JSON object\n");
  json v1beta1 = review(manifest("kueue/sample-job.yaml", "Job"));
  v1beta1["apiVersion"] = "admission.k8s.io/v1beta1";
  r = post(v1beta1.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body,
            "invalid AdmissionReview: apiVersion must be admission.k8s.io/v1 and kind "
            "AdmissionReview\n");
  json no_uid = review(manifest("kueue/sample-job.yaml", "Job"));
  no_uid["request"].erase("uid");
  r = post(no_uid.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, "invalid AdmissionReview: request.uid is missing\n");
  json no_object = review(manifest("kueue/sample-job.yaml", "Job"));
  no_object["request"].erase("object");
  r = post(no_object.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, "invalid AdmissionReview: a CREATE without request.object\n");
  EXPECT_EQ(post("[]").status, 400);
  EXPECT_EQ(count("unknown", "invalid"), before + 2);
  EXPECT_EQ(count("Job", "invalid"), before_job + 3);
}

TEST_F(AdmissionWebhookTest, HealthzRoutesAndTlsOnly) {
  Reply r = request("/healthz", nullptr);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
  EXPECT_EQ(request("/mutate", nullptr).status, 405);  // GET
  const std::string body = "{}";
  EXPECT_EQ(request("/other", &body).status, 404);
  r = request("/healthz", nullptr, /*tls=*/false);  // plain HTTP on the TLS port
  EXPECT_NE(r.status, 200);
}

TEST(AdmissionWebhookStart, ClearErrors) {
  telemetry::Registry registry;
  AdmissionWebhookOptions options;
  options.listen = "127.0.0.1";
  auto r = AdmissionWebhook::start(options, registry);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("malformed listen address"), std::string::npos);
  options.listen = "127.0.0.1:0";
  options.cert_file = "/nonexistent/tls.crt";
  options.key_file = "/nonexistent/tls.key";
  r = AdmissionWebhook::start(options, registry);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().message(), "webhook: cannot read the certificate /nonexistent/tls.crt");
  char tmpl[] = "/tmp/gpuaas-webhook-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string not_pem = std::string(tmpl) + "/x";
  std::FILE* f = std::fopen(not_pem.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("hello\n", f);
  std::fclose(f);
  options.cert_file = not_pem;
  r = AdmissionWebhook::start(options, registry);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().message(), "webhook: " + not_pem + " is not PEM (no -----BEGIN line)");
  std::error_code ec;
  fs::remove_all(tmpl, ec);
}

// The protocol without TLS: the response is exactly what the API server expects.
TEST(AdmissionAnswer, ResponseShape) {
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", "j"}, {"labels", {{kDefaultQueueLabel, "q"}}}}},
              {"spec", json::object()}};
  const auto a = answer_admission_review(review(job, "CREATE", "u-1").dump(), kDefaultQueueLabel,
                                         built_plugin_rules());
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.result, "held");
  EXPECT_EQ(a.kind, "Job");
  // base64 of [{"op":"add","path":"/spec/suspend","value":true}]
  EXPECT_EQ(json::parse(a.body),
            json::parse(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
              "response":{"uid":"u-1","allowed":true,"patchType":"JSONPatch",
              "patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvc3VzcGVuZCIsInZhbHVlIjp0cnVlfV0="}})"));
  EXPECT_EQ(unbase64("W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvc3VzcGVuZCIsInZhbHVlIjp0cnVlfV0="),
            R"([{"op":"add","path":"/spec/suspend","value":true}])");
  // An object that cannot be held is allowed with a warning, never denied.
  job["spec"] = json::array();
  const auto w =
      answer_admission_review(review(job).dump(), kDefaultQueueLabel, built_plugin_rules());
  EXPECT_EQ(w.result, "passed");
  EXPECT_EQ(json::parse(w.body)["response"]["warnings"][0],
            "gpuaas-bridge could not hold this Job until admitted: /spec is not an object");
}

}  // namespace
}  // namespace gpuaas::bridge
