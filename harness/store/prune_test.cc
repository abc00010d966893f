#include "harness/store/prune.h"
#include "harness/store/store.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "harness/testing/io_fault_vfs.h"
#include "harness/testing/sqlite_test_util.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::TempDir;

// A run of identity `identity` at a commit with this ordinal, in nightly `nightly` (shard
// `shard`), with one case holding `samples` samples that passes or fails.
int64_t AddRun(Store& s, int ordinal, const std::string& identity, const std::string& nightly, const std::string& shard,
               int samples, bool passes = true) {
  CommitInfo c;
  c.sha = fmt::format("{:040x}", ordinal);
  c.first_parent_ordinal = ordinal;
  NewRun r;
  r.commit_id = *s.writer().UpsertCommit(c);
  r.stack = "refstack";
  r.config_hash = identity;
  r.config_json = "{}";
  r.host = "h";
  r.harness_version = "t";
  r.shard = shard;
  r.nightly = nightly;
  const int64_t run = *s.writer().BeginRun(r);
  const std::string case_id = "gsm8k/test_" + shard.substr(0, 1);
  const int64_t cr = *s.writer().BeginCase(run, "gsm8k", case_id, "{}");
  for (int i = 0; i < samples; ++i)
    EXPECT_TRUE(s.writer().WriteSample(cr, {std::to_string(i), SampleOutcome::kCorrect, "", "", 0, 0, "x"}).ok());
  EXPECT_TRUE(s.writer().FinishCase(cr, {case_id, passes ? CaseStatus::kPass : CaseStatus::kFail, 0, "", {}, {}}).ok());
  EXPECT_TRUE(s.writer().FinishRun(run, passes ? RunStatus::kPass : RunStatus::kFail).ok());
  return run;
}

std::vector<int64_t> Dropped(const PrunePlan& plan) {
  std::vector<int64_t> out;
  for (const auto& c : plan.outside)
    if (c.kept_for.empty()) out.push_back(c.run_id);
  return out;
}

TEST(PruneSamples, TheShardsOfOneNightlyCountOnceAndEachIdentityHasItsOwnWindow) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  // Identity a: nightly n1 (two shards), n2 (two shards), n3 (one run); identity b: one old run.
  const int64_t a1 = AddRun(*store, 1, "a", "n1", "0/2", 3), a1b = AddRun(*store, 1, "a", "n1", "1/2", 3);
  const int64_t a2 = AddRun(*store, 2, "a", "n2", "0/2", 3), a2b = AddRun(*store, 2, "a", "n2", "1/2", 3);
  AddRun(*store, 3, "a", "", "0/1", 3);
  AddRun(*store, 1, "b", "", "0/1", 3);
  auto plan = store->PlanPrune({.keep_nightlies = 2});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->runs, 6);
  EXPECT_EQ(plan->in_window, 4) << "n2 (both shards), n3 and b's only run";
  ASSERT_EQ(plan->outside.size(), 2u);
  EXPECT_EQ(plan->outside[0].run_id, a1);
  EXPECT_EQ(plan->outside[1].run_id, a1b);
  // Each old shard holds the baseline of the newer nightly's shard (the same case).
  EXPECT_THAT(plan->outside[0].kept_for, ElementsAre(fmt::format("baseline of run {}", a2)));
  EXPECT_THAT(plan->outside[1].kept_for, ElementsAre(fmt::format("baseline of run {}", a2b)));
  EXPECT_EQ(store->reader().Samples(1)->size(), 3u) << "a dry run deletes nothing";
  auto zero = store->PlanPrune({.keep_nightlies = 0});
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->in_window, 0);
}

