// harness golden: review golden expectations (docs/golden.md).
//   golden diff [CASE...]                   expected vs the latest stored run's actual table
//   golden accept CASE... --reason TEXT     rewrite the expectation from that run, logged
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cli/commands.h"
#include "harness/golden/golden_ops.h"
#include "harness/results/case_id.h"
#include "harness/store/store.h"
#include "harness/util/file_lock.h"
#include "harness/util/git.h"
#include "harness/util/hash.h"
#include "harness/util/json_file.h"
#include "harness/util/output_file.h"
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

// One case under review: its expectation, the latest stored result and the check.
struct Review {
  std::string case_id;
  std::filesystem::path path;
  GoldenOpTable expected;
  std::optional<CaseRef> latest;
  std::vector<OpRow> actual;
  GoldenCheck check;
};

std::string ReadBytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every expectation file under <golden>/ops, as case ids, sorted.
std::vector<std::string> AllGoldenCases(const std::filesystem::path& root) {
  std::vector<std::string> ids;
  const auto ops = root / "ops";
  std::error_code ec;
  if (!std::filesystem::is_directory(ops, ec)) return ids;
  for (const auto& e : std::filesystem::recursive_directory_iterator(ops)) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    auto rel = std::filesystem::relative(e.path(), ops).replace_extension("");
    ids.push_back(rel.generic_string());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Review Load(ResultReader& store, const std::filesystem::path& root, const std::string& case_id) {
  Review r;
  r.case_id = case_id;
  r.path = ValueOrThrow(GoldenOpTablePath(root, case_id));
  if (!std::filesystem::exists(r.path))
    throw FatalError(ExitCode::kUsage, fmt::format("{}: no golden expectation for case '{}' (cases have one per file "
                                                   "under {})", r.path.string(), case_id, (root / "ops").string()));
  // A symlink is followed (accept replaces the file it names); a device or fifo is no expectation.
  if (ValueOrThrow(ResolveOutputTarget(r.path)).kind != OutputTarget::Kind::kRegular)
    throw FatalError(ExitCode::kUsage, fmt::format("{}: not a regular file; an expectation is one", r.path.string()));
  r.expected = ValueOrThrow(LoadGoldenOpTable(r.path));
  if (r.expected.case_id != case_id)
    throw FatalError(ExitCode::kUsage, fmt::format("{}: case: names '{}', but the file is the expectation of '{}'",
                                                   r.path.string(), r.expected.case_id, case_id));
  r.latest = ValueOrThrow(store.LatestCaseResult(case_id));
  if (r.latest) {
    r.actual = ValueOrThrow(store.Ops(r.latest->case_result_id));
    r.check = CheckGolden(r.expected, r.actual);
  }
  return r;
}

std::string Where(const Review& r) {
  return fmt::format("run {} at {}, {}", r.latest->run_id, ShortSha(r.latest->sha), std::string(Word(r.latest->status)));
}

void PrintReviewText(const Review& r) {
  if (!r.latest) {
    std::printf("%s: no stored result\n", r.case_id.c_str());
    return;
  }
  if (r.check.ok()) {
    std::printf("%s: matches %s (%s)\n", r.case_id.c_str(), r.path.string().c_str(), Where(r).c_str());
    return;
  }
  std::printf("%s: differs from %s (%s):\n", r.case_id.c_str(), r.path.string().c_str(), Where(r).c_str());
  for (const auto& line : r.check.Lines()) std::printf("  %s\n", line.c_str());
}

Json ReviewJson(const Review& r) {
  Json j{{"case", r.case_id}, {"path", r.path.string()}};
  if (!r.latest) {
    j["stored"] = false;
    return j;
  }
  Json stale = Json::array();
  for (const auto& h : r.check.stale) stale.push_back({{"from", h.from}, {"to", h.to}, {"calls", h.calls}});
  j.update({{"stored", true},
            {"run_id", r.latest->run_id},
            {"sha", r.latest->sha},
            {"status", std::string(Word(r.latest->status))},
            {"matches", r.check.ok()},
            {"differences", r.check.differences},
            {"stale", stale}});
  return j;
}

// A change a killed `golden accept` left half done: its file has been rewritten or not.
void NotePending(GoldenLog& store) {
  for (const auto& c : ValueOrThrow(store.PendingGoldenChanges()))
    std::fprintf(stderr, "harness: note: an interrupted golden accept of %s into %s is pending; the next golden accept "
                 "finishes or drops it\n", PrintableCaseId(c.case_id).c_str(), c.path.c_str());
}

int Diff(const GoldenOptions& o) {
  if (o.format != "text" && o.format != "json") throw FatalError(ExitCode::kUsage, "--format is text or json");
  auto store = ValueOrThrow(Store::OpenReadOnly(o.db));
  NotePending(*store);
  const auto root = GoldenRoot(o);
  const bool all = o.cases.empty();
  std::vector<Review> reviews;
  for (const auto& id : all ? AllGoldenCases(root) : o.cases) {
    Review r = Load(*store, root, id);
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
    for (const auto& r : reviews) PrintReviewText(r);
  }
  return static_cast<int>(differs ? ExitCode::kFail : ExitCode::kPass);
}

std::string CurrentUser() {
  if (const char* u = std::getenv("USER"); u && *u) return u;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_name) return pw->pw_name;
  return fmt::format("uid {}", getuid());
}

