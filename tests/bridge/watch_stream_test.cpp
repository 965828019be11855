// The watch body as the API server writes it, cut into pieces anywhere.
#include "gpuaas/bridge/watch_stream.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuaas::bridge {
namespace {

using Type = WatchEvent::Type;

const std::string kBody =
    R"({"type":"ADDED","object":{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":)"
    R"({"name":"raycluster-kuberay","namespace":"default","resourceVersion":"1001"}}})"
    "\n"
    R"({"type":"MODIFIED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",)"
    R"("namespace":"team-a","resourceVersion":"1002"},"spec":{"nodeName":"gpu-1"}}})"
    "\n"
    R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":)"
    R"({"resourceVersion":"1010","annotations":{"k8s.io/initial-events-end":"true"}}}})"
    "\n"
    R"({"type":"DELETED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",)"
    R"("namespace":"team-a","resourceVersion":"1011"}}})"
    "\n"
    R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)"
    R"x("status":"Failure","message":"too old resource version: 1 (1011)","reason":"Expired",)x"
    R"("code":410}})"
    "\n";

void expect_body(const std::vector<WatchEvent>& evs) {
  ASSERT_EQ(evs.size(), 5u);
  EXPECT_EQ(evs[0].type, Type::kAdded);
  EXPECT_EQ(evs[0].resource_version, "1001");
  EXPECT_NE(evs[0].object.find("raycluster-kuberay"), std::string::npos);
  EXPECT_EQ(evs[1].type, Type::kModified);
  EXPECT_EQ(evs[1].resource_version, "1002");
  EXPECT_EQ(evs[2].type, Type::kBookmark);
  EXPECT_EQ(evs[2].resource_version, "1010");
  EXPECT_EQ(evs[3].type, Type::kDeleted);
  EXPECT_EQ(evs[3].resource_version, "1011");
  EXPECT_EQ(evs[4].type, Type::kError);
  EXPECT_EQ(evs[4].code, 410);
  EXPECT_EQ(evs[4].message, "too old resource version: 1 (1011)");
}

TEST(WatchStream, WholeBody) {
  WatchStream s;
  auto evs = s.feed(kBody);
  expect_body(evs);
  EXPECT_EQ(s.pending(), 0u);
  EXPECT_TRUE(s.finish().empty());
}

// Every cut of the body into two pieces, and byte by byte, gives the same events.
TEST(WatchStream, PiecesCutAnywhere) {
  for (std::size_t cut = 0; cut <= kBody.size(); ++cut) {
    WatchStream s;
    auto evs = s.feed(std::string_view(kBody).substr(0, cut));
    auto rest = s.feed(std::string_view(kBody).substr(cut));
    evs.insert(evs.end(), rest.begin(), rest.end());
    expect_body(evs);
    if (HasFailure()) {
      ADD_FAILURE() << "cut at byte " << cut;
      return;
    }
  }
  WatchStream s;
  std::vector<WatchEvent> evs;
  for (char c : kBody) {
    auto some = s.feed(std::string_view(&c, 1));
    evs.insert(evs.end(), some.begin(), some.end());
  }
  expect_body(evs);
}

TEST(WatchStream, ALastLineWithoutItsNewlineIsReadAtTheEnd) {
  WatchStream s;
  std::string body = kBody.substr(0, kBody.size() - 1);  // no final newline
  auto evs = s.feed(body);
  EXPECT_EQ(evs.size(), 4u);
  EXPECT_GT(s.pending(), 0u);
  auto last = s.finish();
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].type, Type::kError);
  EXPECT_EQ(s.pending(), 0u);
}

TEST(WatchStream, BadLinesAreReportedAndTheRestRead) {
  WatchStream s;
  auto evs = s.feed(
      "not json\r\n"
      "{\"type\":\"ADDED\"}\n"
      "{\"type\":\"RENAMED\",\"object\":{\"metadata\":{\"resourceVersion\":\"1\"}}}\n"
      "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\"}}}\n"
      "\n\r\n" +
      kBody);
  ASSERT_EQ(evs.size(), 9u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(evs[static_cast<std::size_t>(i)].type, Type::kInvalid) << i;
    EXPECT_FALSE(evs[static_cast<std::size_t>(i)].message.empty()) << i;
  }
  EXPECT_NE(evs[2].message.find("RENAMED"), std::string::npos);
  EXPECT_NE(evs[3].message.find("ADDED event without metadata.resourceVersion"), std::string::npos)
      << evs[3].message;
  expect_body(std::vector<WatchEvent>(evs.begin() + 4, evs.end()));
}

TEST(WatchStream, AnEndlessLineIsDroppedNotKept) {
  WatchStream s;
  const std::string mb(1024 * 1024, 'x');
  for (std::size_t i = 0; i <= WatchStream::kMaxLine / mb.size(); ++i) {
    EXPECT_TRUE(s.feed(mb).empty());
    EXPECT_LE(s.pending(), WatchStream::kMaxLine);
  }
  EXPECT_EQ(s.pending(), 0u);
  auto evs = s.feed("\n" + kBody);
  ASSERT_EQ(evs.size(), 6u);
  EXPECT_EQ(evs[0].type, Type::kInvalid);
  expect_body(std::vector<WatchEvent>(evs.begin() + 1, evs.end()));
}

}  // namespace
}  // namespace gpuaas::bridge