// Each run outside the window is described by its own commit, start, nightly and sizes (what
// `prune` prints for it): two runs that differ in every one, neither given the other's or
// another column's.
TEST(PruneSamples, EachRunOutsideTheWindowCarriesItsOwnCommitStartNightlyAndSizes) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  const int64_t first = AddRun(*store, 1, "a", "night-1", "0/1", 2);
  const int64_t second = AddRun(*store, 2, "a", "night-2", "0/1", 5);
  AddRun(*store, 3, "a", "night-3", "0/1", 1);
  auto plan = store->PlanPrune({.keep_nightlies = 1});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->outside.size(), 2u);
  const struct {
    int64_t run;
    int ordinal;
    const char* nightly;
    int64_t samples;
  } want[] = {{first, 1, "night-1", 2}, {second, 2, "night-2", 5}};
  for (std::size_t i = 0; i < 2; ++i) {
    const PruneCandidate& c = plan->outside[i];
    EXPECT_EQ(c.run_id, want[i].run);
    EXPECT_EQ(c.sha, fmt::format("{:040x}", want[i].ordinal));
    EXPECT_EQ(c.started_at, store->reader().Run(want[i].run)->started_at);
    EXPECT_EQ(c.nightly, want[i].nightly);
    EXPECT_EQ(c.samples, want[i].samples);
    EXPECT_EQ(c.completion_bytes, want[i].samples) << "one byte each";
  }
}

TEST(PruneSamples, KeepsTheBaselineOfAResultInTheWindowAndDeletesTheRest) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  const int64_t r1 = AddRun(*store, 1, "a", "", "0/1", 4);
  const int64_t r2 = AddRun(*store, 2, "a", "", "0/1", 4);
  AddRun(*store, 3, "a", "", "0/1", 4, /*passes=*/false);
  const int64_t r4 = AddRun(*store, 4, "a", "", "0/1", 4, /*passes=*/false);
  auto plan = store->PruneSamples({.keep_nightlies = 2});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->outside.size(), 2u);
  EXPECT_EQ(plan->outside[0].run_id, r1);
  EXPECT_TRUE(plan->outside[0].kept_for.empty());
  EXPECT_EQ(plan->outside[1].run_id, r2);
  EXPECT_THAT(plan->outside[1].kept_for, ElementsAre("baseline of run 3", "baseline of run 4"));
  EXPECT_TRUE(store->reader().Samples(store->reader().Cases(r1)->at(0).id)->empty());
  EXPECT_EQ(store->reader().Samples(store->reader().Cases(r2)->at(0).id)->size(), 4u);
  EXPECT_EQ(store->reader().Samples(store->reader().Cases(r4)->at(0).id)->size(), 4u);
  EXPECT_EQ(store->reader().Cases(r1)->at(0).result.status, CaseStatus::kPass) << "the status stays";
}

// Six runs of one identity (ordinals 1-6, one case of 3 samples each) and a reference to
// each but the first: a golden change accepted from run 2's case, one under way (its accept
// killed) from run 3's, a bisect step on run 4, a regression of run 5 from run 6. Answers the
// runs' ids.
std::vector<int64_t> StoreReferencedRuns(Store& store) {
  std::vector<int64_t> runs;
  for (int ordinal = 1; ordinal <= 6; ++ordinal) runs.push_back(AddRun(store, ordinal, "a", "", "0/1", 3));
  const auto case_of = [&](int64_t run) { return store.reader().Cases(run)->at(0).id; };
  GoldenChange g{0, "gsm8k/test_0", "golden/x.json", "01", "02", "reviewed", "s", "me", "", case_of(runs[1])};
  EXPECT_TRUE(store.golden_log().FinishGoldenChange(*store.golden_log().BeginGoldenChange(g)).ok());
  g.from_case_result_id = case_of(runs[2]);
  EXPECT_TRUE(store.golden_log().BeginGoldenChange(g).ok());
  const int64_t session =
      *store.bisect_record().BeginBisect({.good = "a", .bad = "b", .target = "t", .args_json = "{}"});
  EXPECT_TRUE(store.bisect_record()
                  .AddBisectStep(session, {.step = 1, .sha = "s", .source = "store", .run_id = runs[3],
                                           .evidence_json = "{}", .decision_json = "{}"})
                  .ok());
  RegressionRow r;
  r.run_id = runs[4];
  r.baseline_run_id = runs[5];
  r.suite = "gsm8k";
  r.kind = "status";
  r.cases = {"gsm8k/test_0"};
  r.confirmation = "confirmed";
  r.confirm_json = "[]";
  EXPECT_TRUE(store.bisect_record().AddRegression(r).ok());
  return runs;
}

