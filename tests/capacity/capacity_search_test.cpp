// The stream reader, a step's verdict and the search, without a server.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "gpuaas/capacity/capacity_report.hpp"
#include "gpuaas/capacity/capacity_search.hpp"
#include "gpuaas/capacity/load_runner.hpp"
#include "gpuaas/capacity/openai_stream.hpp"

namespace gpuaas::capacity {
namespace {

TEST(OpenAiStream, ReadsAStreamAsVllmSendsIt) {
  OpenAiStream s(false, true);
  s.feed("data: {\"choices\":[{\"text\":\"Hel\",\"finish_reason\":null}]}\n\n", 0.1);
  s.feed("data: {\"choices\":[{\"text\":\"lo\",\"finish_reason\":null}]}\r\n\r", 0.2);
  s.feed(
      "\ndata: {\"choices\":[{\"text\":\"!\",\"finish_reason\":\"length\"}]}\n\n: keep-alive\n\n",
      0.3);
  s.feed(
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3}}\n\n"
      "data: [DONE]\n\n",
      0.35);
  EXPECT_EQ(s.finish(), "");
  EXPECT_DOUBLE_EQ(s.first_token(), 0.1);
  EXPECT_DOUBLE_EQ(s.last_token(), 0.3);
  EXPECT_EQ(s.text(), "Hello!");
  EXPECT_EQ(s.finish_reason(), "length");
  EXPECT_EQ(s.prompt_tokens(), 7);
  EXPECT_EQ(s.completion_tokens(), 3);
}

TEST(OpenAiStream, ChatDeltas) {
  OpenAiStream s(true, true);
  s.feed("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n", 0.05);
  s.feed(
      "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n"
      "data: [DONE]\n\n",
      0.2);
  EXPECT_EQ(s.finish(), "");
  EXPECT_DOUBLE_EQ(s.first_token(), 0.2);  // the role chunk carries no token
  EXPECT_EQ(s.text(), "Hi");
}

TEST(OpenAiStream, EveryBadAnswerIsAClearError) {
  auto error_of = [](const std::string& bytes) {
    OpenAiStream s(false, false);
    s.feed(bytes, 0.1);
    return s.finish();
  };
  EXPECT_NE(error_of("<html>502 Bad Gateway</html>\n").find("garbage: not a server-sent event"),
            std::string::npos);
  EXPECT_NE(error_of("data: not json\n\n").find("garbage: an event that is not a JSON object"),
            std::string::npos);
  EXPECT_NE(error_of("data: {\"choices\":[{\"text\":\"a\"}]}\n\n").find("closed mid-stream"),
            std::string::npos);
  EXPECT_NE(error_of("").find("empty answer"), std::string::npos);
  EXPECT_NE(error_of("data: {\"error\":{\"message\":\"out of memory\"}}\n\n")
                .find("server error in the stream: out of memory"),
            std::string::npos);
  EXPECT_NE(error_of("data: [DONE]\n\n").find("no tokens"), std::string::npos);
  EXPECT_NE(error_of(std::string(5 << 20, 'x')).find("more than 4 MiB"), std::string::npos);
}

TEST(Quality, TheAnswerCompletedAsAsked) {
  RequestRecord r;
  r.finish_reason = "length";
  r.completion_tokens = 16;
  r.max_tokens = 16;
  EXPECT_EQ(quality_problem(r), "");
  r.completion_tokens = 9;
  EXPECT_NE(quality_problem(r).find("after 9 of 16"), std::string::npos);
  r.finish_reason = "stop";
  EXPECT_EQ(quality_problem(r), "");
  r.finish_reason = "abort";
  EXPECT_EQ(quality_problem(r), "finish reason abort");
  r.finish_reason.clear();
  EXPECT_EQ(quality_problem(r), "no finish reason");
  r.error = "HTTP 500: x";
  EXPECT_EQ(quality_problem(r), "no answer");
}

// A step of `n` requests over 10 s, `slow` of them with a TTFT of 1 s, the rest 10 ms.
std::vector<RequestRecord> records(int n, int slow, int errors = 0) {
  std::vector<RequestRecord> out;
  for (int i = 0; i < n; ++i) {
    RequestRecord r;
    r.sent = 10.0 * i / n;
    r.ttft = i % (n / std::max(1, slow)) == 0 && slow > 0 ? 1.0 : 0.01;
    r.e2e = r.ttft + 0.5;
    r.tpot = 0.02;
    r.completion_tokens = 10;
    r.max_tokens = 10;
    r.prompt_tokens = 100;
    r.finish_reason = "length";
    r.quality_ok = true;
    if (i < errors) r.error = "HTTP 500: overloaded";
    out.push_back(r);
  }
  return out;
}

