#include "gpuaas/capacity/load_runner.hpp"

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <random>

#include "gpuaas/capacity/openai_stream.hpp"

namespace gpuaas::capacity {
namespace {

using Clock = std::chrono::steady_clock;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string join(const std::string& base, const char* path) {
  std::string b = base;
  while (!b.empty() && b.back() == '/') b.pop_back();
  return b + path;
}

std::string request_body(const LoadTarget& t, const RequestSize& size) {
  nlohmann::json j;
  j["model"] = t.model;
  if (t.chat) {
    j["messages"] =
        nlohmann::json::array({{{"role", "user"}, {"content", prompt_of(size.prompt_tokens)}}});
  } else {
    j["prompt"] = prompt_of(size.prompt_tokens);
  }
  j["max_tokens"] = size.max_tokens;
  j["stream"] = true;
  j["stream_options"] = {{"include_usage", true}};
  if (t.ignore_eos) j["ignore_eos"] = true;
  return j.dump();
}

// One request in flight.
struct Transfer {
  Transfer(const LoadTarget& t, double sent) : stream(t.chat, t.keep_text) { rec.sent = sent; }
  ~Transfer() {
    if (headers) curl_slist_free_all(headers);
    if (easy) curl_easy_cleanup(easy);
  }
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string body;
  OpenAiStream stream;
  RequestRecord rec;
  Clock::time_point began, step_start;
  Clock::time_point last_data;  // the last bytes received (or the start): the stall clock
  bool stalled = false;
  long status = 0;
  bool checked_head = false;
  std::string head_error;  // a non-200 answer's first bytes
  std::string content_type;
  char errbuf[CURL_ERROR_SIZE] = {};
};

std::size_t on_data(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t bytes = size * n;
  t->last_data = Clock::now();
  if (!t->checked_head) {
    t->checked_head = true;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->status);
    char* ct = nullptr;
    curl_easy_getinfo(t->easy, CURLINFO_CONTENT_TYPE, &ct);
    if (ct) t->content_type = ct;
  }
  const double now = std::chrono::duration<double>(Clock::now() - t->step_start).count();
  if (t->status != 200) {
    if (t->head_error.size() < 200)
      t->head_error.append(data, std::min<std::size_t>(bytes, 200 - t->head_error.size()));
  } else {
    t->stream.feed(std::string_view(data, bytes), now);
  }
  return bytes;
}

std::string printable(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = ' ';
  return s;
}

std::string curl_error(CURLcode code, const Transfer& t, const LoadTarget& target) {
  const std::string detail = t.errbuf[0] ? t.errbuf : curl_easy_strerror(code);
  switch (code) {
    case CURLE_COULDNT_CONNECT:
      return "connection refused: " + detail;
    case CURLE_COULDNT_RESOLVE_HOST:
      return "cannot connect: " + detail;
    case CURLE_OPERATION_TIMEDOUT:
      if (detail.find("too slow") != std::string::npos) {
        return "stalled: no data for " + std::to_string(static_cast<int>(target.stall_timeout)) +
               " s (" + std::to_string(t.stream.chunks_with_text()) + " chunks of text before)";
      }
      return "timed out: no whole answer within " +
             std::to_string(static_cast<int>(target.request_timeout)) + " s";
    case CURLE_GOT_NOTHING:
      return "empty answer: the server closed the connection without a byte";
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
      return "closed mid-stream: " + detail;
    default:
      return "transfer failed: " + detail;
  }
}

void finish(Transfer& t, CURLcode code, const LoadTarget& target, Clock::time_point end) {
  RequestRecord& r = t.rec;
  const double began = std::chrono::duration<double>(t.began - t.step_start).count();
  if (t.stalled) {
    r.error = "stalled: no data for " + std::to_string(static_cast<int>(target.stall_timeout)) +
              " s (" + std::to_string(t.stream.chunks_with_text()) + " chunks of text before)";
  } else if (code != CURLE_OK) {
    r.error = curl_error(code, t, target);
  } else if (t.status != 200) {
    r.error = "HTTP " + std::to_string(t.status) + ": " + printable(t.head_error);
  } else if (t.content_type.find("application/json") != std::string::npos) {
    r.error = "not a stream: the server answered application/json, not text/event-stream";
    t.stream.finish();
  } else {
    r.error = t.stream.finish();
  }
  const OpenAiStream& s = t.stream;
  if (s.first_token() >= 0) r.ttft = s.first_token() - began;
  if (r.error.empty()) r.e2e = std::chrono::duration<double>(end - t.began).count();
  r.completion_tokens = s.completion_tokens() >= 0 ? s.completion_tokens() : s.chunks_with_text();
  if (s.prompt_tokens() >= 0) r.prompt_tokens = s.prompt_tokens();
  if (r.completion_tokens >= 2 && s.first_token() >= 0 && s.last_token() > s.first_token())
    r.tpot = (s.last_token() - s.first_token()) / static_cast<double>(r.completion_tokens - 1);
  r.finish_reason = s.finish_reason();
  if (target.keep_text) r.text = s.text();
  r.quality_ok = quality_problem(r).empty();
}

}  // namespace

std::string quality_problem(const RequestRecord& r) {
  if (!r.error.empty()) return "no answer";
  if (r.finish_reason.empty()) return "no finish reason";
  if (r.finish_reason != "stop" && r.finish_reason != "length")
    return "finish reason " + r.finish_reason;
  if (r.completion_tokens <= 0) return "no tokens";
  if (r.finish_reason == "length" && r.max_tokens > 0 && r.completion_tokens != r.max_tokens)
    return "stopped for length after " + std::to_string(r.completion_tokens) + " of " +
           std::to_string(r.max_tokens) + " tokens";
  return {};
}