// run id -> why its samples were kept.
std::map<int64_t, std::vector<std::string>> KeptFor(const PrunePlan& plan) {
  std::map<int64_t, std::vector<std::string>> kept;
  for (const auto& c : plan.outside) kept[c.run_id] = c.kept_for;
  return kept;
}

// Each reference keeps the run it names and no other (StoreReferencedRuns). Every run is
// outside the window (--keep-nightlies 0: none is in it, so none is kept as a baseline).
TEST(PruneSamples, EachReferenceKeepsTheRunItNamesAndNoOther) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  const std::vector<int64_t> runs = StoreReferencedRuns(*store);
  auto plan = store->PruneSamples({.keep_nightlies = 0});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->outside.size(), 6u);
  auto kept = KeptFor(*plan);
  EXPECT_TRUE(kept[runs[0]].empty()) << ::testing::PrintToString(kept[runs[0]]);
  EXPECT_THAT(kept[runs[1]], ElementsAre("golden change 1"));
  EXPECT_THAT(kept[runs[2]], ElementsAre(HasSubstr("golden change under way ")));
  EXPECT_THAT(kept[runs[3]], ElementsAre("bisect session 1"));
  EXPECT_THAT(kept[runs[4]], ElementsAre("regression 1"));
  EXPECT_THAT(kept[runs[5]], ElementsAre("regression 1"));
  const auto samples_of = [&](int64_t run) {
    return store->reader().Samples(store->reader().Cases(run)->at(0).id)->size();
  };
  EXPECT_EQ(samples_of(runs[0]), 0u);
  for (int i = 1; i < 6; ++i) EXPECT_EQ(samples_of(runs[i]), 3u) << i;
}

// The same prune through a database that fails to read or lock at any point, for good or
// once: an error naming the database that dropped no sample, or the clean plan. A read of
// the references whose error was dropped would drop the samples they keep.
TEST(PruneSamples, AFaultAnywhereIsAnErrorThatDropsNothingOrTheCleanPlan) {
  TempDir dir;
  StoreReferencedRuns(*std::move(Store::Open(dir / "h.db")).value());
  const std::string samples = "SELECT count(*) FROM samples";
  const int64_t all_samples = testing_util::CountOf(dir / "h.db", samples);
  std::map<int64_t, std::vector<std::string>> clean;
  {
    auto store = std::move(Store::Open(testing_util::FreshFaultedCopy(dir.path()))).value();
    auto plan = store->PruneSamples({.keep_nightlies = 0});
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    clean = KeptFor(*plan);
  }
  const int64_t clean_samples = testing_util::CountOf(dir / "faulted.db", samples);
  ASSERT_EQ(clean_samples, all_samples - 3) << "the first run's 3 dropped";
  testing_util::IoFaultVfs vfs("faulted.db");
  int errors = 0;
  for (bool once : {false, true})
    for (int64_t budget = 0;; ++budget) {
      ASSERT_LT(budget, 5000) << "kept reading";
      const auto db = testing_util::FreshFaultedCopy(dir.path());
      once ? vfs.FailOnceAfter(budget) : vfs.FailAfter(budget);
      auto store = Store::Open(db);
      Result<PrunePlan> plan = store ? (*store)->PruneSamples({.keep_nightlies = 0}) : Result<PrunePlan>(store.error());
      const int64_t refused = vfs.refused();
      vfs.Off();
      store = Error{ExitCode::kInfra, "closed"};  // before the file is counted
      const std::string at = fmt::format("{} after {}", once ? "one fault" : "faults", budget);
      if (!plan) {
        ++errors;
        EXPECT_THAT(plan.error().message, HasSubstr("faulted.db")) << at;
        EXPECT_EQ(testing_util::CountOf(db, samples), all_samples) << at << ": " << plan.error().message;
        continue;
      }
      EXPECT_EQ(KeptFor(*plan), clean) << at;
      EXPECT_EQ(testing_util::CountOf(db, samples), clean_samples) << at;
      if (refused == 0) break;
    }
  EXPECT_GT(errors, 10) << "the sweep reached few of the prune's operations";
}

