// Kubernetes' LabelSelector, Taint and Toleration as Kueue embeds them, with the API server's
// rules (operators and the values they need, taint effects).
#include <limits>

#include "parsed_set.hpp"

namespace gpuaas::policy::detail {
namespace {

const std::initializer_list<std::pair<const char*, std::string>> kEffects = {
    {"NoSchedule", "NoSchedule"},
    {"PreferNoSchedule", "PreferNoSchedule"},
    {"NoExecute", "NoExecute"}};

}  // namespace

LabelSelector read_label_selector(Reader& r, const Field& f) {
  LabelSelector sel;
  sel.present = true;
  auto fs = r.fields(f, {{"matchLabels"}, {"matchExpressions"}});
  if (const auto* labels = fs.get("matchLabels")) {
    for (const auto& [entry, value] : r.string_map(*labels)) sel.match_labels[entry.name] = value;
  }
  const auto* exprs = fs.get("matchExpressions");
  if (exprs == nullptr) return sel;
  for (const auto& item : r.items(*exprs)) {
    auto ef = r.fields(item, {{"key"}, {"operator"}, {"values"}});
    if (!ef.is_map()) continue;
    LabelSelectorRequirement req;
    if (const auto* key = ef.get("key")) {
      req.key = r.string(*key).value_or("");
    } else {
      r.error(r.at(item), item.path + ".key is missing");
    }
    const auto* op = ef.get("operator");
    if (op == nullptr) {
      r.error(r.at(item), item.path + ".operator is missing (In, NotIn, Exists or DoesNotExist)");
      continue;
    }
    auto op_name = r.choice<std::string>(
        *op,
        {{"In", "In"}, {"NotIn", "NotIn"}, {"Exists", "Exists"}, {"DoesNotExist", "DoesNotExist"}});
    if (!op_name) continue;
    req.operator_ = *op_name;
    const auto* values = ef.get("values");
    if (values != nullptr) req.values = r.strings(*values);
    const bool needs_values = req.operator_ == "In" || req.operator_ == "NotIn";
    if (needs_values && req.values.empty()) {
      r.error(r.at(*op), item.path + ": operator " + req.operator_ + " needs values");
    } else if (!needs_values && !req.values.empty()) {
      r.error(r.at(*values), item.path + ": operator " + req.operator_ + " takes no values");
    }
    sel.match_expressions.push_back(std::move(req));
  }
  return sel;
}

std::vector<Taint> read_taints(Reader& r, const Field& f) {
  std::vector<Taint> taints;
  for (const auto& item : r.items(f)) {
    auto tf = r.fields(item, {{"key"}, {"value"}, {"effect"}, {"timeAdded", Use::kIgnored}});
    if (!tf.is_map()) continue;
    Taint t;
    if (const auto* key = tf.get("key")) {
      t.key = r.string(*key).value_or("");
    } else {
      r.error(r.at(item), item.path + ".key is missing");
    }
    if (const auto* value = tf.get("value")) t.value = r.string(*value).value_or("");
    if (const auto* effect = tf.get("effect")) {
      t.effect = r.choice<std::string>(*effect, kEffects).value_or("");
    } else {
      r.error(r.at(item),
              item.path + ".effect is missing (NoSchedule, PreferNoSchedule or " + "NoExecute)");
    }
    taints.push_back(std::move(t));
  }
  return taints;
}

std::vector<Toleration> read_tolerations(Reader& r, const Field& f) {
  std::vector<Toleration> out;
  for (const auto& item : r.items(f)) {
    auto tf = r.fields(item, {{"key"}, {"operator"}, {"value"}, {"effect"}, {"tolerationSeconds"}});
    if (!tf.is_map()) continue;
    Toleration t;
    if (const auto* key = tf.get("key")) t.key = r.string(*key).value_or("");
    const auto* op = tf.get("operator");
    if (op != nullptr) {
      t.operator_ =
          r.choice<std::string>(*op, {{"Equal", "Equal"}, {"Exists", "Exists"}}).value_or("Equal");
    }
    const auto* value = tf.get("value");
    if (value != nullptr) t.value = r.string(*value).value_or("");
    const auto* effect = tf.get("effect");
    if (effect != nullptr) t.effect = r.choice<std::string>(*effect, kEffects).value_or("");
    if (const auto* secs = tf.get("tolerationSeconds")) {
      t.toleration_seconds = r.integer(*secs, std::numeric_limits<int64_t>::min(),
                                       std::numeric_limits<int64_t>::max());
      if (t.effect != "NoExecute") {
        r.error(r.at(*secs), secs->path + " needs effect NoExecute");
      }
    }
    // The API server's rules: an empty key tolerates every taint only with Exists, and Exists
    // compares no value.
    if (t.key.empty() && t.operator_ != "Exists") {
      r.error(op != nullptr ? r.at(*op) : r.at(item),
              item.path + ": operator must be Exists when key is empty (that matches all keys)");
    }
    if (t.operator_ == "Exists" && !t.value.empty()) {
      r.error(r.at(*value), item.path + ": value must be empty when operator is Exists");
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace gpuaas::policy::detail
