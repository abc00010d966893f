// harness bisect: find the commit that changed a metric or a case's status, even when the
// metric is noisy (harness/bisect/). Exit 0 when it answered (culprit, no-culprit or
// ambiguous), 2 on bad input, 3 when the command failed in a way that is no answer.
#include <cstdio>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/bisect/auto_bisect.h"
#include "harness/bisect/bisect_ranges.h"
#include "harness/bisect/bisect_output.h"
#include "harness/bisect/bisect_progress.h"
#include "harness/bisect/bisector.h"
#include "harness/cli/commands.h"
#include "harness/cli/numeric_option.h"
#include "harness/util/output_file.h"
#include "harness/util/subprocess.h"
#include "harness/util/utf8.h"
#include "reports/junit.h"
#include "reports/report_model.h"
#include "harness/util/paths.h"
#include "harness/util/progress_line.h"

namespace harness {
namespace {

struct BisectOptions {
  bisect::BisectRequest request;
  std::string db = DefaultDbPath();
  std::string repo;
  std::string suites_dir;
  std::string format = "text";
  double noise_sigma = 0;
  std::optional<double> timeout_s;
  std::optional<double> step_start_timeout_s;
  int64_t log_session = 0;
  std::string replay_file;
  bool automatic = false;
  std::optional<int64_t> run;
  int confirm = 1;
  std::string junit;
  bool again = false;
};

int Report(const bisect::BisectOutcome& out, const std::string& format) {
  if (format == "json") std::printf("%s\n", DumpJson(bisect::BisectOutcomeJson(out)).c_str());
  else std::fputs(bisect::BisectOutcomeText(out).c_str(), stdout);
  return 0;
}

// The nightly's JUnit again, each regressed case's <system-out> with what bisect --auto said
// of it (the culprit line CI job pages show).
std::string NightlyJunit(NightlyReads& store, const bisect::AutoBisectOutcome& out) {
  std::map<std::string, std::string> notes;
  for (const auto& g : out.regressions) {
    reports::CulpritNote n;
    n.verdict = bisect::AutoVerdict(g);
    if (g.bisect) {
      n.culprit = g.bisect->culprit;
      n.subject = g.bisect->subject;
      n.confidence = g.bisect->confidence;
      n.runs = g.bisect->runs;
      n.session = g.bisect->session_id;
      n.range = g.bisect->range;
      n.timing = g.bisect->timing;
      if (g.bisect->changes.size() > 1) n.culprits = g.bisect->changes;
    }
    for (const auto& c : g.target.cases) notes[c.case_id] = "bisect --auto: " + reports::CulpritWords(n);
  }
  std::vector<CaseResult> cases;
  for (const auto& run : out.nightly.runs) {
    auto stored = ValueOrThrow(store.FinishedCases(run.id));
    auto metrics = ValueOrThrow(store.MetricsOfRun(run.id));
    for (auto& c : stored) {
      if (auto it = metrics.find(c.id); it != metrics.end()) c.result.metrics = it->second;
      cases.push_back(std::move(c.result));
    }
  }
  return reports::JunitXml(cases, notes);
}

// --auto: the nightly's regressions, confirmed and bisected (bisect/auto_bisect.h).
int AutoBisect(const BisectOptions& o) {
  if (!o.request.good.empty() || !o.request.bad.empty() || !o.request.metric.empty() || !o.request.cases.empty())
    throw FatalError(ExitCode::kUsage, "--auto finds its own --good, --bad, --metric and --case: leave them out");
  if (!o.request.watch.empty())
    throw FatalError(ExitCode::kUsage, "--auto watches the paths of the regressed cases' suites: leave --watch out");
  bisect::AutoBisectRequest r;
  r.run_id = o.run;
  r.repo = o.repo;
  r.db = o.db;
  r.suites_dir = o.suites_dir.empty() ? SuitesDir() : std::filesystem::path(o.suites_dir);
  r.max_runs = o.request.max_runs;
  r.confirm = o.confirm;
  r.confidence = o.request.confidence;
  r.command = o.request.command;
  r.command_timeout_s = o.timeout_s;
  r.step_start_timeout_s = o.step_start_timeout_s;
  r.full_evals = o.request.full_evals;
  r.jobs = o.request.jobs;
  r.max_culprits = o.request.max_culprits;
  r.again = o.again;
  if (!o.junit.empty()) ValueOrThrow(CheckOutputPath(o.junit, o.db, "--junit"));
  auto store = ValueOrThrow(Store::Open(o.db));
  ProgressLine line;  // stderr: each confirming rerun and bisect step as it starts and ends
  bisect::BisectProgressPrinter progress(line);
  r.observer = progress.Observer();
  const auto out = ValueOrThrow(bisect::RunAutoBisect(r, *store));
  line.Finish();
  for (const auto& w : out.warnings) std::fprintf(stderr, "harness: warning: %s\n", TerminalText(w).c_str());
  if (!o.junit.empty()) ValueOrThrow(WriteOutputFile(o.junit, NightlyJunit(store->reader(), out)));
  if (o.format == "json") std::printf("%s\n", DumpJson(bisect::AutoBisectJson(out)).c_str());
  else std::fputs(bisect::AutoBisectText(out).c_str(), stdout);
  return 0;
}

int Bisect(BisectOptions& o, bool replay) {
  if (o.format != "text" && o.format != "json") throw FatalError(ExitCode::kUsage, "--format is text or json");
  if (o.automatic) return AutoBisect(o);
  if (o.run || o.confirm != 1 || !o.junit.empty() || o.again)
    throw FatalError(ExitCode::kUsage, "--run, --confirm, --junit and --again go with --auto");
  bisect::BisectRequest r = o.request;
  if (replay) {
    if (!o.request.watch.empty())
      throw FatalError(ExitCode::kUsage, "a replay watches the paths its log names: leave --watch out");
    r = ValueOrThrow(bisect::ReadBisectLog(o.replay_file));
    r.jobs = o.request.jobs;
  } else {
    if (o.request.good.empty() || o.request.bad.empty()) throw FatalError(ExitCode::kUsage, "bisect needs --good and --bad");
    r.repo = o.repo;
    if (o.noise_sigma != 0) r.noise_sigma = o.noise_sigma;
    r.command_timeout_s = o.timeout_s;
  }
  r.step_start_timeout_s = o.step_start_timeout_s;
  r.db = o.db;
  r.suites_dir = o.suites_dir.empty() ? SuitesDir() : std::filesystem::path(o.suites_dir);
  auto store = ValueOrThrow(Store::Open(o.db));
  ProgressLine line;  // stderr: each step as its command starts and ends
  bisect::BisectProgressPrinter progress(line);
  r.observer = progress.Observer();
  auto outcome = ValueOrThrow(bisect::RunBisect(r, *store));
  line.Finish();
  return Report(outcome, o.format);
}

// The search's and the command's numbers (cli/numeric_option.h checks each against its range).
void AddNumericFlags(CLI::App& app, BisectOptions& o) {
  using Defaults = bisect::BisectDefaults;
  AddNumericOption(app, "--max-runs", o.request.max_runs, bisect::kMaxRunsRange, fmt::format("Commands the search may run (default {})", Defaults::kMaxRuns));
  AddNumericOption(app, "--max-culprits", o.request.max_culprits, bisect::kMaxCulpritsRange,
                   "Culprits to search for in the range, each with its own drop (default 1; at most 3)");
  AddNumericOption(app, "--confidence", o.request.confidence, bisect::kConfidenceRange,
                 fmt::format("Posterior at which it answers (default {})", Defaults::kConfidence));
  AddNumericOption(app, "--noise-sigma", o.noise_sigma, bisect::kNoiseSigmaRange,
                 "Run-to-run sd of the metric (default: 0.4 x its binomial SE, 0.3 pp at n = 1319)");
  AddNumericOption(app, "--flake-rate", o.request.flake_rate, bisect::kFlakeRateRange,
                 fmt::format("Chance a status is wrong on one run (default {})", Defaults::kFlakeRate));
  AddNumericOption(app, "--jobs", o.request.jobs, bisect::kJobsRange,
                   "Steps run at once, each in a worktree and slot of its own ({slot}: 0..K-1; default 1)");
  AddNumericOption(app, "--timeout", o.timeout_s, kTimeoutRange, "Seconds the command may take per commit (default: none)");
  AddNumericOption(app, "--step-start-timeout", o.step_start_timeout_s, kTimeoutRange,
                   "Seconds a Slurm step's job (srun, sbatch --wait) may wait to start; then it is cancelled, untestable");
}

}  // namespace

CommandMain SetupBisect(CLI::App& app) {
  auto o = std::make_shared<BisectOptions>();
  auto& r = o->request;
  app.add_option("--good", r.good, "A commit where the metric or case was good");
  app.add_option("--bad", r.bad, "A later commit (on the first-parent chain) where it is bad");
  app.add_option("--metric", r.metric, "SUITE (its headline metric, e.g. gsm8k) or SUITE/METRIC (gsm8k/accuracy)");
  // One id per --case: a vector option would otherwise take the command after `--` too.
  app.add_option("--case", r.cases,
                 "Narrow --metric to this case (repeatable); alone: bisect the cases' pass/fail statuses together")
      ->allow_extra_args(false);
  app.add_option("--watch", r.watch,
                 "A path prefix the bisected cases exercise (repeatable; beside the suites' \"watch\" lists): commits "
                 "that touch none weigh less in the prior (needs --repo)")
      ->allow_extra_args(false);
  app.add_option("--repo", o->repo, "Git repository of the commits (default: the store's first-parent order)");
  app.add_option("--db", o->db,
                 "SQLite results database (env HARNESS_DB, default harness.db); {db} and $HARNESS_DB of the command, "
                 "as an absolute path");
  app.add_option("--suites-dir", o->suites_dir, "Folder of suite tables (headline metrics; default $HARNESS_ROOT/suites)");
  AddNumericFlags(app, *o);
  app.add_option("--format", o->format, "text|json");
  app.add_flag("--full-evals", r.full_evals,
               "Every run evaluates every question: {questions} names a file of '*' (default: the questions the "
               "search chooses)");
  app.add_flag("--auto", o->automatic,
               "Find the nightly's regressions against the previous nightly, confirm and bisect each (docs/bisect.md)");
  AddNumericOption(app, "--run", o->run, kRunIdRange, "With --auto: the nightly run (default: the newest nightly)");
  AddNumericOption(app, "--confirm", o->confirm, bisect::kConfirmRange,
                 "With --auto: reruns of the bad commit that must show a regression before it is bisected (default 1)");
  app.add_flag("--again", o->again,
               "With --auto: answer the nightly anew, replacing the answer stored by an earlier bisect --auto of it "
               "(default: report that answer)");
  app.add_option("--junit", o->junit,
                 "With --auto: write the nightly's JUnit XML again, each regressed case with its culprit line");
  app.add_option("command", r.command,
                 "After --: the command run per commit, as argv ({sha}, {worktree}, {db}, {questions}, {slot})");
  auto* log = app.add_subcommand("log", "Print a stored session as a replayable log (JSON lines)");
  AddNumericOption(*log, "id", o->log_session, kRunIdRange, "Session id")->required();
  log->add_option("--db", o->db, "SQLite results database");
  auto* replay = app.add_subcommand("replay", "Continue a session from a log (edit or comment out lines first)");
  replay->add_option("file", o->replay_file, "The log")->required();
  replay->add_option("--db", o->db, "SQLite results database");
  replay->add_option("--suites-dir", o->suites_dir, "Folder of suite tables");
  replay->add_option("--format", o->format, "text|json");
  app.require_subcommand(0, 1);
  return [o, log, replay] {
    if (log->parsed()) {
      auto store = ValueOrThrow(Store::OpenReadOnly(o->db));
      std::fputs(ValueOrThrow(bisect::BisectLog(store->bisect_reader(), o->log_session)).c_str(), stdout);
      return 0;
    }
    return Bisect(*o, replay->parsed());
  };
}

}  // namespace harness