// --keep-samples-days N keeps the runs started in the last N days and only them: runs 10
// days, 3 days and an hour old (failing, so none is the baseline of another), against
// windows of 30, 5 and 2 days.
TEST(PruneSamples, TheDaysWindowKeepsTheRunsStartedInItAndNotTheOlder) {
  TempDir dir;
  std::vector<int64_t> runs;
  {
    auto store = std::move(Store::Open(dir / "h.db")).value();
    for (int i = 1; i <= 3; ++i) runs.push_back(AddRun(*store, i, "a", "", "0/1", 2, false));
  }
  const char* ages[] = {"-10 days", "-3 days", "-1 hours"};
  for (int i = 0; i < 3; ++i)
    testing_util::ExecSql(dir / "h.db", fmt::format("UPDATE runs SET started_at = strftime('%Y-%m-%dT%H:%M:%SZ', "
                                                    "'now', '{}') WHERE id = {}",
                                                    ages[i], runs[i]));
  auto store = std::move(Store::Open(dir / "h.db")).value();
  struct Row {
    int64_t days, in_window;
    std::vector<int64_t> dropped;
  };
  for (const Row& row : {Row{30, 3, {}}, Row{5, 2, {runs[0]}}, Row{2, 1, {runs[0], runs[1]}}}) {
    auto plan = store->PlanPrune({.keep_samples_days = row.days});
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    EXPECT_EQ(plan->in_window, row.in_window) << row.days << " days";
    EXPECT_EQ(Dropped(*plan), row.dropped) << row.days << " days";
  }
}

// A partial run (harness run --questions) is nobody's baseline and has none. Whole runs at
// ordinals 1 and 3, partial ones at 2 and 4, each the newest passing result before the next.
TEST(PruneSamples, APartialRunIsNoBaselineAndHasNone) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  auto partial = [&](int ordinal) {
    const int64_t commit = *store->writer().UpsertCommit({fmt::format("{:040x}", ordinal), {}, ordinal, {}, ""});
    NewRun r{commit, "refstack", "a", "{}", "h", "t"};
    r.partial_questions = 2;
    const int64_t run = *store->writer().BeginRun(r);
    const int64_t cr = *store->writer().BeginCase(run, "gsm8k", "gsm8k/test_0", "{}");
    for (int i = 0; i < 2; ++i)
      EXPECT_TRUE(
          store->writer().WriteSample(cr, {std::to_string(i), SampleOutcome::kCorrect, "", "", 0, 0, "x"}).ok());
    EXPECT_TRUE(store->writer().FinishCase(cr, {"gsm8k/test_0", CaseStatus::kPass, 0, "", {}, {}}).ok());
    EXPECT_TRUE(store->writer().FinishRun(run, RunStatus::kPass).ok());
    return run;
  };
  const int64_t whole1 = AddRun(*store, 1, "a", "", "0/1", 4);
  const int64_t partial2 = partial(2);
  const int64_t whole3 = AddRun(*store, 3, "a", "", "0/1", 4);
  partial(4);
  // In the window: run 4 (partial: it paired with nothing) and run 3, whose baseline is run 1.
  auto two = store->PlanPrune({.keep_nightlies = 2});
  ASSERT_TRUE(two.ok()) << two.error().message;
  ASSERT_EQ(two->outside.size(), 2u);
  EXPECT_EQ(two->outside[0].run_id, whole1);
  EXPECT_THAT(two->outside[0].kept_for, ElementsAre(fmt::format("baseline of run {}", whole3)));
  EXPECT_EQ(two->outside[1].run_id, partial2);
  EXPECT_TRUE(two->outside[1].kept_for.empty()) << "a partial run is nobody's baseline";
  // Only run 4 in the window: a partial run has no baseline to keep.
  auto one = store->PlanPrune({.keep_nightlies = 1});
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(Dropped(*one).size() == one->outside.size()) << "nothing kept for the partial run 4";
}

