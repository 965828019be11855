#include "gpuaas/bus/subjects.hpp"

#include <gtest/gtest.h>

namespace gpuaas::bus {
namespace {

TEST(SubjectsTest, PrefixCarriesRootAndVersion) {
  EXPECT_EQ(Subjects().prefix(), "gpuaas.v1");
  EXPECT_EQ(Subjects("t").prefix(), "t.v1");
}

TEST(SubjectsTest, BuildersNamespaced) {
  Subjects s;
  EXPECT_EQ(s.events("team-a", "Pod"), "gpuaas.v1.events.team-a.Pod");
  EXPECT_EQ(s.metrics("team-a"), "gpuaas.v1.metrics.team-a");
  EXPECT_EQ(s.ticks(), "gpuaas.v1.ticks");
  EXPECT_EQ(s.actions("team-a", "Pod"), "gpuaas.v1.actions.team-a.Pod");
  EXPECT_EQ(s.status("team-a", "GpuClaim"), "gpuaas.v1.status.team-a.GpuClaim");
  EXPECT_EQ(s.deadletter("team-a"), "gpuaas.v1.deadletter.team-a");
  EXPECT_EQ(s.api("state"), "gpuaas.v1.api.state");
}

TEST(SubjectsTest, EmptyNamespaceIsClusterScope) {
  Subjects s("r");
  EXPECT_EQ(s.events("", "Node"), "r.v1.events._cluster.Node");
  EXPECT_EQ(s.metrics(""), "r.v1.metrics._cluster");
  EXPECT_EQ(s.actions("", "Node"), "r.v1.actions._cluster.Node");
  EXPECT_EQ(s.status("", "Node"), "r.v1.status._cluster.Node");
  EXPECT_EQ(s.deadletter(""), "r.v1.deadletter._cluster");
  EXPECT_EQ(Subjects::namespace_token(""), kClusterScope);
  EXPECT_EQ(Subjects::namespace_token("ns"), "ns");
}

TEST(SubjectsTest, AllWildcards) {
  Subjects s;
  EXPECT_EQ(s.all(SubjectCategory::kEvents), "gpuaas.v1.events.>");
  EXPECT_EQ(s.all(SubjectCategory::kMetrics), "gpuaas.v1.metrics.>");
  EXPECT_EQ(s.all(SubjectCategory::kActions), "gpuaas.v1.actions.>");
  EXPECT_EQ(s.all(SubjectCategory::kStatus), "gpuaas.v1.status.>");
  EXPECT_EQ(s.all(SubjectCategory::kDeadletter), "gpuaas.v1.deadletter.>");
  EXPECT_EQ(s.all(SubjectCategory::kApi), "gpuaas.v1.api.>");
  // Ticks is a single subject: '>' would need at least one more token and match nothing.
  EXPECT_EQ(s.all(SubjectCategory::kTicks), "gpuaas.v1.ticks");
}

void expect_parsed(const Subjects& s, const std::string& subject, SubjectCategory cat,
                   const std::string& ns, const std::string& kind) {
  SCOPED_TRACE(subject);
  auto p = s.parse(subject);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->category, cat);
  EXPECT_EQ(p->namespace_token, ns);
  EXPECT_EQ(p->kind, kind);
}

TEST(SubjectsTest, ParseRoundTripsEveryBuilder) {
  Subjects s("root");
  expect_parsed(s, s.events("ns", "Pod"), SubjectCategory::kEvents, "ns", "Pod");
  expect_parsed(s, s.events("", "Node"), SubjectCategory::kEvents, "_cluster", "Node");
  expect_parsed(s, s.metrics("ns"), SubjectCategory::kMetrics, "ns", "");
  expect_parsed(s, s.metrics(""), SubjectCategory::kMetrics, "_cluster", "");
  expect_parsed(s, s.ticks(), SubjectCategory::kTicks, "", "");
  expect_parsed(s, s.actions("ns", "Pod"), SubjectCategory::kActions, "ns", "Pod");
  expect_parsed(s, s.status("", "Node"), SubjectCategory::kStatus, "_cluster", "Node");
  expect_parsed(s, s.deadletter("ns"), SubjectCategory::kDeadletter, "ns", "");
  expect_parsed(s, s.deadletter(""), SubjectCategory::kDeadletter, "_cluster", "");
  expect_parsed(s, s.api("state"), SubjectCategory::kApi, "", "state");
  expect_parsed(s, s.api("state", "ns"), SubjectCategory::kApi, "ns", "state");
  expect_parsed(s, s.submissions("ns", "Job"), SubjectCategory::kSubmissions, "ns", "Job");
}

TEST(SubjectsTest, ParseRejects) {
  Subjects s;
  for (const char* bad : {
           "",
           "gpuaas",
           "gpuaas.v1",
           "gpuaas.v1.",
           "gpuaas.v2.events.ns.Pod",        // wrong version
           "other.v1.events.ns.Pod",         // wrong root
           "gpuaasx.v1.events.ns.Pod",       // root is a prefix of the token only
           "gpuaas.v1x.events.ns.Pod",       // prefix not followed by a dot
           "gpuaas.v1.events.ns",            // too few tokens
           "gpuaas.v1.events.ns.Pod.extra",  // too many
           "gpuaas.v1.events.ns.Pod.a.b",    // more than parse() keeps
           "gpuaas.v1.metrics",
           "gpuaas.v1.metrics.ns.Pod",
           "gpuaas.v1.deadletter",
           "gpuaas.v1.deadletter.ns.x",
           "gpuaas.v1.ticks.now",
           "gpuaas.v1.api",
           "gpuaas.v1.events.ns.Pod.",  // trailing dot
           "gpuaas.v1.ticks.",
           "gpuaas.v1.events..Pod",  // empty token
           "gpuaas.v1..events.ns.Pod",
           "gpuaas.v1.unknown.ns.Pod",  // unknown category
           "gpuaas.v1.Events.ns.Pod",   // categories are case-sensitive
       }) {
    EXPECT_FALSE(s.parse(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(SubjectsTest, ParseUsesOwnRoot) {
  Subjects prod;
  Subjects bench("bench");
  EXPECT_FALSE(prod.parse(bench.events("ns", "Pod")).has_value());
  EXPECT_TRUE(bench.parse(bench.events("ns", "Pod")).has_value());
}

TEST(SubjectsTest, ValidToken) {
  EXPECT_TRUE(Subjects::valid_token("team-a"));
  EXPECT_TRUE(Subjects::valid_token("_cluster"));
  EXPECT_TRUE(Subjects::valid_token("GpuClaim"));
  EXPECT_TRUE(Subjects::valid_token("a_b-c9"));
  for (const char* bad : {"", "a.b", "*", ">", "a*", "a>", "a b", "a\tb", "a\rb", "a\nb", "\x01"}) {
    EXPECT_FALSE(Subjects::valid_token(bad)) << "'" << bad << "'";
  }
  EXPECT_FALSE(Subjects::valid_token(std::string_view("a\0b", 3)));
}

}  // namespace
}  // namespace gpuaas::bus

namespace gpuaas::bus {
namespace {

TEST(SubjectsTest, Submissions) {
  Subjects s;
  EXPECT_EQ(s.submissions("team-a", "RayJob"), "gpuaas.v1.submissions.team-a.RayJob");
  EXPECT_EQ(s.all(SubjectCategory::kSubmissions), "gpuaas.v1.submissions.>");
  auto p = s.parse("gpuaas.v1.submissions.team-a.RayJob");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->category, SubjectCategory::kSubmissions);
  EXPECT_EQ(p->namespace_token, "team-a");
  EXPECT_EQ(p->kind, "RayJob");
  EXPECT_FALSE(s.parse("gpuaas.v1.submissions.team-a"));
  // The API: two or three tokens, the endpoint as the kind.
  auto api = s.parse("gpuaas.v1.api.explain.team-a");
  ASSERT_TRUE(api);
  EXPECT_EQ(api->kind, "explain");
  EXPECT_EQ(api->namespace_token, "team-a");
  EXPECT_FALSE(s.parse("gpuaas.v1.api.state.team-a.extra"));
}

TEST(SubjectsTest, RepliesThatMustNotBeAnswered) {
  Subjects s;
  for (const char* ok : {"_INBOX.abc.def", "_R_.7kVIWf.FfawgU", "_INBOX_team-a.x", "gpuaasx.y"})
    EXPECT_EQ(s.unanswerable_reply(ok), "") << ok;
  const std::pair<const char*, const char*> refused[] = {
      {"", "no reply subject"},
      {"$JS.API.STREAM.PURGE.GPUAAS_EVENTS", "'$' namespace"},
      {"$KV.GPUAAS_SNAPSHOT.state_gpuaasd", "'$' namespace"},
      {"$SYS.REQ.SERVER.PING", "'$' namespace"},
      {"gpuaas.v1.actions.team-b.Job", "under gpuaas."},
      {"gpuaas.v2.anything", "under gpuaas."},
      {"gpuaas", "under gpuaas."},
      {"_INBOX.*", "wildcard"},
      {"_INBOX.>", "wildcard"},
      {"_INBOX..x", "empty token"},
      {"_INBOX.x.", "empty token"},
      {".x", "empty token"},
      {"_INBOX x", "printable ASCII"},
      {"_INBOX.\xc3\xa9", "printable ASCII"},
  };
  for (const auto& [reply, why] : refused)
    EXPECT_NE(s.unanswerable_reply(reply).find(why), std::string::npos)
        << reply << ": " << s.unanswerable_reply(reply);
  EXPECT_NE(s.unanswerable_reply(std::string(300, 'a')), "");
  EXPECT_NE(Subjects("staging").unanswerable_reply("staging.v1.status.x.Job"), "");
  EXPECT_EQ(Subjects("staging").unanswerable_reply("gpuaas.v1.status.x.Job"), "");
}

}  // namespace
}  // namespace gpuaas::bus
