#include "reports/sections/trends.h"

#include <tuple>

#include "harness/results/metric_names.h"
#include "harness/results/metric_set.h"
#include "harness/stats/stats.h"
#include "reports/report_load.h"

namespace harness::reports {

std::optional<std::pair<double, double>> AtRiskBand(int64_t n, double gate) {
  std::optional<std::pair<double, double>> band;
  if (n <= 0) return band;
  for (int64_t k = 0; k <= n; ++k) {
    const Interval ci = WilsonInterval(k, n);
    if (ci.low < gate && ci.high >= gate) {
      const double p = static_cast<double>(k) / static_cast<double>(n);
      if (!band) band = std::pair{p, p};
      band->second = p;
    }
  }
  return band;
}

namespace {

// The metric a case's chart shows: accuracy, else a proportion with an interval, else a
// tolerance bound use; empty when the case has none (compile cases).
std::string TrendMetric(const std::vector<const Loaded*>& results) {
  std::string interval, bound;
  for (const auto* r : results)
    for (const auto& m : r->metrics) {
      if (m.name == metric_names::kAccuracy) return m.name;
      if (interval.empty() && m.n > 0 && m.low && m.high) interval = m.name;
      if (bound.empty() && m.name.ends_with(metric_names::kBoundUseSuffix)) bound = m.name;
    }
  return interval.empty() ? bound : interval;
}

class TrendsLoad : SectionLoad {
 public:
  using SectionLoad::SectionLoad;

  void Trends() {
    for (const auto& [case_id, list] : by_case_) {
      const std::string metric = TrendMetric(list);
      if (metric.empty()) continue;
      Trend t{case_id, metric};
      t.suite = list.front()->key.suite();
      for (const Loaded* r : list) {
        const MetricSet metrics(r->metrics);
        const Metric* m = metrics.Find(metric);
        if (!m) continue;
        const Metric* verdict = metrics.Find(metric_names::kGateVerdict);
        t.points.push_back({r->commit, r->stored.run_id, r->stored.result.status, m->value, m->low, m->high, m->n,
                            verdict ? verdict->label : std::string(Label(r->stored.result.status))});
        if (auto g = metrics.Value(metric_names::kGate)) t.gate = *g;
      }
      if (metric.ends_with(metric_names::kBoundUseSuffix)) t.bound = 1.0;
      if (t.gate && !t.points.empty() && t.points.back().n > 0)
        if (auto band = AtRiskBand(t.points.back().n, *t.gate)) std::tie(t.band_low, t.band_high) = *band;
      if (t.points.size() > kMaxTrendPoints) {
        t.omitted = t.points.size() - kMaxTrendPoints;
        t.points.erase(t.points.begin(), t.points.begin() + static_cast<std::ptrdiff_t>(t.omitted));
      }
      model_.trends.push_back(std::move(t));
    }
  }
};

}  // namespace

Status LoadTrends(ReportLoad& load) {
  TrendsLoad(load).Trends();
  return OkStatus();
}

}  // namespace harness::reports
