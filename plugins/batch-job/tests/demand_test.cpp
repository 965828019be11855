// Demand on hand-written Jobs: the count from parallelism and completions, resources in the
// forms Kubernetes allows, partial admission, Jobs that belong to another workload, and what is
// refused.
#include <gtest/gtest.h>

#include "support.hpp"

namespace {

using namespace batch_job_test;
using gpuaas::plugin::per_pod_milli;

constexpr const char* kMinAnnotation = "kueue.x-k8s.io/job-min-parallelism";

v1::PodSet main_set(const Json& job, const std::string& config = "") {
  FakeHost host(gpuaas_plugin_get_descriptor, config);
  auto d = host.demand(job.dump());
  EXPECT_EQ(d.pod_sets_size(), 1);
  return d.pod_sets_size() == 1 ? d.pod_sets(0) : v1::PodSet();
}

Json with_completions(Json job, const Json& completions) {
  job["spec"]["completions"] = completions;
  return job;
}

Json annotated(Json job, const Json& min) {
  job["metadata"]["annotations"][kMinAnnotation] = min;
  return job;
}

constexpr const char* kPartial = R"({"partial_admission": true})";

TEST(BatchJobDemand, CountIsParallelismCappedByCompletions) {
  EXPECT_EQ(main_set(gpu_job(Json())).count(), 1);  // the API server's default
  EXPECT_EQ(main_set(gpu_job(4)).count(), 4);
  EXPECT_EQ(main_set(with_completions(gpu_job(4), 10)).count(), 4);
  EXPECT_EQ(main_set(with_completions(gpu_job(4), 2)).count(), 2);
  EXPECT_EQ(main_set(with_completions(gpu_job(Json()), 5)).count(), 1);
  EXPECT_EQ(main_set(with_completions(gpu_job(4), nullptr)).count(), 4);
  EXPECT_EQ(main_set(gpu_job(0)).count(), 0);  // a Job paused by parallelism 0
  EXPECT_EQ(main_set(gpu_job(2147483647)).count(), 2147483647);
}

TEST(BatchJobDemand, PerPodResourcesNodeSelectorQueueAndPriority) {
  Json job = gpu_job(2);
  job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high";
  job["spec"]["template"]["spec"]["initContainers"] = Json::parse(
      R"([{"name":"fetch","image":"i","resources":{"requests":{"cpu":"4","memory":"1Gi"}}}])");
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto d = host.demand(job.dump());
  EXPECT_EQ(d.queue_name(), "team-a-queue");
  EXPECT_EQ(d.priority_class(), "high");
  const auto& s = d.pod_sets(0);
  EXPECT_EQ(per_pod_milli(s, "nvidia.com/gpu"), 1000);  // the limit stands in for the request
  EXPECT_EQ(per_pod_milli(s, "cpu"), 4000);             // the init container is larger
  EXPECT_EQ(per_pod_milli(s, "memory"), 1024LL * 1024 * 1024 * 1000);
  EXPECT_EQ(s.node_selector().at("zone"), "a");
}

TEST(BatchJobDemand, FractionalAndMigResourcesAreKept) {
  Json job = gpu_job(3);
  job["spec"]["template"]["spec"]["containers"][0]["resources"] =
      Json::parse(R"({"limits":{"nvidia.com/mig-1g.10gb":2},"requests":{"nvidia.com/gpu":"0.5"}})");
  const auto s = main_set(job);
  EXPECT_EQ(per_pod_milli(s, "nvidia.com/gpu"), 500);
  EXPECT_EQ(per_pod_milli(s, "nvidia.com/mig-1g.10gb"), 2000);
}

TEST(BatchJobDemand, MinParallelismIsTheMinCountWhenPartialAdmissionIsOn) {
  // Off by default: ADMIT cannot lower parallelism to what was admitted.
  EXPECT_EQ(main_set(annotated(gpu_job(4), "2")).min_count(), 0);
  EXPECT_EQ(main_set(annotated(gpu_job(4), "2"), kPartial).min_count(), 2);
  EXPECT_EQ(main_set(annotated(with_completions(gpu_job(8), 3), "1"), kPartial).min_count(), 1);
  EXPECT_EQ(main_set(gpu_job(4), kPartial).min_count(), 0);
  // At or above the count (parallelism lowered since): all pods.
  EXPECT_EQ(main_set(annotated(gpu_job(4), "4"), kPartial).min_count(), 4);
  EXPECT_EQ(main_set(annotated(gpu_job(3), "9"), kPartial).min_count(), 3);
}

TEST(BatchJobDemand, MalformedMinParallelismIsInvalidInputWhenUsed) {
  FakeHost host(gpuaas_plugin_get_descriptor, kPartial);
  for (const Json& bad : {Json("two"), Json("0"), Json("-1"), Json("1.5"), Json(""),
                          Json("2147483648"), Json(" 2")}) {
    SCOPED_TRACE(bad.dump());
    try {
      host.demand(annotated(gpu_job(4), bad).dump());
      ADD_FAILURE() << "accepted";
    } catch (const CallFailed& e) {
      EXPECT_EQ(e.rc(), GPUAAS_RC_INVALID_INPUT);
      EXPECT_NE(std::string(e.what()).find("/metadata/annotations/kueue.x-k8s.io~1job-min-"
                                           "parallelism: want a positive integer, got "),
                std::string::npos)
          << e.what();
    }
  }
  FakeHost off(gpuaas_plugin_get_descriptor);  // not read at all when partial admission is off
  EXPECT_EQ(off.demand(annotated(gpu_job(4), "two").dump()).pod_sets(0).min_count(), 0);
}

TEST(BatchJobDemand, AJobOfAnotherWorkloadHasNoQueue) {
  auto owned = [](const char* api_version, const char* kind, bool controller) {
    Json job = gpu_job(2);
    job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high";
    job["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", api_version},
                                                       {"kind", kind},
                                                       {"name", "p"},
                                                       {"uid", "u"},
                                                       {"controller", controller}}});
    FakeHost host(gpuaas_plugin_get_descriptor);
    return host.demand(job.dump());
  };
  for (auto [api, kind] :
       {std::pair{"jobset.x-k8s.io/v1alpha2", "JobSet"}, std::pair{"ray.io/v1", "RayJob"},
        std::pair{"kubeflow.org/v2beta1", "MPIJob"},
        std::pair{"trainer.kubeflow.org/v1alpha1", "TrainJob"},
        std::pair{"workload.codeflare.dev/v1beta2", "AppWrapper"}}) {
    auto d = owned(api, kind, true);
    EXPECT_EQ(d.queue_name(), "") << kind;
    EXPECT_EQ(d.priority_class(), "") << kind;
    EXPECT_EQ(d.pod_sets(0).count(), 2) << kind;  // still shown, never queued on its own
  }
  // A CronJob's Jobs are workloads of their own, as in Kueue; so is a Job merely owned.
  EXPECT_EQ(owned("batch/v1", "CronJob", true).queue_name(), "team-a-queue");
  EXPECT_EQ(owned("jobset.x-k8s.io/v1alpha2", "JobSet", false).queue_name(), "team-a-queue");
  EXPECT_EQ(owned("example.com/v1", "JobSet", true).queue_name(), "team-a-queue");
}

