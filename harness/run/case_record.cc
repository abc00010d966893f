#include "harness/run/case_record.h"

namespace harness {

void CaseRecord::AddSample(const Sample& s) {
  samples_.push_back(s);
  if (sink_) sink_->WriteSample(s);
}

void CaseRecord::Reset(SampleSink* sink, std::vector<Sample> prior) {
  *this = CaseRecord();
  sink_ = sink;
  prior_samples_ = std::move(prior);
}

CaseRecord& CurrentCase() {
  static CaseRecord record;
  return record;
}

}  // namespace harness
