#include "yaml_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "gpuaas/base/quantity.hpp"

namespace gpuaas::policy::detail {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Levenshtein distance, case-insensitive: "nominalQuta" is one edit from "nominalQuota".
size_t edit_distance(const std::string& a0, const std::string& b0) {
  const std::string a = lower(a0), b = lower(b0);
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string unknown_field_message(const std::string& name, const std::string& path,
                                  std::initializer_list<FieldRule> rules) {
  std::string m = "unknown field " + in_quotes(name);
  if (!path.empty()) m += " in " + path;
  const FieldRule* best = nullptr;
  size_t best_distance = 3;  // suggest only near misses
  for (const auto& r : rules) {
    if (r.use == Use::kIgnored) continue;
    size_t d = edit_distance(name, r.name);
    if (d < best_distance) best = &r, best_distance = d;
  }
  if (best != nullptr) return m + "; did you mean " + in_quotes(best->name) + "?";
  std::string known;
  for (const auto& r : rules) {
    if (r.use == Use::kIgnored) continue;
    known += known.empty() ? "" : ", ";
    known += r.name;
  }
  return known.empty() ? m : m + " (known fields: " + known + ")";
}

bool is_plain(const YAML::Node& n) { return n.Tag() == "?"; }

bool is_label_part(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

}  // namespace

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

bool is_dns_label(const std::string& s) { return is_label_part(s); }

bool is_dns_subdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  std::string_view rest = s;
  while (true) {
    size_t dot = rest.find('.');
    if (!is_label_part(rest.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    rest.remove_prefix(dot + 1);
  }
}

const Field* Fields::get(std::string_view name) const {
  for (const auto& f : fields_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

SourceRef Reader::at(const YAML::Node& n) const {
  if (!n.IsDefined() || n.Mark().line < 0) return {file_, 1, 1};
  return {file_, line_offset_ + n.Mark().line + 1, n.Mark().column + 1};
}

SourceRef Reader::at(const Field& f) const {
  // A value written nowhere (null, or an item built by items()) has no useful mark of its own.
  if (f.value.IsDefined() && !f.value.IsNull() && f.value.Mark().line >= 0) return at(f.value);
  return at(f.key);
}

Fields Reader::fields(const YAML::Node& node, const std::string& path,
                      std::initializer_list<FieldRule> rules) {
  Fields out;
  out.path_ = path;
  out.node_ = node;
  if (!node.IsDefined() || node.IsNull()) {
    out.is_map_ = true;
    return out;
  }
  if (!node.IsMap()) {
    error(at(node), (path.empty() ? std::string("a policy document") : path) +
                        " must be a mapping (field: value)");
    return out;
  }
  out.is_map_ = true;
  std::vector<std::pair<std::string, SourceRef>> seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) {
      error(at(key), "a field name must be a string");
      continue;
    }
    const std::string& name = key.Scalar();
    const std::string field_path = path.empty() ? name : path + "." + name;
    auto rule = std::find_if(rules.begin(), rules.end(),
                             [&](const FieldRule& r) { return name == r.name; });
    if (rule == rules.end()) {
      error(at(key), unknown_field_message(name, path, rules));
      out.had_unknown_ = true;
      continue;
    }
    auto first =
        std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == name; });
    if (first != seen.end()) {
      error(at(key), field_path + " is written twice (first at " + first->second.str() + ")");
      continue;
    }
    seen.emplace_back(name, at(key));
    if (rule->use == Use::kIgnored) continue;
    if (rule->use == Use::kNotActedOn) {
      warning(at(key), field_path + " is not acted on by gpuaas: " + rule->why);
      continue;
    }
    if (entry.second.IsNull()) continue;
    out.fields_.push_back({name, field_path, key, entry.second});
  }
  return out;
}

bool Reader::scalar(const Field& f, const char* what) {
  if (f.value.IsScalar()) return true;
  error(at(f), f.path + " must be " + what);
  return false;
}

std::optional<std::string> Reader::string(const Field& f) {
  if (!scalar(f, "a string")) return std::nullopt;
  return f.value.Scalar();
}

std::optional<int64_t> Reader::quantity(const Field& f) {
  if (!scalar(f, "a quantity (like 4, 500m or 16Gi)")) return std::nullopt;
  auto milli = parse_quantity_milli(f.value.Scalar());
  if (!milli) {
    error(at(f), f.path + ": " + in_quotes(f.value.Scalar()) +
                     " is not a quantity (like 4, 500m or 16Gi)");
  }
  return milli;
}

std::optional<int64_t> Reader::integer(const Field& f, int64_t min, int64_t max) {
  if (!scalar(f, "an integer")) return std::nullopt;
  const std::string& s = f.value.Scalar();
  if (!is_plain(f.value)) {
    error(at(f), f.path + " must be an integer, not the string " + in_quotes(s));
    return std::nullopt;
  }
  int64_t v = 0;
  const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && (v < min || v > max))) {
    error(at(f), f.path + ": " + s + " is out of range (" + std::to_string(min) + " to " +
                     std::to_string(max) + ")");
    return std::nullopt;
  }
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
    error(at(f), f.path + ": " + in_quotes(s) + " is not an integer");
    return std::nullopt;
  }
  return v;
}

