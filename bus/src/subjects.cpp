#include "gpuaas/bus/subjects.hpp"

#include <array>
#include <utility>

namespace gpuaas::bus {
namespace {

constexpr std::array<std::pair<SubjectCategory, std::string_view>, 8> kCategories{{
    {SubjectCategory::kEvents, "events"},
    {SubjectCategory::kMetrics, "metrics"},
    {SubjectCategory::kTicks, "ticks"},
    {SubjectCategory::kActions, "actions"},
    {SubjectCategory::kStatus, "status"},
    {SubjectCategory::kDeadletter, "deadletter"},
    {SubjectCategory::kApi, "api"},
    {SubjectCategory::kSubmissions, "submissions"},
}};

std::string_view category_name(SubjectCategory c) {
  for (const auto& [cat, name] : kCategories) {
    if (cat == c) return name;
  }
  return "";
}

std::string join(std::string_view a, std::string_view b, std::string_view c = {},
                 std::string_view d = {}) {
  std::string s;
  s.reserve(a.size() + b.size() + c.size() + d.size() + 3);
  s.append(a).append(".").append(b);
  if (!c.empty()) s.append(".").append(c);
  if (!d.empty()) s.append(".").append(d);
  return s;
}

}  // namespace

Subjects::Subjects(std::string root) : prefix_(std::move(root) + ".v1") {}

std::string_view Subjects::namespace_token(std::string_view ns) {
  return ns.empty() ? kClusterScope : ns;
}

bool Subjects::valid_token(std::string_view token) {
  if (token.empty()) return false;
  for (char ch : token) {
    if (ch == '.' || ch == '*' || ch == '>' || ch == ' ' || ch == '\t' || ch == '\r' ||
        ch == '\n' || static_cast<unsigned char>(ch) < 0x20) {
      return false;
    }
  }
  return true;
}

std::string Subjects::events(std::string_view ns, std::string_view kind) const {
  return join(prefix_, "events", namespace_token(ns), kind);
}
std::string Subjects::submissions(std::string_view ns, std::string_view kind) const {
  return join(prefix_, "submissions", namespace_token(ns), kind);
}
std::string Subjects::metrics(std::string_view ns) const {
  return join(prefix_, "metrics", namespace_token(ns));
}
std::string Subjects::ticks() const { return join(prefix_, "ticks"); }
std::string Subjects::actions(std::string_view ns, std::string_view kind) const {
  return join(prefix_, "actions", namespace_token(ns), kind);
}
std::string Subjects::status(std::string_view ns, std::string_view kind) const {
  return join(prefix_, "status", namespace_token(ns), kind);
}
std::string Subjects::deadletter(std::string_view ns) const {
  return join(prefix_, "deadletter", namespace_token(ns));
}
std::string Subjects::api(std::string_view endpoint) const {
  return join(prefix_, "api", endpoint);
}

std::string Subjects::api(std::string_view endpoint, std::string_view ns) const {
  return join(prefix_, "api", endpoint, namespace_token(ns));
}

std::string Subjects::unanswerable_reply(std::string_view reply) const {
  if (reply.empty()) return "no reply subject";
  if (reply.size() > 256) return "a reply subject longer than 256 bytes";
  std::size_t token = 0;
  for (std::size_t i = 0; i <= reply.size(); ++i) {
    if (i == reply.size() || reply[i] == '.') {
      if (i == token) return "an empty token in the reply subject";
      std::string_view t = reply.substr(token, i - token);
      if (t == "*" || t == ">") return "a wildcard in the reply subject";
      token = i + 1;
      continue;
    }
    const auto c = static_cast<unsigned char>(reply[i]);
    if (c <= 0x20 || c >= 0x7f) return "a reply subject that is not printable ASCII";
  }
  if (reply.front() == '$') return "a reply subject in the server's own '$' namespace";
  const std::string_view root = std::string_view(prefix_).substr(0, prefix_.rfind('.'));
  if (reply == root || (reply.size() > root.size() && reply.substr(0, root.size()) == root &&
                        reply[root.size()] == '.'))
    return "a reply subject under " + std::string(root) + ".";
  return {};
}

std::string Subjects::all(SubjectCategory category) const {
  if (category == SubjectCategory::kTicks) return ticks();
  return join(prefix_, category_name(category), ">");
}

std::optional<ParsedSubject> Subjects::parse(std::string_view subject) const {
  if (subject.size() <= prefix_.size() || subject.substr(0, prefix_.size()) != prefix_ ||
      subject[prefix_.size()] != '.') {
    return std::nullopt;
  }
  std::string_view rest = subject.substr(prefix_.size() + 1);
  std::array<std::string_view, 4> tok{};
  std::size_t n = 0;
  while (!rest.empty()) {
    if (n == tok.size()) return std::nullopt;
    auto dot = rest.find('.');
    tok[n++] = rest.substr(0, dot);
    if (tok[n - 1].empty()) return std::nullopt;  // "a..b": NATS rejects empty tokens
    if (dot == std::string_view::npos) break;
    rest = rest.substr(dot + 1);
    if (rest.empty()) return std::nullopt;  // trailing dot
  }
  for (const auto& [cat, name] : kCategories) {
    if (n == 0 || tok[0] != name) continue;
    ParsedSubject p{cat, {}, {}};
    switch (cat) {
      case SubjectCategory::kTicks:
        if (n != 1) return std::nullopt;
        return p;
      case SubjectCategory::kApi:
        if (n != 2 && n != 3) return std::nullopt;
        p.kind = tok[1];
        if (n == 3) p.namespace_token = tok[2];
        return p;
      case SubjectCategory::kMetrics:
      case SubjectCategory::kDeadletter:
        if (n != 2) return std::nullopt;
        p.namespace_token = tok[1];
        return p;
      case SubjectCategory::kEvents:
      case SubjectCategory::kSubmissions:
      case SubjectCategory::kActions:
      case SubjectCategory::kStatus:
        if (n != 3) return std::nullopt;
        p.namespace_token = tok[1];
        p.kind = tok[2];
        return p;
    }
  }
  return std::nullopt;
}

}  // namespace gpuaas::bus
