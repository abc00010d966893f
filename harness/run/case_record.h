// What the running case reports besides pass/fail: metrics, per-sample outcomes and
// op rows. The run's listener stores them; samples stream to the store as they are
// added, so a killed run keeps them and `harness run --resume` can skip them. The record
// lives in the RunContext of the run (run_context.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/results.h"

namespace harness {

// Where a case's streamed samples go (the store listener implements it).
class SampleSink {
 public:
  virtual ~SampleSink() = default;
  virtual void WriteSample(const Sample& s) = 0;
};

class CaseRecord {
 public:
  void AddMetric(Metric m) { metrics_.push_back(std::move(m)); }
  // Streams the sample to the sink at once when there is one.
  void AddSample(const Sample& s);
  void SetOps(std::vector<OpRow> ops) { ops_ = std::move(ops); }
  // A line for the person triaging (a verdict short of failure, say AT-RISK): stored as
  // the case's message and shown in the summary even when the case passes.
  void AddNote(std::string note) { notes_.push_back(std::move(note)); }
  // An infrastructure failure (endpoint down, too many request errors): the case is
  // stored with status "error" and the run exits 3.
  void SetInfraError(std::string message) { infra_error_ = std::move(message); }

  const std::vector<Metric>& metrics() const { return metrics_; }
  const std::vector<Sample>& samples() const { return samples_; }
  const std::vector<OpRow>& ops() const { return ops_; }
  const std::vector<std::string>& notes() const { return notes_; }
  const std::optional<std::string>& infra_error() const { return infra_error_; }

  // Used by the listener when a case starts (its sink) and ends (none).
  void Reset(SampleSink* sink);

 private:
  std::vector<Metric> metrics_;
  std::vector<Sample> samples_;
  std::vector<OpRow> ops_;
  std::vector<std::string> notes_;
  std::optional<std::string> infra_error_;
  SampleSink* sink_ = nullptr;
};

}  // namespace harness
