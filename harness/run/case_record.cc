#include "harness/run/case_record.h"

namespace harness {

void CaseRecord::AddSample(const Sample& s) {
  samples_.push_back(s);
  if (sink_) sink_->WriteSample(s);
}

void CaseRecord::Reset(SampleSink* sink) {
  *this = CaseRecord();
  sink_ = sink;
}

}  // namespace harness