// A baseline is a passing result of a run of the same identity at an older commit: a run
// of another identity is none, even beside a run of the right identity that failed.
TEST(PruneSamples, ARunOfAnotherIdentityIsNoBaseline) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  const int64_t other = AddRun(*store, 1, "b", "", "0/1", 4);
  const int64_t failed = AddRun(*store, 2, "a", "", "0/1", 4, /*passes=*/false);
  AddRun(*store, 3, "a", "", "0/1", 4);
  AddRun(*store, 4, "b", "", "0/1", 4, /*passes=*/false);
  // Identity a keeps run 3 (and its own older run 2 falls out); b keeps run 4, its baseline
  // run 1.
  auto plan = store->PlanPrune({.keep_nightlies = 1});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->outside.size(), 2u);
  EXPECT_EQ(plan->outside[0].run_id, other);
  EXPECT_THAT(plan->outside[0].kept_for, ElementsAre("baseline of run 4")) << "b's own, not a's";
  EXPECT_EQ(plan->outside[1].run_id, failed);
  EXPECT_TRUE(plan->outside[1].kept_for.empty()) << "a failed result is nobody's baseline";
}

// Commits stored out of their first-parent order (a run of a newer commit stored first): a
// baseline is still the newest passing result at an OLDER commit, by ordinal, never a
// result at a newer commit stored before it.
TEST(PruneSamples, TheBaselineIsOlderByOrdinalWhateverOrderTheCommitsWereStoredIn) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  for (int ordinal : {5, 1}) {
    CommitInfo c;
    c.sha = fmt::format("{:040x}", ordinal);
    c.first_parent_ordinal = ordinal;
    ASSERT_TRUE(store->writer().UpsertCommit(c).ok());
  }
  const int64_t older = AddRun(*store, 1, "a", "", "0/1", 4);
  const int64_t newer = AddRun(*store, 5, "a", "", "0/1", 4);
  const int64_t middle = AddRun(*store, 3, "a", "", "0/1", 4);
  auto plan = store->PlanPrune({.keep_nightlies = 2});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->outside.size(), 1u) << "runs at 5 and 3 are the two newest";
  EXPECT_EQ(plan->outside[0].run_id, older);
  EXPECT_THAT(plan->outside[0].kept_for, ElementsAre(fmt::format("baseline of run {}", middle)))
      << "the run at 5 (run " << newer << ") is newer than run " << middle << ", not its baseline";
}

// Compacting after a prune (VACUUM, then a checkpoint that empties the WAL) that cannot read
// the file at any point is an error naming the file and the step, and the store keeps every
// row: VACUUM is one transaction.
TEST(Prune, ACompactThatCannotReadIsAnErrorNamingItsStepAndLosesNothing) {
  TempDir dir;
  {
    auto store = std::move(Store::Open(dir / "h.db")).value();
    for (int ordinal = 1; ordinal <= 6; ++ordinal) AddRun(*store, ordinal, "a", "", "0/1", 40);
  }
  testing_util::IoFaultVfs vfs((dir / "h.db").string());
  auto store = std::move(Store::Open(dir / "h.db")).value();
  int vacuum_failed = 0, checkpoint_failed = 0;
  for (int64_t budget = 0;; ++budget) {
    ASSERT_LT(budget, 20000) << "the compact kept reading";
    vfs.FailAfter(budget);
    const Status compacted = store->Compact();
    const int64_t refused = vfs.refused();
    vfs.Off();
    if (compacted.ok()) break;
    const std::string& said = compacted.error().message;
    ASSERT_GT(refused, 0) << "an error with no fault behind it: " << said;
    EXPECT_EQ(compacted.error().code, ExitCode::kInfra) << said;
    EXPECT_THAT(said, HasSubstr("h.db"));
    vacuum_failed += said.find(": vacuum: ") != std::string::npos;
    checkpoint_failed += said.find(": checkpoint after vacuum: ") != std::string::npos;
    EXPECT_TRUE(said.find("vacuum: ") != std::string::npos) << budget << ": " << said;
    ASSERT_EQ(store->reader().Samples(store->reader().Cases(6)->at(0).id)->size(), 40u) << budget << ": " << said;
  }
  EXPECT_GT(vacuum_failed, 0) << "no fault reached the VACUUM";
  EXPECT_GT(checkpoint_failed, 0) << "no fault reached the checkpoint";
  // Success means the checkpoint emptied the WAL: what prune's "bytes after" reports.
  const auto wal = dir / "h.db-wal";
  EXPECT_TRUE(!std::filesystem::exists(wal) || std::filesystem::file_size(wal) == 0);
}