StepRun run_load_step(const LoadTarget& target, const RequestMix& mix, double rate, double seconds,
                      double warmup, uint64_t seed, const std::atomic<bool>* stop) {
  global_init();
  StepRun run;
  run.rate = rate;
  run.seconds = seconds;
  run.warmup = warmup;
  std::mt19937_64 rng(seed ^ static_cast<uint64_t>(std::llround(rate * 1000)));
  std::exponential_distribution<double> gap(rate);
  std::vector<double> arrivals;
  for (double t = gap(rng); t < seconds; t += gap(rng)) arrivals.push_back(t);

  const std::string url =
      join(target.base_url, target.chat ? "/v1/chat/completions" : "/v1/completions");
  CURLM* multi = curl_multi_init();
  std::vector<std::unique_ptr<Transfer>> live;
  const Clock::time_point start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto done = [&](CURL* easy, CURLcode code) {
    auto it = std::find_if(live.begin(), live.end(), [&](auto& t) { return t->easy == easy; });
    if (it == live.end()) return;
    curl_multi_remove_handle(multi, easy);
    finish(**it, code, target, Clock::now());
    run.records.push_back(std::move((*it)->rec));
    live.erase(it);
  };
  std::size_t next = 0;
  while (true) {
    if (stop && stop->load()) {
      for (auto& t : live) {
        curl_multi_remove_handle(multi, t->easy);
        t->rec.error = "interrupted";
        run.records.push_back(std::move(t->rec));
      }
      live.clear();
      run.interrupted = true;
      break;
    }
    const double now = elapsed();
    for (; next < arrivals.size() && arrivals[next] <= now; ++next) {
      const RequestSize size = mix.draw(rng);
      auto t = std::make_unique<Transfer>(target, arrivals[next]);
      t->rec.max_tokens = size.max_tokens;
      t->rec.prompt_tokens = size.prompt_tokens;
      if (static_cast<int>(live.size()) >= target.max_in_flight) {
        t->rec.error =
            "client limit: " + std::to_string(target.max_in_flight) + " requests already in flight";
        run.records.push_back(std::move(t->rec));
        continue;
      }
      t->body = request_body(target, size);
      t->easy = curl_easy_init();
      t->headers = curl_slist_append(nullptr, "Content-Type: application/json");
      t->headers = curl_slist_append(t->headers, "Accept: text/event-stream");
      for (const auto& h : target.headers) t->headers = curl_slist_append(t->headers, h.c_str());
      CURL* e = t->easy;
      curl_easy_setopt(e, CURLOPT_URL, url.c_str());
      curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body.c_str());
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, static_cast<long>(t->body.size()));
      curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
      curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
      curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
      curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(target.request_timeout * 1000));
      curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                       static_cast<long>(std::min(10.0, target.request_timeout) * 1000));
      t->step_start = start;
      t->began = Clock::now();
      t->last_data = t->began;
      curl_multi_add_handle(multi, e);
      live.push_back(std::move(t));
    }
    int running = 0;
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* m = curl_multi_info_read(multi, &queued)) {
      if (m->msg == CURLMSG_DONE) done(m->easy_handle, m->data.result);
    }
    // Stalls are timed here, not by curl's low-speed limit: that one averages the speed over
    // about five seconds, so a stream that sent a chunk then stopped passed it for that long.
    const auto stall = std::chrono::duration<double>(target.stall_timeout);
    std::vector<CURL*> stalled;
    for (auto& t : live) {
      if (Clock::now() - t->last_data <= stall) continue;
      t->stalled = true;
      stalled.push_back(t->easy);
    }
    for (CURL* e : stalled) done(e, CURLE_OPERATION_TIMEDOUT);
    if (next == arrivals.size() && live.empty()) break;
    double wait = 0.1;  // seconds; short enough to notice `stop`
    if (next < arrivals.size()) wait = std::min(wait, std::max(0.0, arrivals[next] - elapsed()));
    curl_multi_poll(multi, nullptr, 0, static_cast<int>(std::ceil(wait * 1000)), nullptr);
  }
  curl_multi_cleanup(multi);
  std::sort(run.records.begin(), run.records.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.sent < b.sent; });
  return run;
}

Result<std::string> discover_model(const LoadTarget& target) {
  global_init();
  const std::string url = join(target.base_url, "/v1/models");
  CURL* e = curl_easy_init();
  std::string body;
  char errbuf[CURL_ERROR_SIZE] = {};
  curl_slist* headers = nullptr;
  for (const auto& h : target.headers) headers = curl_slist_append(headers, h.c_str());
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(
      e, CURLOPT_WRITEFUNCTION, +[](char* d, std::size_t s, std::size_t n, void* u) {
        auto* b = static_cast<std::string*>(u);
        if (b->size() < (1 << 20)) b->append(d, s * n);
        return s * n;
      });
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &body);
  const CURLcode code = curl_easy_perform(e);
  long status = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(e);
  if (headers) curl_slist_free_all(headers);
  if (code != CURLE_OK)
    return Status::unavailable(url + ": " + (errbuf[0] ? errbuf : curl_easy_strerror(code)));
  if (status != 200)
    return Status::unavailable(url + ": HTTP " + std::to_string(status) +
                               " (name the model with --model)");
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty() &&
      j["data"][0].is_object() && j["data"][0].contains("id") && j["data"][0]["id"].is_string())
    return j["data"][0]["id"].get<std::string>();
  return Status::invalid(url + ": no model listed in the answer (name one with --model)");
}

}  // namespace gpuaas::capacity
