#include "json_pointer.hpp"

#include <utility>

#include "gpuaas/bridge/workload_hold.hpp"

namespace gpuaas::bridge::pointer {

using nlohmann::json;

bool valid_path(std::string_view p) {
  if (p.size() < 2 || p[0] != '/' || p.back() == '/') return false;
  if (p.find("//") != std::string_view::npos) return false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '~' && (i + 1 == p.size() || (p[i + 1] != '0' && p[i + 1] != '1'))) return false;
  }
  return true;
}

std::vector<std::string> split(std::string_view pointer) {
  std::vector<std::string> out;
  std::size_t pos = 1;
  while (pos <= pointer.size()) {
    const auto slash = pointer.find('/', pos);
    const auto end = slash == std::string_view::npos ? pointer.size() : slash;
    std::string token;
    for (std::size_t i = pos; i < end; ++i) {
      if (pointer[i] == '~' && i + 1 < end) {
        token += pointer[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        token += pointer[i];
      }
    }
    out.push_back(std::move(token));
    pos = end + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& tokens, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += "/" + escape_pointer_token(tokens[i]);
  return out;
}

namespace {

// The element `token` names in an array: RFC 6901's "0" or a number without leading zeros, below
// the size. Pod templates sit in lists (a RayCluster's workerGroupSpecs).
const json* element(const json& array, const std::string& token) {
  if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0')) return nullptr;
  std::size_t i = 0;
  for (const char c : token) {
    if (c < '0' || c > '9') return nullptr;
    i = i * 10 + static_cast<std::size_t>(c - '0');
  }
  return i < array.size() ? &array[i] : nullptr;
}

}  // namespace

const json* find(const json& object, const std::vector<std::string>& tokens) {
  const json* at = &object;
  for (const auto& t : tokens) {
    if (at->is_array()) {
      at = element(*at, t);
      if (at == nullptr) return nullptr;
      continue;
    }
    if (!at->is_object()) return nullptr;
    const auto it = at->find(t);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

Result<json> add_with_parents(const json& object, const std::vector<std::string>& tokens,
                              json value) {
  const json* at = &object;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (at->is_array() && i + 1 < tokens.size()) {
      if (const json* e = element(*at, tokens[i])) {
        at = e;
        continue;
      }
    }
    if (!at->is_object()) return Status::invalid(join(tokens, i) + " is not an object");
    const auto it = at->find(tokens[i]);
    if (it == at->end() || it->is_null()) {
      for (std::size_t j = tokens.size(); j-- > i + 1;) value = json{{tokens[j], std::move(value)}};
      return json::array({{{"op", "add"}, {"path", join(tokens, i + 1)}, {"value", value}}});
    }
    at = &*it;
  }
  // Present: "replace" says so (an "add" would replace it as well).
  return json::array(
      {{{"op", "replace"}, {"path", join(tokens, tokens.size())}, {"value", value}}});
}

}  // namespace gpuaas::bridge::pointer
