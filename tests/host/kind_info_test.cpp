// ABI 1.1's kind_info (and 1.2's binding) on in-process descriptors: what is read, the refusals,
// that the host steps by kind_info_size and reads of each entry only its struct_size (a 1.1 entry
// gets the default binding), and that a 1.0 descriptor gets the defaults gpuaas had built in.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>

#include "descriptor_check.hpp"
#include "kind_defaults.hpp"
#include "kind_info_check.hpp"

namespace gpuaas::host::plugin {
namespace {

using ::testing::HasSubstr;

gpuaas_rc create(gpuaas_bytes, gpuaas_plugin**, gpuaas_bytes*) { return GPUAAS_RC_INTERNAL; }
void destroy(gpuaas_plugin*) {}
gpuaas_rc fn(gpuaas_plugin*, gpuaas_bytes, gpuaas_bytes*) { return GPUAAS_RC_INTERNAL; }

// A later minor's entry: this ABI's fields, then one this host does not know.
struct FutureKindInfo {
  gpuaas_kind_info current;
  uint64_t unknown_field;
};

class KindInfoTest : public ::testing::Test {
 protected:
  std::string refusal() {
    out_ = CheckedDescriptor();
    auto r = check_descriptor(&d_, out_);
    if (r) {
      EXPECT_EQ(r->reason, RefusalReason::kKindInfo) << r->message;
    }
    return r ? r->message : "accepted";
  }
  const PluginKind& kind(std::size_t i) const { return out_.info.kinds.at(i); }

