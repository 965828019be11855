// Files to documents to typed objects: reads each file (a directory stands for its YAML files),
// sends each document to its kind's reader by apiVersion, then validates the set as a whole.
#include "gpuaas/policy/policy_loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "parsed_set.hpp"

namespace gpuaas::policy {

std::string Diagnostic::str() const { return at.str() + ": " + message; }

namespace detail {

SpecDocument read_spec_document(Reader& r, const Document& doc,
                                std::initializer_list<FieldRule> spec_rules) {
  auto top = r.fields(doc.node, "", {{"apiVersion"}, {"kind"}, {"metadata"}, {"spec"}});
  SpecDocument d;
  d.meta = read_metadata(r, doc, top, false);
  if (const auto* spec = top.get("spec")) d.spec = r.fields(*spec, spec_rules);
  return d;
}

ObjectMeta read_metadata(Reader& r, const Document& doc, const Fields& top, bool namespaced) {
  ObjectMeta m;
  m.name_at = r.at(doc.node);
  const auto* meta = top.get("metadata");
  if (meta == nullptr) {
    r.error(m.name_at, doc.kind + " has no metadata.name");
    return m;
  }
  // What `kubectl get -o yaml` adds carries no policy: accepted and ignored.
  auto mf = r.fields(*meta, {{"name"},
                             {"namespace"},
                             {"labels", Use::kIgnored},
                             {"annotations", Use::kIgnored},
                             {"uid", Use::kIgnored},
                             {"resourceVersion", Use::kIgnored},
                             {"generation", Use::kIgnored},
                             {"creationTimestamp", Use::kIgnored},
                             {"deletionTimestamp", Use::kIgnored},
                             {"deletionGracePeriodSeconds", Use::kIgnored},
                             {"finalizers", Use::kIgnored},
                             {"ownerReferences", Use::kIgnored},
                             {"managedFields", Use::kIgnored},
                             {"generateName", Use::kIgnored},
                             {"selfLink", Use::kIgnored}});
  if (!mf.is_map()) return m;
  if (const auto* name = mf.get("name")) {
    if (auto s = r.string(*name)) {
      m.name = *s;
      m.name_at = r.at(*name);
      m.ok = true;  // an ill-formed name is reported, but the object still takes part in checks
      if (!is_dns_subdomain(m.name)) {
        r.error(m.name_at, "metadata.name " + in_quotes(m.name) +
                               " is not a valid name: lowercase letters, digits, '-' and '.', "
                               "starting and ending with a letter or digit");
      }
    }
  } else {
    r.missing(mf, r.at(meta->key), "metadata.name is missing");
  }
  const auto* ns = mf.get("namespace");
  if (namespaced) {
    if (ns == nullptr) {
      r.error(r.at(meta->key),
              "metadata.namespace is missing: a " + doc.kind + " belongs to a namespace");
    } else if (auto s = r.string(*ns)) {
      m.namespace_ = *s;
      m.namespace_at = r.at(*ns);
      if (!is_dns_label(*s)) {
        r.error(m.namespace_at,
                "metadata.namespace " + in_quotes(*s) + " is not a valid namespace");
      }
    }
  } else if (ns != nullptr) {
    r.warning(r.at(ns->key), "metadata.namespace is ignored: a " + doc.kind + " is cluster-scoped");
  }
  return m;
}

namespace {

namespace fs = std::filesystem;

void parse_document(Reader& r, const YAML::Node& node, ParsedSet& out) {
  if (node.IsNull()) return;  // "---" with nothing after it
  if (!node.IsMap()) {
    r.error(r.at(node), "a policy document must be a mapping (apiVersion, kind, metadata, ...)");
    return;
  }
  Document doc{node, "", ""};
  const YAML::Node api = node["apiVersion"];
  const YAML::Node kind = node["kind"];
  if (!api.IsDefined() || !api.IsScalar() || api.Scalar().empty()) {
    r.error(r.at(node), "apiVersion is missing");
    return;
  }
  if (!kind.IsDefined() || !kind.IsScalar() || kind.Scalar().empty()) {
    r.error(r.at(node), "kind is missing");
    return;
  }
  doc.kind = kind.Scalar();
  const std::string& api_version = api.Scalar();
  const size_t slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  doc.version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  if (group == "kueue.x-k8s.io") {
    if (doc.version == "v1beta1" || doc.version == "v1beta2")
      return parse_kueue_object(r, doc, out);
    r.error(r.at(api), "apiVersion " + api_version +
                           " is not supported: write kueue.x-k8s.io/v1beta1 or v1beta2");
    return;
  }
  if (group == "gpuaas.io") return parse_gpuaas_object(r, doc, out);
  r.error(r.at(kind), "kind " + doc.kind + " (" + api_version +
                          ") is not a policy kind: policy files hold Kueue's kinds "
                          "(kueue.x-k8s.io) and gpuaas.io/v1alpha1 AdmissionPolicy");
}

// One YAML document of a file: its text, and the line it starts on (marks are offset by it; the
// text is not padded with newlines to keep them, which made loading quadratic in documents).
struct DocumentText {
  int first_line = 0;  // 0-based
  std::string text;
  int content_line = -1;  // the first line holding more than markers and comments
};

bool starts_marker(std::string_view line, std::string_view marker) {
  return line.substr(0, 3) == marker && (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
}

// yaml-cpp 0.7's LoadAll never returns on some malformed input (a line holding only ","): it
// keeps yielding empty documents for a token it never consumes, and memory grows. So documents
// are split here at their markers ("---" starts one, "..." ends one) and each is loaded alone.
std::vector<DocumentText> split_documents(const std::string& text) {
  std::vector<DocumentText> docs(1);
  int line_no = 0;
  for (std::size_t pos = 0; pos < text.size(); ++line_no) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    if (starts_marker(line, "---")) docs.push_back({line_no, std::string(), -1});
    docs.back().text.append(line).push_back('\n');
    std::size_t first = line.find_first_not_of(" \t\r");
    bool content = first != std::string_view::npos && line[first] != '#' &&
                   !starts_marker(line, "---") && !starts_marker(line, "...") && line[0] != '%';
    if (content && docs.back().content_line < 0) docs.back().content_line = line_no;
    if (starts_marker(line, "...")) docs.push_back({line_no + 1, std::string(), -1});
  }
  return docs;
}

SourceRef mark_at(const std::string& file, const YAML::Mark& m, int first_line) {
  return {file, std::max(first_line + m.line + 1, 1), std::max(m.column + 1, 1)};
}

void parse_text(const std::string& file, const std::string& text, ParsedSet& out, Diagnostics& d) {
  std::vector<std::pair<YAML::Node, int>> docs;  // each with its first line
  for (auto& part : split_documents(text)) {
    YAML::Node doc;
    try {
      doc = YAML::Load(part.text);
    } catch (const YAML::Exception& e) {
      d.error(mark_at(file, e.mark, e.mark.line < 0 ? 0 : part.first_line),
              "YAML syntax error: " + e.msg);
      out.incomplete = true;
      return;
    }
    if (doc.IsNull() && part.content_line >= 0) {
      // yaml-cpp read nothing although the document holds something (a stray ","): never let
      // a policy silently lose what follows.
      d.error({file, part.content_line + 1, 1}, "YAML syntax error: no value can be read here");
      out.incomplete = true;
      return;
    }
    std::string().swap(part.text);
    docs.emplace_back(std::move(doc), part.first_line);
  }
  Reader r(file, d);
  for (const auto& [doc, first_line] : docs) {
    r.set_line_offset(first_line);
    try {
      parse_document(r, doc, out);
    } catch (const YAML::Exception& e) {
      // yaml-cpp throws on shapes the readers did not foresee; report, do not crash.
      d.error(mark_at(file, e.mark, e.mark.line < 0 ? 0 : first_line),
              "cannot read this document: " + e.msg);
      out.incomplete = true;
    }
  }
}

// Errors and warnings in file order, then line, then column; a file's own order is kept within.
void sort_by_place(std::vector<Diagnostic>& v, const std::vector<std::string>& order) {
  auto index = [&](const std::string& file) {
    return std::find(order.begin(), order.end(), file) - order.begin();
  };
  std::stable_sort(v.begin(), v.end(), [&](const Diagnostic& a, const Diagnostic& b) {
    auto ka = std::tuple(index(a.at.file), a.at.line, a.at.column);
    auto kb = std::tuple(index(b.at.file), b.at.line, b.at.column);
    return ka < kb;
  });
}

LoadResult finish(ParsedSet& parsed, Diagnostics& d, const std::vector<std::string>& order) {
  LoadResult result;
  result.set = validate_policy_set(parsed, d);
  sort_by_place(d.errors, order);
  sort_by_place(d.warnings, order);
  result.errors = std::move(d.errors);
  result.warnings = std::move(d.warnings);
  return result;
}

bool is_yaml_name(const fs::path& p) { return p.extension() == ".yaml" || p.extension() == ".yml"; }

}  // namespace
}  // namespace detail

LoadResult parse_policy_texts(const std::vector<std::pair<std::string, std::string>>& texts) {
  detail::ParsedSet parsed;
  detail::Diagnostics d;
  std::vector<std::string> order;
  for (const auto& [file, text] : texts) {
    order.push_back(file);
    parsed.files.push_back(file);
    detail::parse_text(file, text, parsed, d);
  }
  return detail::finish(parsed, d, order);
}

LoadResult load_policy_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  detail::ParsedSet parsed;
  detail::Diagnostics d;
  std::vector<std::string> order;
  auto read = [&](const std::string& file) {
    order.push_back(file);
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) {
      d.error({file, 0, 0}, std::string("cannot read the file: ") + std::strerror(errno));
      parsed.incomplete = true;
      return;
    }
    parsed.files.push_back(file);
    detail::parse_text(file, text.str(), parsed, d);
  };
  for (const auto& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      read(path);
      continue;
    }
    std::vector<std::string> found;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec) && detail::is_yaml_name(it->path())) {
        found.push_back(it->path().string());
      }
    }
    if (ec) {
      order.push_back(path);
      d.error({path, 0, 0}, "cannot list the directory: " + ec.message());
      parsed.incomplete = true;
      continue;
    }
    std::sort(found.begin(), found.end());
    if (found.empty()) {
      order.push_back(path);
      d.warning({path, 0, 0}, "the directory holds no .yaml or .yml files");
    }
    for (const auto& file : found) read(file);
  }
  return detail::finish(parsed, d, order);
}

}  // namespace gpuaas::policy
