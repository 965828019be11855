// The descriptor checks on in-process descriptors: each field the host refuses, and that only
// what struct_size covers is read. Also the semver rule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "descriptor_check.hpp"
#include "semver.hpp"

namespace gpuaas::host::plugin {
namespace {

using ::testing::HasSubstr;

gpuaas_rc create(gpuaas_bytes, gpuaas_plugin**, gpuaas_bytes*) { return GPUAAS_RC_INTERNAL; }
void destroy(gpuaas_plugin*) {}
gpuaas_rc fn(gpuaas_plugin*, gpuaas_bytes, gpuaas_bytes*) { return GPUAAS_RC_INTERNAL; }
gpuaas_rc act(gpuaas_plugin*, gpuaas_action_kind, gpuaas_bytes, gpuaas_bytes, gpuaas_bytes*) {
  return GPUAAS_RC_INTERNAL;
}
gpuaas_rc activity(gpuaas_plugin*, gpuaas_bytes, gpuaas_bytes, gpuaas_bytes*) {
  return GPUAAS_RC_INTERNAL;
}

constexpr uint64_t kAll = GPUAAS_CAP_DEMAND | GPUAAS_CAP_LIFECYCLE | GPUAAS_CAP_ADMISSION |
                          GPUAAS_CAP_SCALE_TO_ZERO | GPUAAS_CAP_ACTIVITY;

class DescriptorCheckTest : public ::testing::Test {
 protected:
  Check check() {
    out_ = CheckedDescriptor();
    return check_descriptor(&d_, out_);
  }
  std::string refusal() {
    auto r = check();
    return r ? r->message : "accepted";
  }

