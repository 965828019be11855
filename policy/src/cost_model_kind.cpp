// gpuaas.io/v1alpha1 CostModel: prices per flavor and what counts as an outcome. The
// report that reads it is described in docs/cost.md.
#include <charconv>
#include <set>

#include "parsed_set.hpp"

namespace gpuaas::policy::detail {

// "500ms", "2s", "1.5s", "0.25": a latency in seconds (a bare number is seconds).
std::optional<double> read_latency(Reader& r, const Field& f) {
  auto s = r.string(f);
  if (!s) return std::nullopt;
  auto v = parse_latency(*s);
  if (!v)
    r.error(r.at(f),
            f.path + ": " + in_quotes(*s) + " is not a latency above 0 (e.g. 500ms, 2s or 1.5s)");
  return v;
}

namespace {

std::optional<double> price(Reader& r, const Field& f) {
  auto v = plain_number(r, f);
  if (v && *v < 0) {
    r.error(r.at(f), f.path + ": " + f.value.Scalar() + " is below 0");
    return std::nullopt;
  }
  return v;
}

void read_flavors(Reader& r, const Field& f, CostModel& m) {
  for (const Field& item : r.items(f)) {
    auto ff = r.fields(item, {{"name"}, {"pricePerGPUHour"}, {"pricePerNodeHour"}});
    CostModel::FlavorPrice p;
    p.at = r.at(item);
    if (const auto* n = ff.get("name")) {
      p.flavor = r.string(*n).value_or("");
    } else {
      r.missing(ff, p.at, item.path + ".name is missing: which ResourceFlavor the price is for");
      continue;
    }
    if (const auto* g = ff.get("pricePerGPUHour")) p.price_per_gpu_hour = price(r, *g);
    if (const auto* n = ff.get("pricePerNodeHour")) p.price_per_node_hour = price(r, *n);
    const bool gpu = ff.has("pricePerGPUHour"), node = ff.has("pricePerNodeHour");
    if (gpu && node) {
      r.error(p.at, item.path +
                        ": give pricePerGPUHour or pricePerNodeHour, not both (one source of "
                        "truth per price: the GPU-hour price is derived from the node-hour one)");
      continue;
    }
    if (!gpu && !node) {
      r.missing(ff, p.at, item.path + ": needs pricePerGPUHour or pricePerNodeHour");
      continue;
    }
    m.flavors.push_back(std::move(p));
  }
}

void read_outcomes(Reader& r, const Field& f, CostModel& m) {
  auto of = r.fields(f, {{"inference"}, {"sessions"}});
  if (const auto* inf = of.get("inference")) {
    auto fi = r.fields(*inf, {{"latencyMetric"}, {"latencyObjective"}, {"latencyUnit"}});
    if (const auto* x = fi.get("latencyMetric")) m.latency_metric = r.string(*x).value_or("");
    if (const auto* x = fi.get("latencyObjective"))
      m.latency_objective_seconds = read_latency(r, *x).value_or(m.latency_objective_seconds);
    if (const auto* x = fi.get("latencyUnit"))
      m.latency_metric_unit_seconds =
          r.choice<double>(*x, {{"s", 1.0}, {"ms", 0.001}}).value_or(1.0);
  }
  if (const auto* ss = of.get("sessions")) {
    auto fs = r.fields(*ss, {{"kinds"}});
    if (const auto* k = fs.get("kinds")) m.session_kinds = r.strings(*k);
  }
}

}  // namespace

void parse_cost_model(Reader& r, const Document& doc, ParsedSet& out) {
  auto [meta, sf] = read_spec_document(r, doc, {{"currency"}, {"flavors"}, {"outcomes"}});
  CostModel m;
  m.name = meta.name;
  m.at = meta.name_at;
  if (const auto* c = sf.get("currency")) m.currency = r.string(*c).value_or(m.currency);
  if (const auto* f = sf.get("flavors")) read_flavors(r, *f, m);
  if (const auto* o = sf.get("outcomes")) read_outcomes(r, *o, m);
  if (meta.ok) out.cost_models.push_back(std::move(m));
}

void check_cost_model(PolicySet& set, const std::vector<CostModel>& models, Diagnostics& d) {
  if (models.empty()) return;
  const CostModel& m = models.front();
  for (std::size_t i = 1; i < models.size(); ++i)
    d.error(models[i].at, "CostModel " + in_quotes(models[i].name) +
                              " is a second CostModel; a policy set has one (" + in_quotes(m.name) +
                              " is at " + m.at.str() + ")");
  std::set<std::string> seen;
  for (const auto& p : m.flavors) {
    if (!set.flavor(p.flavor)) {
      d.error(p.at, "CostModel " + in_quotes(m.name) + " prices ResourceFlavor " +
                        in_quotes(p.flavor) + ", which the policy set does not define");
    } else if (!seen.insert(p.flavor).second) {
      d.error(p.at, "CostModel " + in_quotes(m.name) + ": ResourceFlavor " + in_quotes(p.flavor) +
                        " is priced twice");
    } else if (p.price_per_node_hour) {
      bool pooled = false;
      for (const auto& pool : set.node_pools) pooled = pooled || pool.flavor == p.flavor;
      if (!pooled)
        d.error(p.at, "CostModel " + in_quotes(m.name) + ": pricePerNodeHour for " +
                          in_quotes(p.flavor) +
                          " needs a NodePool of that flavor (its gpusPerNode turns it into a "
                          "GPU-hour price); give pricePerGPUHour instead");
    }
  }
  set.cost_model = m;
}

}  // namespace gpuaas::policy::detail
