#include "gpuaas/capacity/openai_stream.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace gpuaas::capacity {
namespace {

constexpr std::size_t kMaxLine = 4 << 20;  // one event's data; a larger one is garbage
constexpr std::size_t kHead = 120;

// Printable for an error message: control bytes and non-ASCII as '?'.
std::string printable(std::string_view s) {
  std::string out(s.substr(0, kHead));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return out;
}

}  // namespace

void OpenAiStream::feed(std::string_view bytes, double now) {
  if (head_.size() < kHead) head_.append(bytes.substr(0, kHead - head_.size()));
  bytes_ += static_cast<int64_t>(bytes.size());
  if (!error_.empty()) return;
  for (char c : bytes) {
    if (c == '\n') {
      std::string_view l(pending_);
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      line(l, now);
      pending_.clear();
      if (!error_.empty()) return;
    } else {
      pending_.push_back(c);
      if (pending_.size() > kMaxLine) {
        error_ = "garbage: a line of more than 4 MiB in the stream";
        return;
      }
    }
  }
}

// Server-sent events: "data:" lines build an event, a blank line ends it; comments (":") and
// other fields (event, id, retry) carry nothing here.
void OpenAiStream::line(std::string_view l, double now) {
  if (l.empty()) {
    if (has_data_) event(data_, now);
    data_.clear();
    has_data_ = false;
    return;
  }
  if (l.front() == ':') return;
  const auto colon = l.find(':');
  const std::string_view field = l.substr(0, colon);
  std::string_view value =
      colon == std::string_view::npos ? std::string_view() : l.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field != "event" && field != "id" && field != "retry") {
    error_ = "garbage: not a server-sent event stream (line \"" + printable(l) + "\")";
  }
}

void OpenAiStream::event(std::string_view data, double now) {
  if (done_) return;
  if (data == "[DONE]") {
    done_ = true;
    return;
  }
  const auto j = nlohmann::json::parse(data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    error_ = "garbage: an event that is not a JSON object (\"" + printable(data) + "\")";
    return;
  }
  if (auto e = j.find("error"); e != j.end()) {
    std::string msg = e->is_object() && e->contains("message") && (*e)["message"].is_string()
                          ? (*e)["message"].get<std::string>()
                          : e->dump();
    error_ = "server error in the stream: " + printable(msg);
    return;
  }
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    if (auto p = u->find("prompt_tokens"); p != u->end() && p->is_number_integer())
      prompt_tokens_ = p->get<int64_t>();
    if (auto c = u->find("completion_tokens"); c != u->end() && c->is_number_integer())
      completion_tokens_ = c->get<int64_t>();
  }
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array()) {
    if (j.find("usage") == j.end()) error_ = "garbage: a chunk without choices or usage";
    return;
  }
  for (const auto& c : *choices) {
    if (!c.is_object()) continue;
    const nlohmann::json* piece = nullptr;
    if (chat_) {
      if (auto d = c.find("delta"); d != c.end() && d->is_object()) {
        if (auto t = d->find("content"); t != d->end()) piece = &*t;
      }
    } else if (auto t = c.find("text"); t != c.end()) {
      piece = &*t;
    }
    if (piece && piece->is_string() && !piece->get_ref<const std::string&>().empty()) {
      if (first_token_ < 0) first_token_ = now;
      last_token_ = now;
      ++text_chunks_;
      if (keep_text_) text_ += piece->get_ref<const std::string&>();
    }
    if (auto f = c.find("finish_reason"); f != c.end() && f->is_string())
      finish_reason_ = f->get<std::string>();
  }
}

std::string OpenAiStream::finish() {
  if (error_.empty() && !pending_.empty()) line(pending_, last_token_);
  if (error_.empty() && has_data_) event(data_, last_token_);
  has_data_ = false;
  if (!error_.empty()) return error_;
  if (bytes_ == 0) return "empty answer: the server closed the stream without a byte";
  if (!done_) {
    if (text_chunks_ == 0 && finish_reason_.empty())
      return "garbage: no OpenAI stream in the answer (it began \"" + printable(head_) + "\")";
    return "closed mid-stream: the answer ended before \"data: [DONE]\" after " +
           std::to_string(text_chunks_) + " chunks of text";
  }
  if (text_chunks_ == 0 && completion_tokens_ <= 0) return "no tokens in the answer";
  return {};
}

}  // namespace gpuaas::capacity
