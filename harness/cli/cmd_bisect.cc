// harness bisect: find the commit that changed a metric or a case's status, even when the
// metric is noisy (harness/bisect/). Exit 0 when it answered (culprit, no-culprit or
// ambiguous), 2 on bad input, 3 when the command failed in a way that is no answer.
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/bisect/bisect_output.h"
#include "harness/bisect/bisector.h"
#include "harness/cli/commands.h"
#include "harness/util/paths.h"

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
  int64_t log_session = 0;
  std::string replay_file;
};

int Report(const bisect::BisectOutcome& out, const std::string& format) {
  if (format == "json") std::printf("%s\n", DumpJson(bisect::BisectOutcomeJson(out)).c_str());
  else std::fputs(bisect::BisectOutcomeText(out).c_str(), stdout);
  return 0;
}

int Bisect(BisectOptions& o, bool replay) {
  if (o.format != "text" && o.format != "json") throw FatalError(ExitCode::kUsage, "--format is text or json");
  bisect::BisectRequest r = o.request;
  if (replay) {
    std::ifstream in(o.replay_file, std::ios::binary);
    if (!in) throw FatalError(ExitCode::kUsage, fmt::format("{}: cannot read", o.replay_file));
    std::stringstream text;
    text << in.rdbuf();
    r = ValueOrThrow(bisect::ParseBisectLog(text.str(), o.replay_file));
  } else {
    if (o.request.good.empty() || o.request.bad.empty()) throw FatalError(ExitCode::kUsage, "bisect needs --good and --bad");
    r.repo = o.repo;
    if (o.noise_sigma != 0) r.noise_sigma = o.noise_sigma;
    r.command_timeout_s = o.timeout_s;
  }
  r.db = o.db;
  r.suites_dir = o.suites_dir.empty() ? SuitesDir() : std::filesystem::path(o.suites_dir);
  auto store = ValueOrThrow(Store::Open(o.db));
  return Report(ValueOrThrow(bisect::RunBisect(r, *store)), o.format);
}

}  // namespace

CommandMain SetupBisect(CLI::App& app) {
  auto o = std::make_shared<BisectOptions>();
  auto& r = o->request;
  app.add_option("--good", r.good, "A commit where the metric or case was good");
  app.add_option("--bad", r.bad, "A later commit (on the first-parent chain) where it is bad");
  app.add_option("--metric", r.metric, "SUITE (its headline metric, e.g. gsm8k) or SUITE/METRIC (gsm8k/accuracy)");
  app.add_option("--case", r.case_id, "Narrow --metric to one case; alone: bisect that case's pass/fail status");
  app.add_option("--repo", o->repo, "Git repository of the commits (default: the store's first-parent order)");
  app.add_option("--db", o->db,
                 "SQLite results database (env HARNESS_DB, default harness.db); {db} and $HARNESS_DB of the command, "
                 "as an absolute path");
  app.add_option("--suites-dir", o->suites_dir, "Folder of suite tables (headline metrics; default $HARNESS_ROOT/suites)");
  app.add_option("--max-runs", r.max_runs, "Commands the search may run (default 60)");
  app.add_option("--confidence", r.confidence, "Posterior at which it answers (default 0.95)");
  app.add_option("--noise-sigma", o->noise_sigma,
                 "Run-to-run sd of the metric (default: 0.4 x its binomial SE, 0.3 pp at n = 1319)");
  app.add_option("--flake-rate", r.flake_rate, "Chance a status is wrong on one run (default 0.01)");
  app.add_option("--timeout", o->timeout_s, "Seconds the command may take per commit, in (0, 86400] (default: none)");
  app.add_option("--format", o->format, "text|json");
  app.add_option("command", r.command, "After --: the command run per commit, as argv ({sha}, {worktree}, {db})");
  auto* log = app.add_subcommand("log", "Print a stored session as a replayable log (JSON lines)");
  log->add_option("id", o->log_session, "Session id")->required();
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
      std::fputs(ValueOrThrow(bisect::BisectLog(*store, o->log_session)).c_str(), stdout);
      return 0;
    }
    return Bisect(*o, replay->parsed());
  };
}

}  // namespace harness