  gpuaas_kind kinds_[2] = {{"example.com", "v1", "Widget"}, {"", "v1", "Pod"}};
  gpuaas_kind_info infos_[2] = {
      {sizeof(gpuaas_kind_info), GPUAAS_SCOPE_NAMESPACED, "widgets", GPUAAS_HOLD_NONE,
       GPUAAS_PODS_BY_OWNER, nullptr, nullptr, nullptr, 0},
      {sizeof(gpuaas_kind_info), GPUAAS_SCOPE_NAMESPACED, "pods", GPUAAS_HOLD_SCHEDULING_GATE,
       GPUAAS_PODS_BY_OWNER, "kueue.x-k8s.io/admission", nullptr, nullptr,
       GPUAAS_KIND_QUEUED_ONLY}};
  gpuaas_plugin_api api_ = {sizeof(gpuaas_plugin_api), create, destroy, fn, fn, act, activity};
  gpuaas_plugin_descriptor d_ = {sizeof(gpuaas_plugin_descriptor),
                                 GPUAAS_PLUGIN_ABI_MAJOR,
                                 GPUAAS_PLUGIN_ABI_MINOR,
                                 "example",
                                 "1.0.0-rc.1+build.7",
                                 kinds_,
                                 2,
                                 kAll,
                                 GPUAAS_PLUGIN_EVENT_SCHEMA,
                                 "stable",
                                 &api_,
                                 infos_,
                                 sizeof(gpuaas_kind_info)};
  CheckedDescriptor out_;
};

TEST_F(DescriptorCheckTest, AcceptsACompleteDescriptor) {
  ASSERT_EQ(refusal(), "accepted");
  EXPECT_EQ(out_.info.name, "example");
  EXPECT_EQ(out_.info.kinds.size(), 2u);
  EXPECT_EQ(out_.info.kinds[1].api_version(), "v1");
  EXPECT_EQ(out_.api.activity, &activity);
}

TEST_F(DescriptorCheckTest, RefusesBrokenDescriptors) {
  EXPECT_EQ(check_descriptor(nullptr, out_)->reason, RefusalReason::kDescriptor);
  d_.struct_size = 8;
  EXPECT_THAT(refusal(), HasSubstr("struct_size 8 is too small to hold an ABI version"));
  d_.struct_size = offsetof(gpuaas_plugin_descriptor, api);
  EXPECT_THAT(refusal(), HasSubstr("is smaller than ABI 1.0's"));
  d_.struct_size = sizeof(d_);
  d_.api = nullptr;
  EXPECT_THAT(refusal(), HasSubstr("api is NULL"));
  d_.api = &api_;
  api_.struct_size = offsetof(gpuaas_plugin_api, destroy);
  EXPECT_THAT(refusal(), HasSubstr("too small for create() and destroy()"));
  api_.struct_size = sizeof(api_);
  api_.destroy = nullptr;
  EXPECT_THAT(refusal(), HasSubstr("create() or destroy() is NULL"));
}

TEST_F(DescriptorCheckTest, RefusesBadIdentity) {
  d_.status = "beta";
  EXPECT_THAT(refusal(), HasSubstr("status \"beta\" is neither"));
  d_.status = nullptr;
  EXPECT_THAT(refusal(), HasSubstr("status \"\" is neither"));
  d_.status = "alpha";
  d_.name = "";
  EXPECT_THAT(refusal(), HasSubstr("has no name"));
  d_.name = "two words";
  EXPECT_THAT(refusal(), HasSubstr("printable ASCII characters without spaces"));
  d_.name = "example";
  d_.version = "v1.0.0";
  EXPECT_THAT(refusal(), HasSubstr("\"v1.0.0\" is not a semantic version"));
  d_.version = "1.0.0";
  d_.kind_count = 0;
  EXPECT_THAT(refusal(), HasSubstr("declares no kinds"));
  d_.kind_count = 2;
  kinds_[1] = kinds_[0];
  EXPECT_THAT(refusal(), HasSubstr("declares kind example.com/v1 Widget twice"));
  kinds_[1].kind = nullptr;
  EXPECT_THAT(refusal(), HasSubstr("kind #2 has an empty version or kind"));
}

TEST_F(DescriptorCheckTest, RefusesHalfDeclaredCapabilities) {
  d_.capabilities = kAll & ~GPUAAS_CAP_ACTIVITY;
  EXPECT_THAT(refusal(), HasSubstr("sets activity() without declaring capability ACTIVITY"));
  d_.capabilities = kAll & ~(GPUAAS_CAP_ADMISSION | GPUAAS_CAP_SCALE_TO_ZERO);
  EXPECT_THAT(refusal(),
              HasSubstr("sets action() without declaring capability ADMISSION, SCALE_TO_ZERO or "
                        "AUTOSCALE"));
  d_.capabilities = kAll;
  api_.lifecycle = nullptr;
  EXPECT_THAT(refusal(), HasSubstr("declares capability LIFECYCLE but its lifecycle() is NULL"));
  api_.lifecycle = fn;
  d_.capabilities = kAll | (1ull << 6);
  EXPECT_EQ(check()->reason, RefusalReason::kCapabilities);
  EXPECT_THAT(refusal(), HasSubstr("unknown capability bits 0x40"));
}

// AUTOSCALE came with ABI 1.3: a plugin built for 1.2 cannot have meant the bit.
TEST_F(DescriptorCheckTest, AutoscaleNeedsAbi13) {
  d_.capabilities = kAll | GPUAAS_CAP_AUTOSCALE;
  ASSERT_EQ(refusal(), "accepted");
  d_.abi_minor = 2;
  EXPECT_EQ(check()->reason, RefusalReason::kCapabilities);
  EXPECT_THAT(refusal(), HasSubstr("declares capability AUTOSCALE, which ABI 1.3 added, but is "
                                   "built for ABI 1.2"));
  // Only AUTOSCALE calls action(): that is enough to set it.
  d_.abi_minor = GPUAAS_PLUGIN_ABI_MINOR;
  d_.capabilities =
      (kAll & ~(GPUAAS_CAP_ADMISSION | GPUAAS_CAP_SCALE_TO_ZERO)) | GPUAAS_CAP_AUTOSCALE;
  EXPECT_EQ(refusal(), "accepted");
}

TEST_F(DescriptorCheckTest, ReadsNothingBeyondStructSize) {
  // An older table that ends before activity(): whatever follows in memory is not read.
  api_.struct_size = offsetof(gpuaas_plugin_api, activity);
  EXPECT_THAT(refusal(), HasSubstr("declares capability ACTIVITY but its activity() is beyond "
                                   "its api table (struct_size " +
                                   std::to_string(api_.struct_size) + ")"));
  d_.capabilities = kAll & ~GPUAAS_CAP_ACTIVITY;
  ASSERT_EQ(refusal(), "accepted");
  EXPECT_EQ(out_.api.activity, nullptr);
  EXPECT_EQ(out_.api.action, &act);
}

TEST_F(DescriptorCheckTest, AbiVersions) {
  d_.abi_major = GPUAAS_PLUGIN_ABI_MAJOR + 1;
  EXPECT_EQ(check()->reason, RefusalReason::kAbi);
  d_.abi_major = GPUAAS_PLUGIN_ABI_MAJOR;
  d_.abi_minor = GPUAAS_PLUGIN_ABI_MINOR + 1;
  EXPECT_EQ(check()->reason, RefusalReason::kAbi);
  d_.abi_minor = GPUAAS_PLUGIN_ABI_MINOR;
  d_.event_schema = "gpuaas.v2";
  EXPECT_EQ(check()->reason, RefusalReason::kSchema);
}

TEST(SemverTest, AcceptsSemanticVersions) {
  for (const char* v :
       {"0.0.0", "1.2.3", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7",
        "1.0.0-x-y-z.--", "1.0.0+build.1", "1.0.0-rc.1+sha.5114f85", "1.0.0+0017"}) {
    EXPECT_TRUE(is_semver(v)) << v;
  }
}

TEST(SemverTest, RefusesOtherStrings) {
  for (const char* v : {"", "1", "1.2", "1.2.3.4", "01.2.3", "1.02.3", "1.2.03", "v1.2.3", "1.2.3-",
                        "1.2.3+", "1.2.3-01", "1.2.3-a..b", "1.2.3-a_b", " 1.2.3", "1.2.3 ",
                        "1.2.x", "-1.2.3", "1.2.3+a+b"}) {
    EXPECT_FALSE(is_semver(v)) << v;
  }
}

}  // namespace
}  // namespace gpuaas::host::plugin
