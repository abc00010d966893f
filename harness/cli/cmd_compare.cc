// harness compare A B: the stored results of two commits (or runs) side by side. Exit 1
// when B regressed against A, 2 on bad input.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/compare/compare.h"
#include "harness/store/store.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"
#include "reports/compare_report.h"

namespace harness {
namespace {

struct CompareOptions {
  std::string a, b;
  CompareFilter filter;
  std::string format = "text";
  std::string db = DefaultDbPath();
  std::string repo;
  bool all = false;
};

// With --repo, a side git can name (HEAD~1, a tag, a short sha) is its full sha; then the
// store's rule (a stored sha or a unique prefix of one). A revision git does not know there
// falls back to that rule: commits stored without git are named by sha alone.
CompareSide Side(CompareReads& store, const CompareOptions& o, const std::string& spec) {
  if (!o.repo.empty() && !spec.starts_with("run:"))
    if (auto c = ReadCommit(o.repo, spec)) {
      CompareSide side = ValueOrThrow(ResolveSide(store, c->sha));
      side.spec = spec;
      return side;
    }
  auto side = ResolveSide(store, spec);
  if (!side && o.repo.empty() && !IsHexSha(spec) && !spec.starts_with("run:"))
    throw FatalError(ExitCode::kUsage, fmt::format("{} (a git revision such as HEAD~1 needs --repo DIR)", side.error().message));
  return ValueOrThrow(std::move(side));
}

int Compare(const CompareOptions& o) {
  if (o.format != "text" && o.format != "json") throw FatalError(ExitCode::kUsage, "--format is text or json");
  auto store = ValueOrThrow(Store::OpenReadOnly(o.db));
  const CompareSide a = Side(store->reader(), o, o.a);
  const CompareSide b = Side(store->reader(), o, o.b);
  const Comparison c = ValueOrThrow(CompareStored(store->reader(), a, b, o.filter));
  if (o.format == "json") {
    std::printf("%s\n", DumpJson(reports::CompareJson(c)).c_str());
  } else {
    std::fputs(reports::CompareText(c, o.all).c_str(), stdout);
  }
  return c.regressed() ? 1 : 0;
}

}  // namespace

CommandMain SetupCompare(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  app.add_option("A", o->a, "The old side: a commit sha (a unique prefix will do), run:ID, or with --repo any git revision")->required();
  app.add_option("B", o->b, "The new side, compared against A")->required();
  app.add_option("--suite", o->filter.suite, "Only cases of this suite");
  app.add_option("--case", o->filter.case_glob, "Only case ids matching this glob, e.g. 'gmm/*_3'");
  app.add_option("--format", o->format, "text|json");
  app.add_option("--db", o->db, "SQLite results database (env HARNESS_DB, default harness.db)");
  app.add_flag("--all", o->all, "List unchanged cases and latency/throughput metrics too (text; JSON always has them)");
  app.add_option("--repo", o->repo, "Git repository that names A and B as revisions (HEAD~1, tags, branches)");
  return [o] { return Compare(*o); };
}

}  // namespace harness