TEST(StepResult, AStepPassesWhenEveryObjectiveHolds) {
  Objectives o;
  o.ttft_p95 = 0.2;
  o.confidence = 0.9;
  auto s = summarize_step(100, 10, 0, records(1000, 20), o);  // 2 % slow
  EXPECT_TRUE(s.pass) << s.failed.front();
  EXPECT_EQ(s.sent, 1000);
  EXPECT_EQ(s.within_objective, 980);
  EXPECT_NEAR(s.tokens_per_second, 11000, 1e-9);
  s = summarize_step(100, 10, 0, records(1000, 100), o);  // 10 % slow
  ASSERT_FALSE(s.pass);
  EXPECT_NE(s.failed.front().find("p95 TTFT 1 s > 200 ms"), std::string::npos) << s.failed.front();
  s = summarize_step(100, 10, 0, records(1000, 0, 50), o);  // 5 % errors
  ASSERT_FALSE(s.pass);
  EXPECT_NE(s.failed.front().find("errors 5% > 1%"), std::string::npos) << s.failed.front();
  EXPECT_EQ(s.error_kinds["HTTP 500"], 50);
  // The warm-up is not measured.
  s = summarize_step(100, 10, 5, records(1000, 0), o);
  EXPECT_EQ(s.sent, 500);
}

TEST(Search, RampsThenBisectsThenConfirms) {
  // A server that holds up to 37 req/s: a step's slow share jumps past 5 % above it.
  Objectives o;
  o.ttft_p95 = 0.2;
  SearchOptions so;
  so.start_rps = 1;
  so.precision = 0.05;
  so.confirm_steps = 2;
  std::vector<double> rates;
  const StepRunner run = [&](double rate) {
    rates.push_back(rate);
    StepRun r;
    r.rate = rate;
    r.seconds = 10;
    r.records = records(1000, rate <= 37 ? 10 : 200);
    return r;
  };
  const SearchResult res = find_capacity(so, o, run);
  EXPECT_EQ(res.bound, "bracketed");
  EXPECT_LE(res.sustainable_rps, 37);
  EXPECT_GE(res.sustainable_rps, 37 * 0.95);
  EXPECT_EQ(rates.front(), 1);
  EXPECT_EQ(res.steps.back().phase, "confirm");
  EXPECT_TRUE(res.at_sustainable.pass);
  EXPECT_EQ(res.at_sustainable.sent, 2000);  // two steps pooled
  // The report carries what the contract asks for.
  CapacityReport report;
  report.search = res;
  report.pricing.gpu_hour = 3.6;
  report.objectives = o;
  const std::string json = report_json(report);
  EXPECT_NE(json.find("\"sustainable_rps\""), std::string::npos);
  EXPECT_NE(json.find("\"steps\""), std::string::npos);
  const Costs c = costs_of(report);
  ASSERT_TRUE(c.known);
  // 0.001 per second over 100 good requests a second (1,000 in 10 s, 1 % slow: 990).
  EXPECT_NEAR(c.per_request_within_objective, 0.001 / 99, 1e-9);
  EXPECT_NE(report_svg(report).find("<svg"), std::string::npos);
}

TEST(Search, ServerDownStopsAtOnce) {
  Objectives o;
  int steps = 0;
  const StepRunner run = [&](double rate) {
    ++steps;
    StepRun r;
    r.rate = rate;
    r.seconds = 1;
    RequestRecord rec;
    rec.error = "connection refused: Failed to connect";
    r.records = {rec, rec};
    return r;
  };
  const SearchResult res = find_capacity({}, o, run);
  EXPECT_EQ(steps, 1);
  EXPECT_NE(res.stopped.find("no request reached the server: connection refused"),
            std::string::npos);
  EXPECT_EQ(res.sustainable_rps, 0);
}

TEST(Search, InterruptedKeepsWhatWasMeasured) {
  Objectives o;
  o.ttft_p95 = 0.2;
  int steps = 0;
  const StepRunner run = [&](double rate) {
    StepRun r;
    r.rate = rate;
    r.seconds = 10;
    r.records = records(100, 1);
    r.interrupted = ++steps == 3;
    return r;
  };
  const SearchResult res = find_capacity({}, o, run);
  EXPECT_TRUE(res.interrupted);
  EXPECT_EQ(res.steps.size(), 3u);
  EXPECT_EQ(res.sustainable_rps, 2);  // the last rate that held, unconfirmed
  EXPECT_EQ(res.bound, "unconfirmed");
}

}  // namespace
}  // namespace gpuaas::capacity
