// What the NATS bus's parts share: nats.c ownership helpers, status mapping, and the connection
// state that every subscription and consumer holds a reference to. Private to bus/.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "gpuaas/base/status.hpp"
#include "gpuaas/bus/message.hpp"

namespace gpuaas::bus {

struct NatsMsgDeleter {
  void operator()(natsMsg* m) const { natsMsg_Destroy(m); }
};
using MsgPtr = std::unique_ptr<natsMsg, NatsMsgDeleter>;

inline std::string describe(natsStatus s, jsErrCode jerr = static_cast<jsErrCode>(0)) {
  std::string text = natsStatus_GetText(s);
  const char* last = nats_GetLastError(nullptr);
  if (last != nullptr && *last != '\0' && text != last) text += std::string(": ") + last;
  if (jerr != 0) text += " (JetStream error " + std::to_string(static_cast<int>(jerr)) + ")";
  return text;
}

inline Status from_nats(natsStatus s, const std::string& what,
                        jsErrCode jerr = static_cast<jsErrCode>(0)) {
  if (s == NATS_OK) return Status::ok();
  std::string m = what + ": " + describe(s, jerr);
  switch (s) {
    case NATS_NOT_FOUND:
      return Status::not_found(m);
    case NATS_TIMEOUT:
    case NATS_NO_SERVER:
    case NATS_NO_RESPONDERS:
    case NATS_CONNECTION_CLOSED:
    case NATS_NOT_YET_CONNECTED:
    case NATS_IO_ERROR:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_STALE_CONNECTION:
      return Status::unavailable(m);
    case NATS_INVALID_ARG:
    case NATS_INVALID_SUBJECT:
    case NATS_MAX_PAYLOAD:
      return Status::invalid(m);
    default:
      return Status::internal(m);
  }
}

inline Result<MsgPtr> to_nats(const Message& msg) {
  natsMsg* raw = nullptr;
  natsStatus s = natsMsg_Create(&raw, msg.subject.c_str(), nullptr, msg.data.data(),
                                static_cast<int>(msg.data.size()));
  if (s != NATS_OK) return from_nats(s, "creating a message on " + msg.subject);
  MsgPtr m(raw);
  for (const auto& [k, v] : msg.headers) {
    s = natsMsgHeader_Add(m.get(), k.c_str(), v.c_str());
    if (s != NATS_OK) return from_nats(s, "setting header " + k);
  }
  return m;
}

inline Message from_nats_msg(natsMsg* m) {
  Message out;
  out.subject = natsMsg_GetSubject(m);
  if (const char* reply = natsMsg_GetReply(m); reply != nullptr) out.reply = reply;
  out.data.assign(natsMsg_GetData(m), static_cast<std::size_t>(natsMsg_GetDataLength(m)));
  const char** keys = nullptr;
  int n = 0;
  if (natsMsgHeader_Keys(m, &keys, &n) == NATS_OK) {
    for (int i = 0; i < n; ++i) {
      const char* v = nullptr;
      if (natsMsgHeader_Get(m, keys[i], &v) == NATS_OK && v != nullptr) {
        out.headers.emplace_back(keys[i], v);
      }
    }
    free(const_cast<char**>(keys));  // nats.c: the array is the caller's, the strings are not
  }
  return out;
}

inline int64_t to_ns(std::chrono::nanoseconds d) { return d.count(); }

// Shared by the bus and everything it hands out, so a subscription never outlives its connection.
struct Connection {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  std::atomic<int64_t> async_failures{0};
  std::mutex async_error_mu;
  std::string async_error;
  // The server's last refusal of what this connection did ("Permissions Violation for Publish to
  // ..."): it arrives asynchronously, so a request that was refused would otherwise time out.
  std::string refused;
  uint64_t refusals = 0;

  ~Connection() {
    if (js != nullptr) jsCtx_Destroy(js);
    if (nc != nullptr) {
      natsConnection_Close(nc);
      natsConnection_Destroy(nc);
    }
  }
};

}  // namespace gpuaas::bus
