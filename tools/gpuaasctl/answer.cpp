#include "answer.hpp"

#include "gpuaas/kube/manifest_reader.hpp"
#include "gpuaas/wire/utf8.hpp"
#include "table.hpp"

namespace gpuaas::ctl {

using nlohmann::json;

const json& at(const json& j, std::initializer_list<std::string_view> path) {
  static const json kNull;
  const json* v = &j;
  for (std::string_view key : path) {
    if (!v->is_object()) return kNull;
    const auto it = v->find(key);
    if (it == v->end()) return kNull;
    v = &*it;
  }
  return *v;
}

const json& list(const json& j, std::initializer_list<std::string_view> path) {
  static const json kEmpty = json::array();
  const json& v = at(j, path);
  return v.is_array() ? v : kEmpty;
}

const json& object(const json& j, std::initializer_list<std::string_view> path) {
  static const json kEmpty = json::object();
  const json& v = at(j, path);
  return v.is_object() ? v : kEmpty;
}

bool flag(const json& v) { return v.is_boolean() && v.get<bool>(); }

std::optional<int64_t> integer(const json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_unsigned() && v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX))
    return static_cast<int64_t>(v.get<uint64_t>());
  return std::nullopt;
}

// No answer of gpuaasd nests deeper than a few levels; dump() and the renderers recurse, so a
// deeper one is refused before it is parsed.
constexpr int kMaxDepth = 64;

Answer read_answer(std::string raw) {
  Answer a;
  const bool deep = kube::json_too_deep_at(raw, 0, kMaxDepth) != std::string_view::npos;
  a.body = deep ? json(json::value_t::discarded) : json::parse(raw, nullptr, false);
  a.raw = std::move(raw);
  if (deep) {
    a.error = "the daemon's answer nests deeper than " + std::to_string(kMaxDepth) + " levels";
    a.body = json::object();
  } else if (a.body.is_discarded() || !a.body.is_object()) {
    a.error = "the daemon's answer is not a JSON object: " + wire::printable(a.raw);
    a.body = json::object();
  } else if (a.body.contains("error")) {
    const json& e = a.body["error"];
    a.error = e.is_string() ? e.get<std::string>() : std::string("an error of no message");
  }
  return a;
}

}  // namespace gpuaas::ctl
