// Reading typed fields out of YAML with positions: every wrong type, unknown field or bad value is
// reported at its FILE:LINE:COLUMN and reading goes on, so one run lists every mistake.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuaas/policy/policy_loader.hpp"

namespace gpuaas::policy::detail {

// Where every reader reports.
struct Diagnostics {
  std::vector<Diagnostic> errors;
  std::vector<Diagnostic> warnings;
  void error(SourceRef at, std::string message) {
    errors.push_back({std::move(at), std::move(message)});
  }
  void warning(SourceRef at, std::string message) {
    warnings.push_back({std::move(at), std::move(message)});
  }
};

// How a known field is treated.
enum class Use {
  kRead,        // the caller reads it
  kNotActedOn,  // Kueue's, understood but not enforced by gpuaas: a warning with the reason
  kIgnored,     // metadata that carries no policy (uid, labels, ...): silently accepted
};
struct FieldRule {
  const char* name;
  Use use = Use::kRead;
  const char* why = "";  // kNotActedOn: why gpuaas does not act on it
};

// One field as written.
struct Field {
  std::string name;
  std::string path;  // "spec.resourceGroups[0].flavors", for messages
  YAML::Node key;
  YAML::Node value;
};

// The fields of one mapping that passed the rules (null values count as absent, as in the
// Kubernetes API).
class Fields {
 public:
  const Field* get(std::string_view name) const;
  bool has(std::string_view name) const { return get(name) != nullptr; }
  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  bool is_map() const { return is_map_; }
  // An unknown field was written here: a "missing" error for a required field would likely
  // repeat the same mistake (a typo of its name).
  bool had_unknown() const { return had_unknown_; }

 private:
  friend class Reader;
  std::string path_;
  YAML::Node node_;
  bool is_map_ = false;
  bool had_unknown_ = false;
  std::vector<Field> fields_;
};

// Reads one file's documents.
class Reader {
 public:
  Reader(std::string file, Diagnostics& diagnostics) : file_(std::move(file)), diag_(diagnostics) {}

  const std::string& file() const { return file_; }
  // The line in the file where the document being read starts (0-based): yaml-cpp's marks count
  // from the document's own text.
  void set_line_offset(int lines) { line_offset_ = lines; }
  SourceRef at(const YAML::Node& n) const;
  // Where a field was written: its value, or its key when the value has no position.
  SourceRef at(const Field& f) const;
  void error(const SourceRef& at, std::string message) { diag_.error(at, std::move(message)); }
  void warning(const SourceRef& at, std::string message) { diag_.warning(at, std::move(message)); }
  // A required field is absent from `in`: an error unless an unknown field already explains it.
  void missing(const Fields& in, const SourceRef& at, std::string message) {
    if (!in.had_unknown()) error(at, std::move(message));
  }
  Diagnostics& diagnostics() { return diag_; }

  // The fields of `node` checked against `rules`: unknown and repeated fields are errors at
  // their key, kNotActedOn ones warnings. A `node` that is not a mapping is an error (null is an
  // empty mapping).
  Fields fields(const YAML::Node& node, const std::string& path,
                std::initializer_list<FieldRule> rules);
  Fields fields(const Field& f, std::initializer_list<FieldRule> rules) {
    return fields(f.value, f.path, rules);
  }

  // Typed values; each reports a wrong type at the value and returns nullopt.
  std::optional<std::string> string(const Field& f);
  std::optional<int64_t> quantity(const Field& f);  // milli-units
  std::optional<int64_t> integer(const Field& f, int64_t min, int64_t max);
  std::optional<bool> boolean(const Field& f);
  std::optional<std::chrono::seconds> duration(const Field& f);
  // One of `choices` (name, value); the message lists the allowed names.
  template <typename E>
  std::optional<E> choice(const Field& f, std::initializer_list<std::pair<const char*, E>> choices);
  // Items of a sequence, each with its path ("flavors[2]").
  std::vector<Field> items(const Field& f);
  std::vector<std::string> strings(const Field& f);
  // A mapping of strings to strings (nodeLabels, matchLabels).
  std::vector<std::pair<Field, std::string>> string_map(const Field& f);

 private:
  bool scalar(const Field& f, const char* what);
  void bad_choice(const Field& f, const std::vector<const char*>& names);
  std::string file_;
  Diagnostics& diag_;
  int line_offset_ = 0;
};

// Shown in messages: the value as written, quoted.
std::string in_quotes(const std::string& s);
// Kubernetes object names (DNS-1123 subdomain) and namespaces (DNS-1123 label).
bool is_dns_subdomain(const std::string& s);
bool is_dns_label(const std::string& s);

template <typename E>
std::optional<E> Reader::choice(const Field& f,
                                std::initializer_list<std::pair<const char*, E>> choices) {
  auto s = string(f);
  if (!s) return std::nullopt;
  std::vector<const char*> names;
  for (const auto& [name, value] : choices) {
    if (*s == name) return value;
    names.push_back(name);
  }
  bad_choice(f, names);
  return std::nullopt;
}

}  // namespace gpuaas::policy::detail