// Settles a change whose file write may or may not have happened, by what the file holds
// now: the new content is recorded as the change (with its own reason and time); anything
// else (the old content, or someone's edit since) drops it, recording nothing.
bool Settle(GoldenLog& store, const GoldenChange& intent) {
  RemoveOutputTemporaries(intent.path);
  if (Fnv1a64Hex(ReadBytes(intent.path)) == intent.new_hash) {
    ValueOrThrow(store.FinishGoldenChange(intent.id));
    return true;
  }
  ValueOrThrow(store.AbandonGoldenChange(intent.id));
  return false;
}

// What killed accepts left pending, settled. Only changes of this golden folder are
// touched (the path is rebuilt from the case id and compared), so a crafted or foreign
// database never makes accept read or clean up a file elsewhere.
void SettleInterrupted(GoldenLog& store, const std::filesystem::path& root) {
  for (const auto& c : ValueOrThrow(store.PendingGoldenChanges())) {
    auto here = GoldenOpTablePath(root, c.case_id);
    if (!here || here->string() != c.path) {
      std::fprintf(stderr, "harness: note: an interrupted golden accept of %s into %s is pending; it is not under "
                   "%s, so run golden accept with the --golden-dir it used to finish it\n",
                   PrintableCaseId(c.case_id).c_str(), c.path.c_str(), root.string().c_str());
      continue;
    }
    if (Settle(store, c))
      std::printf("%s: recorded the interrupted accept into %s (%s -> %s, reason: %s)\n", c.case_id.c_str(),
                  c.path.c_str(), c.old_hash.c_str(), c.new_hash.c_str(), c.reason.c_str());
    else
      std::printf("%s: dropped the interrupted accept: %s was never rewritten\n", c.case_id.c_str(), c.path.c_str());
  }
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
  SettleInterrupted(*store, root);
  // Every case is checked before any file is written: one refused case changes nothing.
  std::vector<Review> reviews;
  for (const auto& id : o.cases) {
    Review r = Load(*store, root, id);
    if (!r.latest) throw FatalError(ExitCode::kUsage, fmt::format("no stored result of case '{}' in {}", id, o.db));
    const CaseStatus s = r.latest->status;
    if (s != CaseStatus::kPass && s != CaseStatus::kFail)
      throw FatalError(ExitCode::kUsage,
                       fmt::format("refusing to accept {}: its latest result ({}) is {}, so it has no table to trust",
                                   id, Where(r), Word(s)));
    if (r.actual.empty())
      throw FatalError(ExitCode::kUsage, fmt::format("refusing to accept {}: its latest result ({}) stored no op table",
                                                     id, Where(r)));
    reviews.push_back(std::move(r));
  }
  const std::string user = CurrentUser();
  for (const auto& r : reviews) {
    PrintReviewText(r);
    if (r.check.ok()) {
      std::printf("%s: nothing to accept\n", r.case_id.c_str());
      continue;
    }
    const std::string before = ReadBytes(r.path);
    const std::string after = DumpJson(GoldenOpTableJson(AcceptActual(r.expected, r.actual))) + "\n";
    GoldenChange change{0, r.case_id, r.path.string(), Fnv1a64Hex(before), Fnv1a64Hex(after), o.reason,
                        r.latest->sha, user, "", r.latest->case_result_id};
    // Intent first (committed), then the file, then the record: a kill anywhere leaves an
    // intent the next accept settles by what the file holds (docs/golden.md).
    change.id = ValueOrThrow(store->BeginGoldenChange(change));
    if (Status written = WriteOutputFile(r.path, after); !written) {
      Settle(*store, change);  // the rename may have happened before the folder's sync failed
      throw FatalError(written.error());
    }
    ValueOrThrow(store->FinishGoldenChange(change.id));
    std::printf("%s: accepted into %s (%s -> %s)\n", r.case_id.c_str(), r.path.string().c_str(),
                change.old_hash.c_str(), change.new_hash.c_str());
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
