#include "harness/run/run_listener.h"

#include <cstdio>

#include <fmt/format.h>

#include "harness/run/case_record.h"

namespace harness {

RunListener::RunListener(RunWriter& store, int64_t run_id, CaseRecord& record)
    : store_(store), run_id_(run_id), record_(record) {}

void RunListener::Keep(const Status& s) {
  if (!s && !store_error_) store_error_ = s.error();
}

void RunListener::OnTestStart(const testing::TestInfo&) {
  failure_text_ = FailureText();
  started_ = std::chrono::steady_clock::now();
  case_.reset();
  case_row_ = 0;
}

void RunListener::BeginCase(const StartingCase& c) {
  case_ = c;
  auto row = store_.BeginCase(run_id_, c.suite, c.case_id, c.params_json);
  if (!row) {
    Keep(row.error());
    case_row_ = 0;
    record_.Reset(nullptr);
    return;
  }
  case_row_ = *row;
  record_.Reset(this);
}

void RunListener::WriteSample(const Sample& s) {
  if (case_row_) Keep(store_.WriteSample(case_row_, s));
}

void RunListener::OnTestPartResult(const testing::TestPartResult& result) {
  if (result.type() == testing::TestPartResult::kSuccess) return;
  // The finding first, its location and GoogleTest's assertion text after (failure_text.h).
  if (!result.skipped() && result.file_name())
    failure_text_.Add(result.file_name(), result.line_number(), result.message());
  else
    failure_text_.AddPlain(result.message());
}

void RunListener::OnTestEnd(const testing::TestInfo& info) {
  if (!case_) return;
  const auto* r = info.result();
  const CaseRecord& rec = record_;
  CaseResult s;
  s.case_id = case_->case_id;
  s.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (r->Skipped()) s.status = CaseStatus::kSkip;
  else if (rec.infra_error()) s.status = CaseStatus::kError;
  else if (r->Failed()) s.status = CaseStatus::kFail;
  else s.status = CaseStatus::kPass;
  // Infra error first, then failures, then notes: the first line is the headline.
  std::vector<std::string> parts;
  if (rec.infra_error()) parts.push_back(*rec.infra_error());
  if (!failure_text_.empty()) parts.push_back(failure_text_.Text());
  for (const auto& n : rec.notes()) parts.push_back(n);
  for (const auto& part : parts) s.message += (s.message.empty() ? "" : "\n") + part;
  s.metrics = rec.metrics();
  s.ops = rec.ops();
  if (case_row_) Keep(store_.FinishCase(case_row_, s));
  record_.Reset(nullptr);
  case_row_ = 0;
  case_.reset();
  std::fprintf(stderr, "[%5s] %s (%.0f ms)\n", std::string(Label(s.status)).c_str(), s.case_id.c_str(),
               s.duration_s * 1000);
  if (!s.message.empty()) {
    std::string indented = "        " + s.message;
    for (std::size_t p = 0; (p = indented.find('\n', p)) != std::string::npos; p += 9) indented.insert(p + 1, "        ");
    std::fprintf(stderr, "%s\n", indented.c_str());
  }

  results_.push_back(std::move(s));
}

}  // namespace harness
