#include "harness/results/metric_set.h"

#include "harness/results/metric_names.h"

namespace harness {

const Metric* MetricSet::Find(std::string_view name) const {
  for (const auto& m : *metrics_)
    if (m.name == name) return &m;
  return nullptr;
}

std::optional<double> MetricSet::Value(std::string_view name) const {
  const Metric* m = Find(name);
  if (m == nullptr) return std::nullopt;
  return m->value;
}

std::optional<GateVerdict> MetricSet::Gate() const {
  const Metric* m = Find(metric_names::kGateVerdict);
  if (m == nullptr) return std::nullopt;
  return ParseGateVerdict(m->label);
}

std::optional<BaselineVerdict> MetricSet::Paired() const {
  const Metric* m = Find(metric_names::kBaselineVerdict);
  if (m == nullptr) return std::nullopt;
  return ParseBaselineVerdict(m->label);
}

}  // namespace harness