  gpuaas_kind kinds_[3] = {
      {"kubeflow.org", "v1", "Notebook"}, {"", "v1", "Pod"}, {"ray.io", "v1", "RayCluster"}};
  gpuaas_kind_info infos_[3] = {
      {sizeof(gpuaas_kind_info), GPUAAS_SCOPE_NAMESPACED, "notebooks", GPUAAS_HOLD_ANNOTATION,
       GPUAAS_PODS_BY_LABEL, "kubeflow-resource-stopped", "1970-01-01T00:00:00Z", "notebook-name",
       GPUAAS_KIND_SESSION | GPUAAS_KIND_HOLD_ANY_VALUE, GPUAAS_BINDING_DEFAULT},
      {sizeof(gpuaas_kind_info), GPUAAS_SCOPE_NAMESPACED, "pods", GPUAAS_HOLD_SCHEDULING_GATE,
       GPUAAS_PODS_BY_OWNER, "kueue.x-k8s.io/admission", nullptr, nullptr, GPUAAS_KIND_QUEUED_ONLY,
       GPUAAS_BINDING_REQUIRED},
      {sizeof(gpuaas_kind_info), GPUAAS_SCOPE_CLUSTER, "rayclusters", GPUAAS_HOLD_SET_TRUE,
       GPUAAS_PODS_BY_LABEL, "/spec/suspend", nullptr, "ray.io/cluster", 0, GPUAAS_BINDING_OFF}};
  gpuaas_plugin_api api_ = {sizeof(gpuaas_plugin_api), create, destroy, fn};
  gpuaas_plugin_descriptor d_ = {sizeof(gpuaas_plugin_descriptor),
                                 GPUAAS_PLUGIN_ABI_MAJOR,
                                 GPUAAS_PLUGIN_ABI_MINOR,
                                 "example",
                                 "1.0.0",
                                 kinds_,
                                 3,
                                 GPUAAS_CAP_DEMAND,
                                 GPUAAS_PLUGIN_EVENT_SCHEMA,
                                 "stable",
                                 &api_,
                                 infos_,
                                 sizeof(gpuaas_kind_info)};
  CheckedDescriptor out_;
};

TEST_F(KindInfoTest, ReadsEachKindsDeclaration) {
  ASSERT_EQ(refusal(), "accepted");
  const PluginKind& nb = kind(0);
  EXPECT_TRUE(nb.declared);
  EXPECT_EQ(nb.plural, "notebooks");
  EXPECT_TRUE(nb.namespaced);
  EXPECT_EQ(nb.hold, (KindHold{KindHold::Type::kAnnotation, "kubeflow-resource-stopped",
                               "1970-01-01T00:00:00Z", true}));
  EXPECT_EQ(nb.pod_label, "notebook-name");
  EXPECT_TRUE(nb.session);
  EXPECT_FALSE(nb.queued_only);
  EXPECT_EQ(nb.binding, KindBinding::kPreferred);  // DEFAULT, and a session
  const PluginKind& pod = kind(1);
  EXPECT_EQ(pod.hold, (KindHold{KindHold::Type::kSchedulingGate, "kueue.x-k8s.io/admission"}));
  EXPECT_EQ(pod.pod_label, "");
  EXPECT_TRUE(pod.queued_only);
  EXPECT_FALSE(pod.session);
  EXPECT_EQ(pod.binding, KindBinding::kRequired);
  const PluginKind& rc = kind(2);
  EXPECT_FALSE(rc.namespaced);
  EXPECT_EQ(rc.hold, (KindHold{KindHold::Type::kSetTrue, "/spec/suspend"}));
  EXPECT_EQ(rc.pod_label, "ray.io/cluster");
  EXPECT_EQ(rc.binding, KindBinding::kOff);
}

TEST_F(KindInfoTest, ReadsEveryBindingAndResolvesTheDefault) {
  const std::pair<uint32_t, KindBinding> cases[] = {
      {GPUAAS_BINDING_DEFAULT, KindBinding::kRequired},  // not a session
      {GPUAAS_BINDING_REQUIRED, KindBinding::kRequired},
      {GPUAAS_BINDING_PREFERRED, KindBinding::kPreferred},
      {GPUAAS_BINDING_OFF, KindBinding::kOff},
  };
  for (const auto& [abi, want] : cases) {
    infos_[2].binding = abi;
    infos_[0].binding = abi;
    ASSERT_EQ(refusal(), "accepted") << abi;
    EXPECT_EQ(kind(2).binding, want) << abi;
    // A session declares what it likes; only DEFAULT resolves to preferred for it.
    EXPECT_EQ(kind(0).binding, abi == GPUAAS_BINDING_DEFAULT ? KindBinding::kPreferred : want);
  }
  EXPECT_EQ(binding_name(KindBinding::kRequired), "required");
  EXPECT_EQ(binding_name(KindBinding::kPreferred), "preferred");
  EXPECT_EQ(binding_name(KindBinding::kOff), "off");
}

TEST_F(KindInfoTest, RefusesAnUnknownBinding) {
  infos_[2].binding = 4;
  EXPECT_THAT(refusal(), HasSubstr("kind_info of ray.io/v1 RayCluster: unknown binding 4 (this "
                                   "host knows 0 to 3)"));
  infos_[2].binding = 0xffffffffu;
  EXPECT_THAT(refusal(), HasSubstr("unknown binding 4294967295"));
}

// A plugin built against ABI 1.1: entries end at `flags`, so no binding is read (the bytes where
// it would be are garbage) and each kind gets the default: preferred for a session, else required.
TEST_F(KindInfoTest, AbiOneOneEntriesGetTheDefaultBinding) {
  constexpr uint32_t kSize11 = offsetof(gpuaas_kind_info, flags) + sizeof(uint64_t);
  static_assert(kSize11 == kKindInfoMinSize && kSize11 < sizeof(gpuaas_kind_info));
  // Entries of the current size apart, each saying it is only as long as 1.1's.
  gpuaas_kind_info padded[3];
  std::memset(padded, 0xab, sizeof padded);
  for (int i = 0; i < 3; ++i) {
    std::memcpy(&padded[i], &infos_[i], kSize11);
    padded[i].struct_size = kSize11;
  }
  d_.abi_minor = 1;
  d_.kind_info = padded;
  ASSERT_EQ(refusal(), "accepted");
  EXPECT_EQ(kind(0).binding, KindBinding::kPreferred);
  EXPECT_EQ(kind(1).binding, KindBinding::kRequired);
  EXPECT_EQ(kind(2).binding, KindBinding::kRequired);
  EXPECT_EQ(kind(2).plural, "rayclusters");
  // And packed as a 1.1 plugin lays them out: kind_info_size is 1.1's too.
  alignas(gpuaas_kind_info) unsigned char packed[3 * kSize11];
  for (int i = 0; i < 3; ++i) std::memcpy(packed + i * kSize11, &padded[i], kSize11);
  d_.kind_info = reinterpret_cast<const gpuaas_kind_info*>(packed);
  d_.kind_info_size = kSize11;
  ASSERT_EQ(refusal(), "accepted");
  EXPECT_EQ(kind(0).binding, KindBinding::kPreferred);
  EXPECT_EQ(kind(1).hold.target, "kueue.x-k8s.io/admission");
  EXPECT_EQ(kind(2).binding, KindBinding::kRequired);
}

TEST_F(KindInfoTest, RefusesBadPluralScopeAndFlags) {
  for (const char* plural : {"", "Notebooks", "note books", "notebooks-", "1notebooks"}) {
    infos_[0].plural = plural;
    EXPECT_THAT(refusal(), HasSubstr("kind_info of kubeflow.org/v1 Notebook: plural \"" +
                                     std::string(plural) + "\" is not a resource name"));
  }
  infos_[0].plural = nullptr;
  EXPECT_THAT(refusal(), HasSubstr("plural \"\" is not a resource name"));
  infos_[0].plural = "notebooks";
  infos_[0].scope = 7;
  EXPECT_THAT(refusal(), HasSubstr("unknown scope 7"));
  infos_[0].scope = GPUAAS_SCOPE_NAMESPACED;
  infos_[0].flags |= 1ull << 9;
  EXPECT_THAT(refusal(), HasSubstr("unknown flag bits 0x200"));
}

TEST_F(KindInfoTest, RefusesBadHoldSpecs) {
  infos_[2].hold_target = "spec.suspend";
  EXPECT_THAT(refusal(), HasSubstr("hold SET_TRUE needs a JSON pointer to a member such as "
                                   "/spec/suspend, got \"spec.suspend\""));
  infos_[2].hold_target = "/spec//suspend";
  EXPECT_THAT(refusal(), HasSubstr("needs a JSON pointer"));
  infos_[2].hold_target = "/spec/suspend";
  infos_[2].hold_value = "true";
  EXPECT_THAT(refusal(), HasSubstr("hold_value and HOLD_ANY_VALUE belong to hold ANNOTATION"));
  infos_[2].hold_value = nullptr;
  infos_[0].hold_value = "";
  EXPECT_THAT(refusal(), HasSubstr("hold ANNOTATION needs a non-empty hold_value"));
  infos_[0].hold_value = "x";
  infos_[0].hold_target = "bad key/";
  EXPECT_THAT(refusal(), HasSubstr("hold ANNOTATION needs an annotation key"));
  infos_[0].hold_target = "kubeflow-resource-stopped";
  infos_[1].hold_target = nullptr;
  EXPECT_THAT(refusal(), HasSubstr("hold SCHEDULING_GATE needs a gate name"));
  infos_[1].hold = GPUAAS_HOLD_NONE;
  EXPECT_EQ(refusal(), "accepted");
  infos_[1].hold_target = "kueue.x-k8s.io/admission";
  EXPECT_THAT(refusal(), HasSubstr("hold is NONE but a hold target"));
  infos_[1].hold = 9;
  EXPECT_THAT(refusal(), HasSubstr("unknown hold 9"));
}

TEST_F(KindInfoTest, RefusesBadPodSelection) {
  infos_[2].pod_label = "";
  EXPECT_THAT(refusal(), HasSubstr("pods BY_LABEL needs a label key"));
  infos_[2].pod_label = "ray.io/cluster";
  infos_[1].pod_label = "app";
  EXPECT_THAT(refusal(), HasSubstr("pods BY_OWNER with a pod_label"));
  infos_[1].pod_label = nullptr;
  infos_[1].pods = 4;
  EXPECT_THAT(refusal(), HasSubstr("unknown pods 4"));
}

TEST_F(KindInfoTest, RefusesMissingOrMisSizedArrays) {
  d_.kind_info = nullptr;
  EXPECT_THAT(refusal(), HasSubstr("kind_info is NULL"));
  d_.kind_info = infos_;
  d_.kind_info_size = 8;
  EXPECT_THAT(refusal(), HasSubstr("kind_info_size 8 is smaller than ABI 1.1's"));
  d_.kind_info_size = sizeof(gpuaas_kind_info);
  infos_[1].struct_size = sizeof(gpuaas_kind_info) + 8;
  EXPECT_THAT(refusal(), HasSubstr("kind_info #2 has struct_size"));
  infos_[1].struct_size = sizeof(gpuaas_kind_info);
  // A 1.1 (or later) plugin whose descriptor stops before kind_info.
  d_.struct_size = offsetof(gpuaas_plugin_descriptor, kind_info);
  EXPECT_THAT(refusal(), HasSubstr("built for ABI 1." + std::to_string(GPUAAS_PLUGIN_ABI_MINOR) +
                                   " but its descriptor"));
  d_.abi_minor = 1;
  EXPECT_THAT(refusal(), HasSubstr("built for ABI 1.1 but its descriptor"));
}

TEST_F(KindInfoTest, StepsByTheElementSizeOfANewerPlugin) {
  FutureKindInfo future[3];
  for (int i = 0; i < 3; ++i) {
    std::memset(&future[i], 0xab, sizeof future[i]);
    future[i].current = infos_[i];
    future[i].current.struct_size = sizeof(FutureKindInfo);
  }
  d_.kind_info = &future[0].current;
  d_.kind_info_size = sizeof(FutureKindInfo);
  ASSERT_EQ(refusal(), "accepted");
  EXPECT_EQ(kind(2).plural, "rayclusters");
  EXPECT_EQ(kind(1).hold.target, "kueue.x-k8s.io/admission");
  EXPECT_EQ(kind(2).binding, KindBinding::kOff);
}

TEST_F(KindInfoTest, AbiOneZeroDescriptorGetsTheBuiltInDefaults) {
  d_.struct_size = offsetof(gpuaas_plugin_descriptor, kind_info);
  d_.abi_minor = 0;
  // Garbage where 1.1's fields would be: a host reading past struct_size would trip on it.
  d_.kind_info = reinterpret_cast<const gpuaas_kind_info*>(0x1);
  d_.kind_info_size = 3;
  ASSERT_EQ(refusal(), "accepted");
  const PluginKind& nb = kind(0);
  EXPECT_FALSE(nb.declared);
  EXPECT_EQ(nb.plural, "notebooks");
  EXPECT_EQ(nb.hold, (KindHold{KindHold::Type::kAnnotation, "kubeflow-resource-stopped",
                               "1970-01-01T00:00:00Z", true}));
  EXPECT_TRUE(nb.session);
  EXPECT_EQ(nb.binding, KindBinding::kPreferred);
  EXPECT_EQ(kind(1).hold, (KindHold{KindHold::Type::kSchedulingGate, "kueue.x-k8s.io/admission"}));
  EXPECT_TRUE(kind(1).queued_only);
  EXPECT_EQ(kind(1).binding, KindBinding::kRequired);
  EXPECT_EQ(kind(2).plural, "rayclusters");
  EXPECT_EQ(kind(2).hold, (KindHold{KindHold::Type::kSetTrue, "/spec/suspend"}));
  EXPECT_TRUE(kind(2).namespaced);
  EXPECT_EQ(kind(2).pod_label, "");
}

TEST(KindDefaultsTest, EveryKindGpuaasHadBuiltIn) {
  struct Want {
    const char* group;
    const char* kind;
    const char* plural;
    KindHold hold;
  };
  using T = KindHold::Type;
  const Want table[] = {
      {"batch", "Job", "jobs", {T::kSetTrue, "/spec/suspend"}},
      {"ray.io", "RayJob", "rayjobs", {T::kSetTrue, "/spec/suspend"}},
      {"ray.io", "RayCluster", "rayclusters", {T::kSetTrue, "/spec/suspend"}},
      {"trainer.kubeflow.org", "TrainJob", "trainjobs", {T::kSetTrue, "/spec/suspend"}},
      {"kubeflow.org", "PyTorchJob", "pytorchjobs", {T::kSetTrue, "/spec/runPolicy/suspend"}},
      {"kubeflow.org", "TFJob", "tfjobs", {T::kSetTrue, "/spec/runPolicy/suspend"}},
      {"kubeflow.org", "MPIJob", "mpijobs", {T::kSetTrue, "/spec/runPolicy/suspend"}},
      {"serving.kserve.io",
       "InferenceService",
       "inferenceservices",
       {T::kAnnotation, "serving.kserve.io/stop", "true", false}},
      {"example.com", "Widget", "widgets", {}},
  };
  for (const auto& w : table) {
    PluginKind k{w.group, "v1", w.kind};
    apply_1_0_defaults(k);
    EXPECT_EQ(k.plural, w.plural) << w.kind;
    EXPECT_EQ(k.hold, w.hold) << w.kind;
    EXPECT_FALSE(k.session) << w.kind;
    EXPECT_EQ(k.binding, KindBinding::kRequired) << w.kind;
    EXPECT_FALSE(k.declared) << w.kind;
  }
}

}  // namespace
}  // namespace gpuaas::host::plugin
