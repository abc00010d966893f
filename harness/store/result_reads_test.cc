#include "harness/store/result_reads.h"

#include <gtest/gtest.h>

#include "harness/store/result_reader.h"
#include "harness/store/store.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace result_reads_test {

using testing_util::TempDir;

// What a consumer can reach through its interface: a read it does not make does not compile
// (the reader itself, the positive control, reaches every one).
template <typename R>
concept ReadsHistory = requires(R& r) { r.History(HistoryQuery{}); };
template <typename R>
concept ReadsEvidence = requires(R& r) { r.CaseEvidenceAt("", ""); };
template <typename R>
concept ReadsSamples = requires(R& r) { r.Samples(int64_t{1}); };
template <typename R>
concept ResolvesCommits = requires(R& r) { r.MatchCommits(""); };
template <typename R>
concept ReadsResumedRun = requires(R& r) { r.CaseParams(int64_t{1}); };
template <typename R>
concept ReadsNightlyRuns = requires(R& r) { r.NightlyRuns(""); };
template <typename R>
concept ReadsBaselines = requires(R& r) { r.RunsAt("", ""); };

static_assert(ReadsHistory<ResultReader> && ReadsEvidence<ResultReader> && ReadsSamples<ResultReader> &&
              ResolvesCommits<ResultReader> && ReadsResumedRun<ResultReader> && ReadsNightlyRuns<ResultReader> &&
              ReadsBaselines<ResultReader>);
static_assert(ReadsHistory<HistoryReads> && !ReadsSamples<HistoryReads> && !ResolvesCommits<HistoryReads>);
static_assert(ResolvesCommits<CommitLookup> && !ReadsSamples<CommitLookup> && !ReadsHistory<CommitLookup>);
static_assert(ReadsSamples<CompareReads> && ResolvesCommits<CompareReads> && !ReadsHistory<CompareReads> &&
              !ReadsEvidence<CompareReads> && !ReadsBaselines<CompareReads>);
static_assert(ReadsEvidence<EvidenceReads> && !ReadsHistory<EvidenceReads> && !ReadsResumedRun<EvidenceReads>);
static_assert(ReadsEvidence<NightlyReads> && !ResolvesCommits<NightlyReads> && !ReadsBaselines<NightlyReads>);
static_assert(ReadsSamples<ReportReads> && ResolvesCommits<ReportReads> && !ReadsEvidence<ReportReads> &&
              !ReadsHistory<ReportReads> && !ReadsResumedRun<ReportReads>);
static_assert(ReadsBaselines<BaselineReads> && !ReadsEvidence<BaselineReads> && !ResolvesCommits<BaselineReads>);
static_assert(ReadsResumedRun<ResumeReads> && !ReadsBaselines<ResumeReads> && !ReadsHistory<ResumeReads>);
static_assert(ReadsSamples<GoldenReads> && !ReadsEvidence<GoldenReads> && !ResolvesCommits<GoldenReads>);
static_assert(!ReadsNightlyRuns<CompareReads> && !ReadsNightlyRuns<NightlyReads> && !ReadsNightlyRuns<ReportReads>,
              "merge's read is the reader's own");

// A snapshot taken through a narrow interface holds the reads made through it to one state
// of the file, and one taken inside it neither begins nor ends a transaction: the outer
// snapshot still holds after the inner one ends.
TEST(ResultReads, ASnapshotThroughAnInterfaceHoldsAndANestedOneLeavesItOpen) {
  TempDir dir;
  auto writer = std::move(Store::Open(dir / "h.db")).value();
  const int64_t commit = *writer->writer().UpsertCommit({"abc1", {}, 1, 1700000000, "subject"});
  const int64_t run = *writer->writer().BeginRun({commit, "refstack", "h", "{}", "host", "0.1.0"});
  const int64_t cr = *writer->writer().BeginCase(run, "s", "s/t_0", "{}");
  auto finish = [&](double v) {
    ASSERT_TRUE(writer->writer().FinishCase(cr, {"s/t_0", CaseStatus::kPass, 0, "", {{"m", v, 0, {}, {}}}, {}}).ok());
  };
  finish(1);
  auto store = std::move(Store::OpenReadOnly(dir / "h.db")).value();
  ReportReads& reads = store->reader();
  {
    const ReportReads::ReadSnapshot outer(reads);
    EXPECT_EQ(reads.Metrics(cr)->at(0).value, 1);
    {
      CompareReads& compare = store->reader();
      const CompareReads::ReadSnapshot inner(compare);
      finish(2);
      EXPECT_EQ(compare.Metrics(cr)->at(0).value, 1) << "the outer snapshot's state";
    }
    EXPECT_EQ(reads.Metrics(cr)->at(0).value, 1) << "the inner snapshot did not end the outer one";
  }
  EXPECT_EQ(reads.Metrics(cr)->at(0).value, 2) << "after the snapshot, the commit";
}

}  // namespace result_reads_test
}  // namespace harness
