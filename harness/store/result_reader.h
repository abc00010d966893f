// The store's door for whatever reads stored results: runs, their cases with samples,
// metrics and op rows, a case's history, a commit's newest results, the stored results a
// running case pairs with (baselines, a gate's reruns), bisect's evidence, commits by sha
// prefix or ordinal. Every store hands it out (store.h: reader()); its consumers take the
// narrow interface of what they ask (result_reads.h), which it implements: the comments of
// its methods are there.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/store/result_reads.h"
#include "harness/store/store_door.h"

namespace harness {

class ResultReader final : private StoreDoor,
                           public BaselineReads,
                           public ResumeReads,
                           public CompareReads,
                           public HistoryReads,
                           public EvidenceReads,
                           public NightlyReads,
                           public ReportReads,
                           public GoldenReads {
 public:
  using StoreDoor::StoreDoor;

  const std::filesystem::path& path() const override;

  Result<std::vector<Sample>> Samples(int64_t case_result_id) override;
  Result<std::vector<Metric>> Metrics(int64_t case_result_id) override;
  Result<std::vector<OpRow>> Ops(int64_t case_result_id) override;
  Result<std::vector<StoredCase>> Cases(int64_t run_id) override;
  Result<RunRow> Run(int64_t id) override;
  Result<std::vector<HistoryRow>> History(const HistoryQuery& q) override;
  Result<std::vector<std::string>> MetricNames(const std::string& case_id, const std::string& suite) override;
  Result<std::vector<StoredCase>> NewestCasesAt(const std::string& sha) override;
  Result<std::vector<StoredCase>> FinishedCases(int64_t run_id) override;
  Result<std::vector<RunRow>> FinishedRuns() override;
  Result<std::map<int64_t, std::vector<Metric>>> MetricsOfRun(int64_t run_id) override;
  Result<std::optional<CaseRef>> NewestCaseAt(const CaseMatch& match, const std::string& sha) override;
  Result<std::vector<double>> MetricAt(const CaseMatch& match, const std::string& sha,
                                       const std::string& metric) override;
  Result<std::optional<CaseRef>> NewestCaseBelowOrdinal(const CaseMatch& match, int64_t ordinal) override;
  Result<std::map<std::string, std::string>> CaseParams(int64_t run_id) override;
  Result<std::vector<CaseEvidence>> CaseEvidenceAt(const std::string& case_id, const std::string& sha) override;
  Result<std::vector<std::string>> CaseIdsAt(const std::string& sha, const std::string& prefix) override;
  Result<std::vector<CommitInfo>> MatchCommits(const std::string& sha_prefix) override;
  Result<std::vector<CommitInfo>> CommitsPrefixOf(const std::string& sha) override;
  Result<std::vector<CommitInfo>> CommitsInOrdinalRange(int64_t after, int64_t up_to) override;
  Result<int64_t> NewestCaseResultId() override;
  Result<bool> HasCaseAt(const std::string& case_id, const std::string& sha) override;
  Result<std::pair<int64_t, int64_t>> RunsAt(const std::string& sha, const std::string& config_hash) override;
  Result<std::vector<RunRow>> LogicalRun(int64_t run_id) override;
  Result<std::vector<std::string>> KnownCases() override;
  Result<std::optional<CaseRef>> LatestCaseResult(const std::string& case_id) override;

  // Every run (any status) with this nightly id, by commit, identity, shard and id
  // (store/nightly_shards.h counts their shards): what `merge` checks a nightly with, the
  // one read no interface holds.
  Result<std::vector<RunRow>> NightlyRuns(const std::string& nightly);

 private:
  bool BeginSnapshot() override;
  void EndSnapshot() override;
};

}  // namespace harness
