// harness golden: review golden expectations (docs/golden.md; the work is harness/golden/golden_review.h).
//   golden diff [CASE...]                   expected vs the latest stored run's actual table
//   golden accept CASE... --reason TEXT     rewrite the expectation from that run, logged
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cli/commands.h"
#include "harness/golden/golden_review.h"
#include "harness/store/store.h"
#include "harness/util/file_lock.h"
#include "harness/util/json_file.h"
#include "harness/util/paths.h"
#include "harness/util/versions.h"

namespace harness {
namespace {

struct GoldenOptions {
  std::vector<std::string> cases;
  std::string reason;
  std::string format = "text";
  std::string db = DefaultDbPath();
  std::string golden_dir;  // empty: $HARNESS_ROOT/golden
};

std::filesystem::path GoldenRoot(const GoldenOptions& o) {
  return o.golden_dir.empty() ? GoldenDir() : std::filesystem::path(o.golden_dir);
}

void Print(const std::vector<std::string>& lines) {
  for (const auto& line : lines) std::printf("%s\n", line.c_str());
}

void Note(const std::vector<std::string>& notes) {
  for (const auto& note : notes) std::fprintf(stderr, "harness: note: %s\n", note.c_str());
}

int Diff(const GoldenOptions& o) {
  if (o.format != "text" && o.format != "json") throw FatalError(ExitCode::kUsage, "--format is text or json");
  auto store = ValueOrThrow(Store::OpenReadOnly(o.db));
  Note(ValueOrThrow(PendingNotes(store->golden_reader())));
  const auto root = GoldenRoot(o);
  const bool all = o.cases.empty();
  std::vector<GoldenReview> reviews;
  for (const auto& id : all ? GoldenCases(root) : o.cases) {
    GoldenReview r = ValueOrThrow(LoadReview(store->reader(), root, id));
    if (!all && !r.latest)
      throw FatalError(ExitCode::kUsage, fmt::format("no stored result of case '{}' in {}", id, o.db));
    reviews.push_back(std::move(r));
  }
  bool differs = false;
  for (const auto& r : reviews) differs = differs || (r.latest && !r.check.ok());
  if (o.format == "json") {
    Json cases = Json::array();
    for (const auto& r : reviews) cases.push_back(ReviewJson(r));
    std::printf("%s\n", DumpJson(Json{{"format_version", kGoldenDiffFormat}, {"cases", cases}}).c_str());
  } else {
    for (const auto& r : reviews) Print(ReviewLines(r));
  }
  return static_cast<int>(differs ? ExitCode::kFail : ExitCode::kPass);
}

std::string CurrentUser() {
  if (const char* u = std::getenv("USER"); u && *u) return u;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_name) return pw->pw_name;
  return fmt::format("uid {}", getuid());
}

int Accept(const GoldenOptions& o) {
  if (o.cases.empty()) throw FatalError(ExitCode::kUsage, "name the case(s) to accept");
  if (o.reason.find_first_not_of(" \t\n") == std::string::npos)
    throw FatalError(ExitCode::kUsage, "--reason must say why the expectation changes");
  if (!std::filesystem::exists(o.db)) throw FatalError(ExitCode::kUsage, fmt::format("{}: no such database", o.db));
  // One accept at a time per database: the next one settles what a killed one left, and
  // must never settle the change of one that is still writing its file.
  const auto lock = ValueOrThrow(FileLock::Acquire(o.db + ".golden.lock", FileLock::Wait::kYes));
  auto store = ValueOrThrow(Store::Open(o.db));
  const auto root = GoldenRoot(o);
  const SettleMessages settled = ValueOrThrow(SettleInterrupted(store->golden_log(), root));
  Note(settled.notes);
  Print(settled.lines);
  // Every case is checked before any file is written: one refused case changes nothing.
  std::vector<GoldenReview> reviews;
  for (const auto& id : o.cases) {
    GoldenReview r = ValueOrThrow(LoadReview(store->reader(), root, id));
    if (!r.latest) throw FatalError(ExitCode::kUsage, fmt::format("no stored result of case '{}' in {}", id, o.db));
    ValueOrThrow(CheckAcceptable(r));
    reviews.push_back(std::move(r));
  }
  const std::string user = CurrentUser();
  for (const auto& r : reviews) {
    Print(ReviewLines(r));
    if (r.check.ok()) {
      std::printf("%s: nothing to accept\n", r.case_id.c_str());
      continue;
    }
    std::printf("%s\n", ValueOrThrow(AcceptReview(store->golden_log(), r, o.reason, user)).c_str());
  }
  return static_cast<int>(ExitCode::kPass);
}

void CommonOptions(CLI::App& sub, GoldenOptions& o) {
  sub.add_option("--db", o.db, "SQLite results database (env HARNESS_DB, default harness.db)");
  sub.add_option("--golden-dir", o.golden_dir, "Folder of golden expectations (default: $HARNESS_ROOT/golden)");
}

}  // namespace

CommandMain SetupGolden(CLI::App& app) {
  auto o = std::make_shared<GoldenOptions>();
  app.require_subcommand(1);
  CLI::App* diff = app.add_subcommand("diff", "Expected vs the latest stored run's op table, with stale hints "
                                              "(exit 1 when any case differs)");
  diff->add_option("cases", o->cases, "Case ids (default: every case with an expectation file)");
  diff->add_option("--format", o->format, "text|json");
  CommonOptions(*diff, *o);
  CLI::App* accept = app.add_subcommand("accept", "Rewrite the expectations of CASE... from their latest stored run");
  accept->add_option("cases", o->cases, "Case ids, e.g. gmm/test_qwen3_dynamic_quant_3")->required();
  accept->add_option("--reason", o->reason, "Why the expectation changes (recorded in the store)")->required();
  CommonOptions(*accept, *o);
  return [o, diff] { return diff->parsed() ? Diff(*o) : Accept(*o); };
}

}  // namespace harness
