// A case's metrics read by what they are: one place that looks a metric up by name and
// reads a stored verdict back into its type (the verdict's word through its table,
// results.h), for the run, the night verdict and the reports alike. A view: it holds no
// metric of its own, so the list it reads must outlive it.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "harness/results/results.h"

namespace harness {

class MetricSet {
 public:
  explicit MetricSet(const std::vector<Metric>& metrics) : metrics_(&metrics) {}

  // The first metric of that name; null when there is none.
  const Metric* Find(std::string_view name) const;
  // Its value; nothing when there is no metric of that name.
  std::optional<double> Value(std::string_view name) const;
  // The stored gate_verdict / baseline_verdict; nothing when the case stored none, or a word
  // outside the verdict's table (a reader compares the type, never the word).
  std::optional<GateVerdict> Gate() const;
  std::optional<BaselineVerdict> Paired() const;

 private:
  const std::vector<Metric>* metrics_;
};

}  // namespace harness
