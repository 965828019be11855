// Reads the stream sequence out of a JetStream ack subject without allocating; nats.c's
// natsMsg_GetMetaData does the same with a heap copy per message, which the intake cannot afford.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <string_view>

namespace gpuaas::bus {

// "$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>" (9 tokens), or the
// newer "$JS.ACK.<domain>.<account>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>.
// <token>" (12 tokens; 11 without the last token, more reserved for later, as nats.go accepts).
// 10 tokens is neither form. Returns 0 when the subject is not an ack subject.
inline uint64_t stream_sequence_from_ack_subject(std::string_view reply) {
  std::array<std::string_view, 12> tok{};
  std::size_t n = 0;
  while (n < tok.size()) {
    auto dot = reply.find('.');
    tok[n++] = reply.substr(0, dot);
    if (dot == std::string_view::npos) break;
    reply.remove_prefix(dot + 1);
  }
  if (n < 9 || n == 10 || tok[0] != "$JS" || tok[1] != "ACK") return 0;
  std::string_view s = n == 9 ? tok[5] : tok[7];
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return 0;
  return v;
}

}  // namespace gpuaas::bus
