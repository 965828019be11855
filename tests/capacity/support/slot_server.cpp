#include "slot_server.hpp"

#include <civetweb.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace gpuaas::testing {
namespace {

using Clock = std::chrono::steady_clock;

// vLLM's buckets for time to first token and inter-token latency.
const std::vector<double> kTtftBounds = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                                         0.25,  0.5,   0.75, 1.0,  2.5,  5.0,  7.5,  10.0};
const std::vector<double> kItlBounds = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                        0.3,  0.4,   0.5,  0.75,  1.0, 2.5};
const std::vector<double> kE2eBounds = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0};

void write(mg_connection* conn, const std::string& s) { mg_write(conn, s.data(), s.size()); }

std::string chunk(bool chat, const std::string& text, const char* finish) {
  nlohmann::json c = {{"index", 0},
                      {"finish_reason", finish ? nlohmann::json(finish) : nlohmann::json()}};
  if (chat) {
    c["delta"] = {{"content", text}};
  } else {
    c["text"] = text;
  }
  nlohmann::json j = {{"id", "cmpl-test"},
                      {"object", chat ? "chat.completion.chunk" : "text_completion"},
                      {"model", "slot-model"},
                      {"choices", nlohmann::json::array({c})}};
  return "data: " + j.dump() + "\n\n";
}

int begin_request(mg_connection* conn) {
  auto* self = static_cast<SlotServer*>(mg_get_user_data(mg_get_context(conn)));
  return self->handle(conn);
}

}  // namespace

void SlotServer::Histogram::observe(double v) {
  std::size_t i = 0;
  while (i < bounds.size() && v > bounds[i]) ++i;
  ++counts[i];
  sum += v;
  ++count;
}

SlotServer::SlotServer(SlotServerOptions o) : o_(o), free_(o.slots), rng_(o.seed) {
  ttft_.bounds = kTtftBounds;
  itl_.bounds = kItlBounds;
  e2e_.bounds = kE2eBounds;
  for (Histogram* h : {&ttft_, &itl_, &e2e_}) h->counts.assign(h->bounds.size() + 1, 0);
  mg_callbacks callbacks{};
  callbacks.begin_request = begin_request;
  auto s = telemetry::CivetwebServer::start({"127.0.0.1", 0}, false,
                                            {{"num_threads", std::to_string(o.threads)},
                                             {"enable_keep_alive", "no"},
                                             {"request_timeout_ms", "60000"}},
                                            callbacks, this, "slot server");
  if (!s) throw std::runtime_error(s.status().message());
  server_ = std::move(s).value();
}

SlotServer::~SlotServer() {
  stopping_ = true;
  cv_.notify_all();
  server_.reset();
}

double SlotServer::take_slot() {
  std::unique_lock lock(mu_);
  const uint64_t ticket = next_ticket_++;
  ++waiting_;
  cv_.wait(lock, [&] { return stopping_ || (ticket == serving_ticket_ && free_ > 0); });
  --waiting_;
  ++serving_ticket_;
  --free_;
  ++running_;
  std::exponential_distribution<double> hold(1 / o_.mean_hold_seconds);
  const double h = hold(rng_);
  cv_.notify_all();  // the next ticket may take a slot too
  return h;
}

void SlotServer::free_slot() {
  std::lock_guard lock(mu_);
  ++free_;
  --running_;
  cv_.notify_all();
}

int SlotServer::handle(mg_connection* conn) {
  const mg_request_info* ri = mg_get_request_info(conn);
  const std::string uri = ri->local_uri ? ri->local_uri : "";
  if (uri == "/metrics") {
    const std::string body = metrics_text();
    mg_send_http_ok(conn, "text/plain; version=0.0.4", static_cast<long long>(body.size()));
    write(conn, body);
    return 200;
  }
  if (uri == "/v1/models") {
    const std::string body = R"({"object":"list","data":[{"id":"slot-model","object":"model"}]})";
    mg_send_http_ok(conn, "application/json", static_cast<long long>(body.size()));
    write(conn, body);
    return 200;
  }
  const bool chat = uri == "/v1/chat/completions";
  if (!chat && uri != "/v1/completions") {
    mg_send_http_error(conn, 404, "%s", "not found");
    return 404;
  }
  std::string body;
  char buf[8192];
  for (int n; (n = mg_read(conn, buf, sizeof buf)) > 0;)
    body.append(buf, static_cast<std::size_t>(n));
  const auto j = nlohmann::json::parse(body, nullptr, false);
  int64_t max_tokens = 16, prompt_tokens = 0;
  if (j.is_object() && j.contains("max_tokens") && j["max_tokens"].is_number_integer())
    max_tokens = std::max<int64_t>(1, j["max_tokens"].get<int64_t>());
  const std::string prompt = j.is_object() && j.contains("prompt") && j["prompt"].is_string()
                                 ? j["prompt"].get<std::string>()
                                 : std::string("x");
  for (char c : prompt) prompt_tokens += c == ' ' ? 1 : 0;
  completion(conn, chat, max_tokens, prompt_tokens + 1);
  return 200;
}