// Prune checks its window at the library too (the CLI checks its flags first, so this is
// what any other caller gets): each bound at its edges is taken, just outside them refused
// by the flag's name, before the database is read.
TEST(Prune, EachBoundIsTakenAtItsEdgesAndRefusedByNameJustOutside) {
  TempDir dir;
  {
    auto store = std::move(Store::Open(dir / "h.db")).value();
    AddRun(*store, 1, "a", "", "0/1", 2);
  }
  struct Row {
    const char* flag;
    PruneWindow window;
    bool taken;
  };
  const Row rows[] = {
      {"--keep-nightlies", {.keep_nightlies = 0}, true},
      {"--keep-nightlies", {.keep_nightlies = kMaxKeepNightlies}, true},
      {"--keep-nightlies", {.keep_nightlies = -1}, false},
      {"--keep-nightlies", {.keep_nightlies = kMaxKeepNightlies + 1}, false},
      {"--keep-samples-days", {.keep_samples_days = 0}, true},
      {"--keep-samples-days", {.keep_samples_days = kMaxKeepSamplesDays}, true},
      {"--keep-samples-days", {.keep_samples_days = -1}, false},
      {"--keep-samples-days", {.keep_samples_days = kMaxKeepSamplesDays + 1}, false},
  };
  for (const Row& row : rows) {
    auto out = Prune({dir / "h.db", row.window, true, [](int64_t) { return OkStatus(); }});
    const std::string bound = fmt::format("{} {}", row.flag, row.window.keep_nightlies.value_or(0) +
                                                                 row.window.keep_samples_days.value_or(0));
    if (row.taken) {
      ASSERT_TRUE(out.ok()) << bound << ": " << out.error().message;
      // A dry run's size is the file and its WAL, a WAL that is not there counting nothing.
      const auto wal = dir / "h.db-wal";
      const auto wal_bytes = std::filesystem::exists(wal) ? std::filesystem::file_size(wal) : 0;
      EXPECT_EQ(out->bytes_before, static_cast<int64_t>(std::filesystem::file_size(dir / "h.db") + wal_bytes)) << bound;
      continue;
    }
    ASSERT_FALSE(out.ok()) << bound;
    EXPECT_EQ(out.error().code, ExitCode::kUsage) << bound;
    EXPECT_THAT(out.error().message, HasSubstr(row.flag)) << bound;
  }
}

TEST(Prune, ClaimsEveryUnfinishedRunBeforeItChangesAnything) {
  TempDir dir;
  {
    auto store = std::move(Store::Open(dir / "h.db")).value();
    AddRun(*store, 1, "a", "", "0/1", 2);
    AddRun(*store, 2, "a", "", "0/1", 2);
    const int64_t live = AddRun(*store, 3, "a", "", "0/1", 2);
    ASSERT_TRUE(store->writer().ReopenRun(live).ok());
  }
  std::vector<int64_t> claimed;
  PruneRequest request{dir / "h.db", {.keep_nightlies = 1}, false, [&](int64_t run) -> Status {
                         claimed.push_back(run);
                         return UsageError("busy");
                       }};
  auto refused = Prune(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "busy");
  EXPECT_THAT(claimed, ElementsAre(3));
  request.claim_unfinished_run = [](int64_t) { return OkStatus(); };
  request.dry_run = true;
  auto dry = Prune(request);
  ASSERT_TRUE(dry.ok()) << dry.error().message;
  EXPECT_THAT(Dropped(dry->plan), ElementsAre(1)) << "run 3 (running) is the newest nightly, run 2 its baseline";
  EXPECT_EQ(dry->bytes_after, dry->bytes_before);
  EXPECT_THAT(PruneSummary(request, *dry), HasSubstr("would drop the samples of 1 runs (2 samples, 2 bytes"));
  request.dry_run = false;
  auto done = Prune(request);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_THAT(PruneSummary(request, *done), HasSubstr("dropped run 1 ("));
  EXPECT_GT(done->bytes_before, 0);
}

}  // namespace
}  // namespace harness
