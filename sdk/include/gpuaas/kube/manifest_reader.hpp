// Kubernetes manifests as kubectl reads them: YAML or JSON, one or many documents ('---'),
// empty documents skipped, a `kind: List` expanded into its items.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpuaas/base/status.hpp"

namespace YAML {
class Node;
}

namespace gpuaas::kube {

struct Manifest {
  std::string json;    // the object, compact JSON
  std::string origin;  // "FILE:LINE" of the document, for messages
};

// path "-" reads standard input. Errors name FILE:LINE:COLUMN.
Result<std::vector<Manifest>> read_manifests(const std::string& path);
Result<std::vector<Manifest>> parse_manifests(const std::string& text, const std::string& origin);

// A YAML value as compact JSON, with YAML 1.2 core-schema scalars (plugin settings in the
// daemon's configuration). Throws nothing; errors name the position.
Result<std::string> yaml_to_json(const YAML::Node& node);

// Reads a whole file ("-": standard input).
Result<std::string> read_input(const std::string& path);

// Where JSON text, read from `from`, first nests deeper than `limit` (brackets outside strings),
// or npos: nlohmann's parser has no bound, and what walks a value afterwards recurses.
std::size_t json_too_deep_at(std::string_view text, std::size_t from, int limit);

}  // namespace gpuaas::kube