std::optional<bool> Reader::boolean(const Field& f) {
  if (!scalar(f, "true or false")) return std::nullopt;
  const std::string s = f.value.Scalar();
  if (is_plain(f.value)) {
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  error(at(f), f.path + ": " + in_quotes(s) + " is not true or false");
  return std::nullopt;
}

std::optional<std::chrono::seconds> Reader::duration(const Field& f) {
  if (!scalar(f, "a duration (like 90s, 5m or 1h30m)")) return std::nullopt;
  auto d = parse_duration(f.value.Scalar());
  if (!d) {
    error(at(f), f.path + ": " + in_quotes(f.value.Scalar()) +
                     " is not a duration (like 90s, 5m or 1h30m; whole seconds, not negative)");
  }
  return d;
}

std::vector<Field> Reader::items(const Field& f) {
  std::vector<Field> out;
  if (!f.value.IsSequence()) {
    error(at(f), f.path + " must be a list");
    return out;
  }
  for (size_t i = 0; i < f.value.size(); ++i) {
    std::string index = "[" + std::to_string(i) + "]";
    out.push_back({f.name + index, f.path + index, f.value[i], f.value[i]});
  }
  return out;
}

std::vector<std::string> Reader::strings(const Field& f) {
  std::vector<std::string> out;
  for (const auto& item : items(f)) {
    if (auto s = string(item)) out.push_back(*s);
  }
  return out;
}

std::vector<std::pair<Field, std::string>> Reader::string_map(const Field& f) {
  std::vector<std::pair<Field, std::string>> out;
  if (!f.value.IsMap()) {
    error(at(f), f.path + " must be a mapping (name: value)");
    return out;
  }
  for (const auto& entry : f.value) {
    if (!entry.first.IsScalar()) {
      error(at(entry.first), f.path + ": a name must be a string");
      continue;
    }
    Field item{entry.first.Scalar(), f.path + "." + entry.first.Scalar(), entry.first,
               entry.second};
    if (entry.second.IsNull()) {
      out.emplace_back(item, "");
    } else if (auto v = string(item)) {
      out.emplace_back(item, *v);
    }
  }
  return out;
}

void Reader::bad_choice(const Field& f, const std::vector<const char*>& names) {
  std::string allowed;
  for (size_t i = 0; i < names.size(); ++i) {
    allowed += i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ");
    allowed += names[i];
  }
  error(at(f), f.path + ": " + in_quotes(f.value.Scalar()) + " is not one of " + allowed);
}

}  // namespace gpuaas::policy::detail
