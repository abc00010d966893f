#include "harness/golden/golden_review.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "harness/results/case_id.h"
#include "harness/util/git.h"
#include "harness/util/hash.h"
#include "harness/util/output_file.h"

namespace harness {
namespace {

std::string ReadBytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Where(const GoldenReview& r) {
  return fmt::format("run {} at {}, {}", r.latest->run_id, ShortSha(r.latest->sha), std::string(Word(r.latest->status)));
}

// Settles a change whose file write may or may not have happened, by what the file holds
// now: the new content is recorded as the change (with its own reason and time); anything
// else (the old content, or someone's edit since) drops it, recording nothing.
Result<bool> Settle(GoldenLog& store, const GoldenChange& intent) {
  RemoveOutputTemporaries(intent.path);
  if (Fnv1a64Hex(ReadBytes(intent.path)) == intent.new_hash) {
    if (auto s = store.FinishGoldenChange(intent.id); !s) return s.error();
    return true;
  }
  if (auto s = store.AbandonGoldenChange(intent.id); !s) return s.error();
  return false;
}

}  // namespace

std::vector<std::string> GoldenCases(const std::filesystem::path& root) {
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

Result<GoldenReview> LoadReview(GoldenReads& store, const std::filesystem::path& root, const std::string& case_id) {
  GoldenReview r;
  r.case_id = case_id;
  auto path = GoldenOpTablePath(root, case_id);
  if (!path) return path.error();
  r.path = *path;
  if (!std::filesystem::exists(r.path))
    return UsageError(fmt::format("{}: no golden expectation for case '{}' (cases have one per file under {})",
                                  r.path.string(), case_id, (root / "ops").string()));
  // A symlink is followed (accept replaces the file it names); a device or fifo is no expectation.
  auto target = ResolveOutputTarget(r.path);
  if (!target) return target.error();
  if (target->kind != OutputTarget::Kind::kRegular)
    return UsageError(fmt::format("{}: not a regular file; an expectation is one", r.path.string()));
  auto expected = LoadGoldenOpTable(r.path);
  if (!expected) return expected.error();
  r.expected = std::move(*expected);
  if (r.expected.case_id != case_id)
    return UsageError(fmt::format("{}: case: names '{}', but the file is the expectation of '{}'", r.path.string(),
                                  r.expected.case_id, case_id));
  auto latest = store.LatestCaseResult(case_id);
  if (!latest) return latest.error();
  r.latest = *latest;
  if (r.latest) {
    auto ops = store.Ops(r.latest->case_result_id);
    if (!ops) return ops.error();
    r.actual = std::move(*ops);
    r.check = CheckGolden(r.expected, r.actual);
  }
  return r;
}

std::vector<std::string> ReviewLines(const GoldenReview& r) {
  if (!r.latest) return {r.case_id + ": no stored result"};
  if (r.check.ok()) return {fmt::format("{}: matches {} ({})", r.case_id, r.path.string(), Where(r))};
  std::vector<std::string> out = {fmt::format("{}: differs from {} ({}):", r.case_id, r.path.string(), Where(r))};
  for (const auto& line : r.check.Lines()) out.push_back("  " + line);
  return out;
}

Json ReviewJson(const GoldenReview& r) {
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

Result<std::vector<std::string>> PendingNotes(GoldenLogReader& store) {
  auto pending = store.PendingGoldenChanges();
  if (!pending) return pending.error();
  std::vector<std::string> notes;
  for (const auto& c : *pending)
    notes.push_back(fmt::format("an interrupted golden accept of {} into {} is pending; the next golden accept "
                                "finishes or drops it", PrintableCaseId(c.case_id), c.path));
  return notes;
}

Result<SettleMessages> SettleInterrupted(GoldenLog& store, const std::filesystem::path& root) {
  auto pending = store.PendingGoldenChanges();
  if (!pending) return pending.error();
  SettleMessages out;
  for (const auto& c : *pending) {
    auto here = GoldenOpTablePath(root, c.case_id);
    if (!here || here->string() != c.path) {
      out.notes.push_back(fmt::format("an interrupted golden accept of {} into {} is pending; it is not under {}, so "
                                      "run golden accept with the --golden-dir it used to finish it",
                                      PrintableCaseId(c.case_id), c.path, root.string()));
      continue;
    }
    auto recorded = Settle(store, c);
    if (!recorded) return recorded.error();
    out.lines.push_back(*recorded ? fmt::format("{}: recorded the interrupted accept into {} ({} -> {}, reason: {})",
                                                c.case_id, c.path, c.old_hash, c.new_hash, c.reason)
                                  : fmt::format("{}: dropped the interrupted accept: {} was never rewritten",
                                                c.case_id, c.path));
  }
  return out;
}

Status CheckAcceptable(const GoldenReview& r) {
  if (!r.latest) return UsageError(fmt::format("no stored result of case '{}'", r.case_id));
  const CaseStatus s = r.latest->status;
  if (s != CaseStatus::kPass && s != CaseStatus::kFail)
    return UsageError(fmt::format("refusing to accept {}: its latest result ({}) is {}, so it has no table to trust",
                                  r.case_id, Where(r), Word(s)));
  if (r.actual.empty())
    return UsageError(
        fmt::format("refusing to accept {}: its latest result ({}) stored no op table", r.case_id, Where(r)));
  return OkStatus();
}

Result<std::string> AcceptReview(GoldenLog& store, const GoldenReview& r, const std::string& reason,
                                 const std::string& user) {
  const std::string before = ReadBytes(r.path);
  const std::string after = DumpJson(GoldenOpTableJson(AcceptActual(r.expected, r.actual))) + "\n";
  GoldenChange change{0, r.case_id, r.path.string(), Fnv1a64Hex(before), Fnv1a64Hex(after), reason,
                      r.latest->sha, user, "", r.latest->case_result_id};
  // Intent first (committed), then the file, then the record: a kill anywhere leaves an
  // intent the next accept settles by what the file holds (docs/golden.md).
  auto id = store.BeginGoldenChange(change);
  if (!id) return id.error();
  change.id = *id;
  if (Status written = WriteOutputFile(r.path, after); !written) {
    static_cast<void>(Settle(store, change));  // the rename may have happened before the folder's sync failed
    return written.error();
  }
  if (auto s = store.FinishGoldenChange(change.id); !s) return s.error();
  return fmt::format("{}: accepted into {} ({} -> {})", r.case_id, r.path.string(), change.old_hash, change.new_hash);
}

}  // namespace harness
