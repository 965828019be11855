#include "gpuaas/kube/manifest_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace gpuaas::kube {
namespace {

using nlohmann::json;

std::string at(const std::string& origin, const YAML::Mark& m) {
  return origin + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

// YAML 1.2 core schema for plain scalars; quoted scalars are always strings.
json scalar(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  int64_t i = 0;
  const char* b = s.data() + (s[0] == '+' ? 1 : 0);
  const char* e = s.data() + s.size();
  if (auto [p, ec] = std::from_chars(b, e, i); ec == std::errc() && p == e) return i;
  bool numeric = s.find_first_not_of("+-0123456789.eE") == std::string::npos &&
                 s.find_first_of("0123456789") != std::string::npos;
  double d = 0;
  if (numeric) {
    if (auto [p, ec] = std::from_chars(b, e, d); ec == std::errc() && p == e) return d;
  }
  if (s == ".inf" || s == ".Inf" || s == "+.inf") return std::numeric_limits<double>::infinity();
  return s;
}

json to_json(const YAML::Node& n, const std::string& origin, int depth = 0) {
  if (depth > 100) throw YAML::ParserException(n.Mark(), "nested too deeply");
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar(n);
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& x : n) a.push_back(to_json(x, origin, depth + 1));
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) {
          throw YAML::ParserException(kv.first.Mark(), "mapping keys must be strings");
        }
        o[kv.first.Scalar()] = to_json(kv.second, origin, depth + 1);
      }
      return o;
    }
  }
  return nullptr;
}

Status add_object(json obj, const std::string& where, std::vector<Manifest>& out) {
  if (obj.is_null()) return Status::ok();  // an empty document, as kubectl skips it
  if (!obj.is_object()) return Status::invalid(where + ": a document must be a mapping");
  if (obj.value("kind", "") == "List" && obj.contains("items")) {
    for (auto& item : obj["items"]) {
      if (auto s = add_object(std::move(item), where, out); !s) return s;
    }
    return Status::ok();
  }
  for (const char* field : {"apiVersion", "kind"}) {
    if (!obj.contains(field) || !obj[field].is_string() || obj[field].get<std::string>().empty()) {
      return Status::invalid(where + ": " + field + " is missing");
    }
  }
  const auto has = [&](const char* f) {
    return obj.contains("metadata") && obj["metadata"].is_object() && obj["metadata"].contains(f) &&
           obj["metadata"][f].is_string() && !obj["metadata"][f].get<std::string>().empty();
  };
  if (!has("name") && !has("generateName")) {
    return Status::invalid(where + ": metadata.name is missing");
  }
  out.push_back({obj.dump(), where});
  return Status::ok();
}

}  // namespace

Result<std::string> yaml_to_json(const YAML::Node& node) {
  try {
    return to_json(node, "").dump();
  } catch (const YAML::Exception& e) {
    return Status::invalid(std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

Result<std::string> read_input(const std::string& path) {
  std::stringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
  } else {
    std::ifstream f(path, std::ios::binary);
    if (!f) return Status::invalid(path + ": cannot read the file");
    ss << f.rdbuf();
  }
  return ss.str();
}

Result<std::vector<Manifest>> parse_manifests(const std::string& text, const std::string& origin) {
  std::vector<Manifest> out;
  // JSON first: kubectl get -o json output, possibly several objects in a row.
  auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    std::size_t pos = first;
    while (pos < text.size()) {
      json j;
      std::size_t consumed = 0;
      try {
        // Parse one value from the stream and find where it ended.
        std::string_view rest(text.data() + pos, text.size() - pos);
        std::istringstream is{std::string(rest)};
        is >> j;
        auto end = is.tellg();
        consumed = end < 0 ? rest.size() : static_cast<std::size_t>(end);
      } catch (const json::parse_error& e) {
        return Status::invalid(origin + ": byte " + std::to_string(pos + e.byte) +
                               ": invalid JSON: " + e.what());
      }
      if (auto s = add_object(std::move(j), origin + ":byte " + std::to_string(pos), out); !s) {
        return s;
      }
      pos += consumed;
      pos = text.find_first_not_of(" \t\r\n", pos);
      if (pos == std::string::npos) break;
    }
    return out;
  }
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(text);
    for (const auto& d : docs) {
      std::string where = at(origin, d.Mark());
      if (auto s = add_object(to_json(d, origin), where, out); !s) return s;
    }
  } catch (const YAML::Exception& e) {
    return Status::invalid(at(origin, e.mark) + ": " + e.msg);
  }
  return out;
}

Result<std::vector<Manifest>> read_manifests(const std::string& path) {
  auto text = read_input(path);
  if (!text) return text.status();
  return parse_manifests(*text, path == "-" ? "<stdin>" : path);
}

}  // namespace gpuaas::kube
