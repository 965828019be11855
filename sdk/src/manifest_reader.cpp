#include "gpuaas/kube/manifest_reader.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

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

// A value's bytes must be UTF-8: JSON holds nothing else, and the daemon refuses it anyway.
// Returns the offset of the first bad byte, or npos.
std::size_t bad_utf8_at(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80           ? 1
                          : (c >> 5) == 0x6  ? 2
                          : (c >> 4) == 0xE  ? 3
                          : (c >> 3) == 0x1E ? 4
                                             : 0;
    if (n == 0 || i + n > s.size()) return i;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
      const auto x = static_cast<unsigned char>(s[i + k]);
      if ((x & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (x & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8 either.
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
    i += n;
  }
  return std::string_view::npos;
}

const std::string& checked_text(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (const auto bad = bad_utf8_at(s); bad != std::string_view::npos)
    throw YAML::ParserException(
        n.Mark(), "invalid UTF-8 at byte " + std::to_string(bad + 1) + " of this value");
  return s;
}

// Converts a document, counting what it emits: yaml-cpp shares an anchored node among its
// aliases, so a few hundred bytes can stand for billions of nodes (an "alias bomb"). As
// Kubernetes' reader (sigs.k8s.io/yaml, go-yaml) does, a document whose nodes are mostly copies
// through aliases is refused, and so is any document past a fixed number of nodes.
class Converter {
 public:
  static constexpr int kMaxDepth = 100;
  static constexpr int64_t kMaxNodes = 1'000'000;

  json convert(const YAML::Node& n) { return walk(n, 0, false); }

 private:
  // go-yaml's allowedAliasRatio: 99% up to 400,000 nodes, 10% from 4,000,000, linear between.
  static double allowed_alias_ratio(int64_t decoded) {
    if (decoded <= 400'000) return 0.99;
    if (decoded >= 4'000'000) return 0.10;
    return 0.99 - 0.89 * (static_cast<double>(decoded - 400'000) / 3'600'000.0);
  }

  void count(const YAML::Node& n, bool aliased) {
    ++decoded_;
    if (aliased) ++aliased_;
    if (decoded_ > kMaxNodes)
      throw YAML::ParserException(
          n.Mark(), "the document has more than " + std::to_string(kMaxNodes) + " values");
    if (aliased_ > 100 && decoded_ > 1000 &&
        static_cast<double>(aliased_) / static_cast<double>(decoded_) >
            allowed_alias_ratio(decoded_))
      throw YAML::ParserException(n.Mark(), "the document contains excessive aliasing");
  }

  json walk(const YAML::Node& n, int depth, bool aliased) {
    if (depth > kMaxDepth) throw YAML::ParserException(n.Mark(), "nested too deeply");
    // An aliased node is the anchored one: it is met again at the same place in the text.
    if (n.Type() != YAML::NodeType::Null && n.Type() != YAML::NodeType::Undefined &&
        n.Mark().pos >= 0 && !seen_.insert({n.Mark().pos, static_cast<int>(n.Type())}).second)
      aliased = true;
    count(n, aliased);
    switch (n.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return nullptr;
      case YAML::NodeType::Scalar:
        checked_text(n);
        return scalar(n);
      case YAML::NodeType::Sequence: {
        json a = json::array();
        for (const auto& x : n) a.push_back(walk(x, depth + 1, aliased));
        return a;
      }
      case YAML::NodeType::Map: {
        json o = json::object();
        for (const auto& kv : n) {
          if (!kv.first.IsScalar()) {
            throw YAML::ParserException(kv.first.Mark(), "mapping keys must be strings");
          }
          count(kv.first, aliased);
          o[checked_text(kv.first)] = walk(kv.second, depth + 1, aliased);
        }
        return o;
      }
    }
    return nullptr;
  }

  int64_t decoded_ = 0, aliased_ = 0;
  std::set<std::pair<int, int>> seen_;  // (offset in the text, node type) of nodes met
};

json to_json(const YAML::Node& n) { return Converter().convert(n); }

// "FILE:LINE:COLUMN" of a byte offset in the text.
std::string at_offset(const std::string& origin, std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const auto before = text.substr(0, offset);
  const auto line = std::count(before.begin(), before.end(), '\n') + 1;
  const auto last_nl = before.rfind('\n');
  const auto column = offset - (last_nl == std::string_view::npos ? 0 : last_nl + 1) + 1;
  return origin + ":" + std::to_string(line) + ":" + std::to_string(column);
}

Status add_object(json obj, const std::string& where, std::vector<Manifest>& out) {
  if (obj.is_null()) return Status::ok();  // an empty document, as kubectl skips it
  if (!obj.is_object()) return Status::invalid(where + ": a document must be a mapping");
  if (obj.contains("kind") && obj["kind"] == "List" && obj.contains("items")) {
    if (!obj["items"].is_array()) return Status::invalid(where + ": a List's items must be a list");
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
    return to_json(node).dump();
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
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      return Status::invalid(path + ": is a directory (name the files in it)");
    std::ifstream f(path, std::ios::binary);
    if (!f) return Status::invalid(path + ": cannot read the file");
    ss << f.rdbuf();
    if (f.bad()) return Status::invalid(path + ": cannot read the file");
  }
  return ss.str();
}

std::size_t json_too_deep_at(std::string_view s, std::size_t from, int limit) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = from; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if ((c == '[' || c == '{') && ++depth > limit) {
      return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

Result<std::vector<Manifest>> parse_manifests(const std::string& text, const std::string& origin) {
  std::vector<Manifest> out;
  // JSON first: kubectl get -o json output, possibly several objects in a row.
  auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    if (const auto deep = json_too_deep_at(text, first, Converter::kMaxDepth);
        deep != std::string_view::npos)
      return Status::invalid(at_offset(origin, text, deep) + ": nested more than " +
                             std::to_string(Converter::kMaxDepth) + " levels");
    std::istringstream is(text);  // one stream: each object is read from where the last ended
    std::size_t pos = first;
    while (pos < text.size()) {
      json j;
      try {
        is.clear();
        is.seekg(static_cast<std::streamoff>(pos));
        is >> j;
      } catch (const json::parse_error& e) {
        return Status::invalid(at_offset(origin, text, pos + e.byte - 1) +
                               ": invalid JSON: " + e.what());
      }
      const auto end = is.tellg();
      const std::size_t next = end < 0 ? text.size() : static_cast<std::size_t>(end);
      if (auto s = add_object(std::move(j), at_offset(origin, text, pos), out); !s) return s;
      pos = text.find_first_not_of(" \t\r\n", std::max(next, pos + 1));
      if (pos == std::string::npos) break;
    }
    return out;
  }
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(text);
    for (const auto& d : docs) {
      std::string where = at(origin, d.Mark());
      if (auto s = add_object(to_json(d), where, out); !s) return s;
    }
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard says only "bad file".
    return Status::invalid(at(origin, e.mark) + ": nested more than " +
                           std::to_string(Converter::kMaxDepth) + " levels");
  } catch (const YAML::Exception& e) {
    return Status::invalid(at(origin, e.mark) + ": " + e.msg);
  } catch (const json::exception& e) {
    return Status::invalid(origin + ": " + e.what());
  }
  return out;
}

Result<std::vector<Manifest>> read_manifests(const std::string& path) {
  auto text = read_input(path);
  if (!text) return text.status();
  return parse_manifests(*text, path == "-" ? "<stdin>" : path);
}

}  // namespace gpuaas::kube