TEST(BatchJobDemand, MalformedJobsAreInvalidInputNamingThePointer) {
  FakeHost host(gpuaas_plugin_get_descriptor);
  auto error_of = [&](const Json& job) -> std::string {
    try {
      host.demand(job.dump());
    } catch (const CallFailed& e) {
      return e.rc() == GPUAAS_RC_INVALID_INPUT ? e.what() : "rc " + std::to_string(e.rc());
    }
    return "";
  };
  EXPECT_NE(error_of(gpu_job("3")).find("/spec/parallelism: want a non-negative integer"),
            std::string::npos);
  EXPECT_NE(error_of(gpu_job(-1)).find("/spec/parallelism"), std::string::npos);
  EXPECT_NE(error_of(gpu_job(2147483648LL)).find("/spec/parallelism: 2147483648 is above"),
            std::string::npos);
  EXPECT_NE(error_of(with_completions(gpu_job(2), 1.5)).find("/spec/completions"),
            std::string::npos);
  Json job = gpu_job(2);
  job["spec"].erase("template");
  EXPECT_NE(error_of(job).find("/spec/template/spec: missing"), std::string::npos);
  job = gpu_job(2);
  job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] =
      "lots";
  EXPECT_NE(error_of(job).find("/spec/template/spec"), std::string::npos);
  job = gpu_job(2);
  job["metadata"].erase("name");
  EXPECT_EQ(error_of(job), "/metadata/name: missing");
  EXPECT_EQ(rc_of([&] { host.demand("{not json"); }), GPUAAS_RC_INVALID_INPUT);
}

TEST(BatchJobConfig, UnknownOrMistypedSettingsAreRefused) {
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"partial": true})"), CallFailed);
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"partial_admission": "yes"})"),
               CallFailed);
  EXPECT_THROW(FakeHost(gpuaas_plugin_get_descriptor, R"({"gpu_util_threshold": 101})"),
               CallFailed);
  FakeHost host(gpuaas_plugin_get_descriptor,
                R"({"gpu_util_threshold": 20, "partial_admission": false})");
  EXPECT_EQ(host.demand(gpu_job(2).dump()).pod_sets(0).count(), 2);
}

}  // namespace
