// The SVG of a capacity report: latency against rate, one panel per measure with samples.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "gpuaas/base/svg.hpp"
#include "gpuaas/capacity/capacity_report.hpp"

namespace gpuaas::capacity {
namespace {

constexpr double kW = 760, kH = 300, kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;

struct Series {
  const char* name;
  const char* colour;
  std::function<double(const Percentiles&)> pick;
};

// One panel at vertical offset `y0`: p50, p95 and p99 of one measure (milliseconds) against
// the rate of every step, the objective dashed, the sustainable rate as a vertical line.
std::string panel(const CapacityReport& r, const char* title,
                  const std::function<const Percentiles&(const StepResult&)>& of,
                  std::optional<double> objective, double y0) {
  std::vector<const StepResult*> steps;
  for (const auto& s : r.search.steps)
    if (s.phase != "confirm" && of(s.result).count > 0) steps.push_back(&s.result);
  std::sort(steps.begin(), steps.end(), [](auto* a, auto* b) { return a->rate < b->rate; });
  std::string out;
  double max_rate = r.search.sustainable_rps, max_ms = objective ? *objective * 1000 : 0;
  for (auto* s : steps) {
    max_rate = std::max(max_rate, s->rate);
    max_ms = std::max(max_ms, of(*s).p99 * 1000);
  }
  if (max_rate <= 0) max_rate = 1;
  if (max_ms <= 0) max_ms = 1;
  max_rate *= 1.05;
  max_ms *= 1.1;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto x = [&](double rate) { return kLeft + rate / max_rate * pw; };
  auto y = [&](double ms) { return y0 + kTop + ph - std::min(ms, max_ms) / max_ms * ph; };
  out += "<text x=\"" + base::svg_number(kLeft) + "\" y=\"" + base::svg_number(y0 + 24) +
         "\" font-size=\"15\" font-weight=\"bold\">" + base::svg_escape(title) + "</text>\n";
  out += "<rect x=\"" + base::svg_number(kLeft) + "\" y=\"" + base::svg_number(y0 + kTop) +
         "\" width=\"" + base::svg_number(pw) + "\" height=\"" + base::svg_number(ph) +
         "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double ms = max_ms * i / 4, rate = max_rate * i / 4;
    out += "<text x=\"" + base::svg_number(kLeft - 6) + "\" y=\"" + base::svg_number(y(ms) + 4) +
           "\" font-size=\"11\" text-anchor=\"end\">" + base::svg_number(ms) + "</text>\n";
    out += "<text x=\"" + base::svg_number(x(rate)) + "\" y=\"" +
           base::svg_number(y0 + kTop + ph + 16) + "\" font-size=\"11\" text-anchor=\"middle\">" +
           base::svg_number(rate) + "</text>\n";
  }
  out += "<text x=\"" + base::svg_number(kLeft + pw / 2) + "\" y=\"" +
         base::svg_number(y0 + kH - 8) +
         "\" font-size=\"12\" text-anchor=\"middle\">requests per second</text>\n";
  out += "<text x=\"14\" y=\"" + base::svg_number(y0 + kTop + ph / 2) +
         "\" font-size=\"12\" transform=\"rotate(-90 14 " + base::svg_number(y0 + kTop + ph / 2) +
         ")\" text-anchor=\"middle\">milliseconds</text>\n";
  const Series series[] = {{"p50", "#4c78a8", [](const Percentiles& p) { return p.p50; }},
                           {"p95", "#f58518", [](const Percentiles& p) { return p.p95; }},
                           {"p99", "#b279a2", [](const Percentiles& p) { return p.p99; }}};
  double legend = kLeft + 200;
  for (const auto& s : series) {
    std::string pts;
    for (auto* st : steps)
      pts +=
          base::svg_number(x(st->rate)) + "," + base::svg_number(y(s.pick(of(*st)) * 1000)) + " ";
    out += "<polyline fill=\"none\" stroke=\"" + std::string(s.colour) +
           "\" stroke-width=\"1.5\" points=\"" + pts + "\"/>\n";
    out += "<text x=\"" + base::svg_number(legend) + "\" y=\"" + base::svg_number(y0 + 24) +
           "\" font-size=\"12\" fill=\"" + s.colour + "\">" + s.name + "</text>\n";
    legend += 40;
  }
  for (auto* st : steps) {
    out += "<circle cx=\"" + base::svg_number(x(st->rate)) + "\" cy=\"" +
           base::svg_number(y(of(*st).p95 * 1000)) + "\" r=\"3.5\" fill=\"" +
           (st->pass ? "#2ca02c" : "#d62728") + "\"/>\n";
  }
  if (objective) {
    out += "<line x1=\"" + base::svg_number(kLeft) + "\" x2=\"" + base::svg_number(kLeft + pw) +
           "\" y1=\"" + base::svg_number(y(*objective * 1000)) + "\" y2=\"" +
           base::svg_number(y(*objective * 1000)) +
           "\" stroke=\"#d62728\" stroke-dasharray=\"6 4\"/>\n";
    out += "<text x=\"" + base::svg_number(kLeft + pw - 4) + "\" y=\"" +
           base::svg_number(y(*objective * 1000) - 4) +
           "\" font-size=\"11\" text-anchor=\"end\" fill=\"#d62728\">objective (p95)</text>\n";
  }
  if (r.search.sustainable_rps > 0) {
    const double sx = x(r.search.sustainable_rps);
    out += "<line x1=\"" + base::svg_number(sx) + "\" x2=\"" + base::svg_number(sx) + "\" y1=\"" +
           base::svg_number(y0 + kTop) + "\" y2=\"" + base::svg_number(y0 + kTop + ph) +
           "\" stroke=\"#2ca02c\" stroke-dasharray=\"3 3\"/>\n";
    out += "<text x=\"" + base::svg_number(sx + 4) + "\" y=\"" + base::svg_number(y0 + kTop + 14) +
           "\" font-size=\"11\" fill=\"#2ca02c\">sustainable " +
           base::svg_number(r.search.sustainable_rps) + " req/s</text>\n";
  }
  return out;
}

}  // namespace

std::string report_svg(const CapacityReport& r) {
  struct Panel {
    const char* title;
    std::function<const Percentiles&(const StepResult&)> of;
    std::optional<double> objective;
  };
  std::vector<Panel> panels = {
      {"Time to first token", [](const StepResult& s) -> const Percentiles& { return s.ttft; },
       r.objectives.ttft_p95},
      {"Time per output token", [](const StepResult& s) -> const Percentiles& { return s.tpot; },
       r.objectives.tpot_p95},
      {"End to end", [](const StepResult& s) -> const Percentiles& { return s.e2e; },
       r.objectives.e2e_p95}};
  std::string body;
  double y0 = 30;
  for (const auto& p : panels) {
    bool any = false;
    for (const auto& s : r.search.steps) any = any || p.of(s.result).count > 0;
    if (!any) continue;
    body += panel(r, p.title, p.of, p.objective, y0);
    y0 += kH;
  }
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + base::svg_number(kW) +
                    "\" height=\"" + base::svg_number(y0 + 10) + "\" font-family=\"sans-serif\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += "<text x=\"" + base::svg_number(kLeft) + "\" y=\"20\" font-size=\"13\">" +
         base::svg_escape(r.model + " at " + r.url + " - " + describe(r.objectives)) + "</text>\n";
  out += body + "</svg>\n";
  return out;
}

}  // namespace gpuaas::capacity
