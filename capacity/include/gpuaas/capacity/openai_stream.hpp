// Reads an OpenAI-compatible streaming answer (server-sent events, as vLLM and KServe's Hugging
// Face runtime send them) as its bytes arrive: the time of the first and last token, the text,
// the finish reason and the usage the server counted. Anything that is not such a stream is an
// error naming what was found, never a crash or a hang.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuaas::capacity {

class OpenAiStream {
 public:
  explicit OpenAiStream(bool chat, bool keep_text) : chat_(chat), keep_text_(keep_text) {}

  // Feeds bytes received at `now` (seconds on any clock the caller keeps).
  void feed(std::string_view bytes, double now);
  // The transfer ended; `error` is empty when the connection closed cleanly. Returns the
  // request's error: empty when the stream was whole.
  std::string finish();

  double first_token() const { return first_token_; }  // -1: none yet
  double last_token() const { return last_token_; }
  int64_t chunks_with_text() const { return text_chunks_; }
  int64_t prompt_tokens() const { return prompt_tokens_; }          // -1: not reported
  int64_t completion_tokens() const { return completion_tokens_; }  // -1: not reported
  const std::string& finish_reason() const { return finish_reason_; }
  const std::string& text() const { return text_; }
  bool done() const { return done_; }

 private:
  void line(std::string_view l, double now);
  void event(std::string_view data, double now);

  bool chat_, keep_text_;
  std::string pending_;  // an incomplete line
  std::string data_;     // the data lines of the event being read
  bool has_data_ = false;
  double first_token_ = -1, last_token_ = -1;
  int64_t text_chunks_ = 0, prompt_tokens_ = -1, completion_tokens_ = -1;
  int64_t bytes_ = 0;
  std::string finish_reason_, text_, error_, head_;  // head_: the first bytes, for errors
  bool done_ = false;
};

}  // namespace gpuaas::capacity
