#include "gpuaas/sim/chart.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

#include "gpuaas/base/svg.hpp"

namespace gpuaas::sim {
namespace {

constexpr int kWidth = 900, kPanelHeight = 170, kLeft = 60, kRight = 20, kTop = 40, kGap = 40;
const char* const kColours[] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

}  // namespace

std::string chart_svg(const std::vector<RunResult>& runs) {
  struct Panel {
    const char* title;
    std::function<double(const SeriesPoint&)> value;
  };
  const std::vector<Panel> panels = {
      {"workloads waiting (submitted, not running)",
       [](const SeriesPoint& p) { return static_cast<double>(p.waiting); }},
      {"GPUs allocated (dashed: Ready capacity)",
       [](const SeriesPoint& p) { return p.gpus_allocated; }},
      {"GPUs busy", [](const SeriesPoint& p) { return p.gpus_busy; }},
      {"nodes (provisioning ones included)",
       [](const SeriesPoint& p) { return static_cast<double>(p.nodes); }},
  };
  double t_max = 1;
  for (const auto& r : runs)
    for (const auto& p : r.series) t_max = std::max(t_max, p.t);
  const int height = kTop + static_cast<int>(panels.size()) * (kPanelHeight + kGap);
  const int plot_w = kWidth - kLeft - kRight;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
         "fill=\"white\"/>\n";
  svg << "<text x=\"" << kLeft << "\" y=\"20\" font-size=\"14\">"
      << base::svg_escape(runs.empty() ? std::string() : runs.front().scenario)
      << " — hours since start</text>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    svg << "<text x=\""
        << kWidth - kRight - 120 * (static_cast<int>(runs.size()) - static_cast<int>(i))
        << "\" y=\"20\" fill=\"" << kColours[i % 6] << "\">&#9632; "
        << base::svg_escape(runs[i].policy) << "</text>\n";
  }
  for (std::size_t pi = 0; pi < panels.size(); ++pi) {
    const Panel& panel = panels[pi];
    const int y0 = kTop + static_cast<int>(pi) * (kPanelHeight + kGap) + 15;
    double v_max = 1;
    for (const auto& r : runs)
      for (const auto& p : r.series) {
        v_max = std::max(v_max, panel.value(p));
        if (pi == 1) v_max = std::max(v_max, p.gpus_capacity);
      }
    auto x = [&](double t) { return kLeft + t / t_max * plot_w; };
    auto y = [&](double v) { return y0 + kPanelHeight - v / v_max * kPanelHeight; };
    svg << "<text x=\"" << kLeft << "\" y=\"" << y0 - 4 << "\">" << base::svg_escape(panel.title)
        << "</text>\n";
    svg << "<rect x=\"" << kLeft << "\" y=\"" << y0 << "\" width=\"" << plot_w << "\" height=\""
        << kPanelHeight << "\" fill=\"none\" stroke=\"#999\"/>\n";
    svg << "<text x=\"" << kLeft - 6 << "\" y=\"" << y0 + 10 << "\" text-anchor=\"end\">"
        << base::svg_number(v_max) << "</text><text x=\"" << kLeft - 6 << "\" y=\""
        << y0 + kPanelHeight << "\" text-anchor=\"end\">0</text>\n";
    for (int h = 0; h <= 4; ++h) {
      const double t = t_max * h / 4;
      svg << "<text x=\"" << base::svg_number(x(t)) << "\" y=\"" << y0 + kPanelHeight + 14
          << "\" text-anchor=\"middle\">" << base::svg_number(t / 3600) << "h</text>\n";
    }
    for (std::size_t ri = 0; ri < runs.size(); ++ri) {
      auto line = [&](auto&& value, const char* dash) {
        svg << "<polyline fill=\"none\" stroke=\"" << kColours[ri % 6] << "\" stroke-width=\"1.5\""
            << dash << " points=\"";
        double prev = 0;
        bool first = true;
        for (const auto& p : runs[ri].series) {  // steps: a value holds until the next sample
          const double v = value(p);
          if (!first) svg << base::svg_number(x(p.t)) << "," << base::svg_number(y(prev)) << " ";
          svg << base::svg_number(x(p.t)) << "," << base::svg_number(y(v)) << " ";
          prev = v;
          first = false;
        }
        svg << "\"/>\n";
      };
      line(panel.value, "");
      if (pi == 1)
        line([](const SeriesPoint& p) { return p.gpus_capacity; }, " stroke-dasharray=\"4 3\"");
    }
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace gpuaas::sim