void SlotServer::completion(mg_connection* conn, bool chat, int64_t max_tokens,
                            int64_t prompt_tokens) {
  const SlotServerMode mode = mode_.load();
  if (mode == SlotServerMode::kError500) {
    mg_send_http_error(conn, 500, "%s", "{\"error\":\"the engine is overloaded\"}");
    return;
  }
  if (mode == SlotServerMode::kJson) {
    const std::string b = R"({"choices":[{"text":"hi","finish_reason":"stop"}]})";
    mg_send_http_ok(conn, "application/json", static_cast<long long>(b.size()));
    write(conn, b);
    return;
  }
  const auto arrived = Clock::now();
  const double hold = take_slot();
  const auto start = Clock::now();
  if (o_.abandon_after_seconds > 0 &&
      std::chrono::duration<double>(start - arrived).count() > o_.abandon_after_seconds) {
    free_slot();
    return;
  }
  // No length and no chunking: the body ends when the connection closes, so a server that
  // stops early shows as a stream cut short.
  write(conn,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        "Connection: close\r\n\r\n");
  if (mode == SlotServerMode::kGarbage) {
    write(conn, "<html><body>502 Bad Gateway \x01\x02</body></html>\n");
    free_slot();
    return;
  }
  write(conn, chunk(chat, " tok", nullptr));
  const auto first = Clock::now();
  if (mode == SlotServerMode::kCloseMidStream) {
    write(conn, chunk(chat, " tok", nullptr));
    free_slot();
    return;
  }
  if (mode == SlotServerMode::kStall) {
    for (int i = 0; i < 600 && !stopping_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    free_slot();
    return;
  }
  auto last = first;
  std::vector<double> gaps;
  for (int64_t i = 1; i < max_tokens; ++i) {
    std::this_thread::sleep_until(start + std::chrono::duration<double>(hold * i / max_tokens));
    write(conn, chunk(chat, " tok", i + 1 == max_tokens ? "length" : nullptr));
    const auto now = Clock::now();
    gaps.push_back(std::chrono::duration<double>(now - last).count());
    last = now;
  }
  std::this_thread::sleep_until(start + std::chrono::duration<double>(hold));
  if (max_tokens == 1) write(conn, chunk(chat, "", "length"));
  nlohmann::json usage = {{"id", "cmpl-test"},
                          {"choices", nlohmann::json::array()},
                          {"usage",
                           {{"prompt_tokens", prompt_tokens},
                            {"completion_tokens", max_tokens},
                            {"total_tokens", prompt_tokens + max_tokens}}}};
  write(conn, "data: " + usage.dump() + "\n\ndata: [DONE]\n\n");
  free_slot();
  const auto end = Clock::now();
  ++served_;
  std::lock_guard lock(mu_);
  ttft_.observe(std::chrono::duration<double>(first - arrived).count());
  for (double g : gaps) itl_.observe(g);
  e2e_.observe(std::chrono::duration<double>(end - arrived).count());
  ++finished_["length"];
}

std::string SlotServer::metrics_text() {
  std::lock_guard lock(mu_);
  std::string out;
  const std::string model = "model_name=\"slot-model\"";
  auto histogram = [&](const char* name, const Histogram& h) {
    out += std::string("# TYPE ") + name + " histogram\n";
    uint64_t cumulative = 0;
    for (std::size_t i = 0; i <= h.bounds.size(); ++i) {
      cumulative += h.counts[i];
      char le[32];
      if (i < h.bounds.size()) {
        std::snprintf(le, sizeof le, "%g", h.bounds[i]);
      } else {
        std::strcpy(le, "+Inf");
      }
      out += std::string(name) + "_bucket{" + model + ",le=\"" + le + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    out += std::string(name) + "_sum{" + model + "} " + std::to_string(h.sum) + "\n";
    out += std::string(name) + "_count{" + model + "} " + std::to_string(h.count) + "\n";
  };
  histogram("vllm:time_to_first_token_seconds", ttft_);
  histogram("vllm:inter_token_latency_seconds", itl_);
  histogram("vllm:e2e_request_latency_seconds", e2e_);
  out += "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{" + model + "} " +
         std::to_string(waiting_) + "\n";
  out += "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{" + model + "} " +
         std::to_string(running_) + "\n";
  out += "# TYPE vllm:request_success_total counter\n";
  for (const char* reason : {"stop", "length", "abort"}) {
    auto it = finished_.find(reason);
    out += "vllm:request_success_total{finished_reason=\"" + std::string(reason) + "\"," + model +
           "} " + std::to_string(it == finished_.end() ? 0 : it->second) + "\n";
  }
  return out;
}

}  // namespace gpuaas::testing
