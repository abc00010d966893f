// harness merge OUT.db IN.db...: joins the databases of sharded CI jobs (or any harness
// databases) into one. Exit 0 merged, 1 merged but a nightly it added runs to lacks shards
// (named on stderr: the merged database is still the data), 2 usage, 3 an input that is
// newer, foreign or corrupt.
#include <chrono>
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/store/nightly_shards.h"
#include "harness/store/store.h"
#include "harness/util/progress_line.h"

namespace harness {
namespace {

struct MergeOptions {
  std::string out;
  std::vector<std::string> inputs;
};

void PrintCounts(const std::string& in, const MergeCounts& c) {
  std::printf("%s: %lld runs added (%lld already held), %lld cases, %lld metrics, %lld samples, %lld op rows, "
              "%lld golden changes, %lld bisect sessions, %lld ingested files\n",
              in.c_str(), static_cast<long long>(c.runs_added), static_cast<long long>(c.runs_present),
              static_cast<long long>(c.cases), static_cast<long long>(c.metrics), static_cast<long long>(c.samples),
              static_cast<long long>(c.op_rows), static_cast<long long>(c.golden_changes),
              static_cast<long long>(c.bisect_sessions), static_cast<long long>(c.ingested_files));
  std::fflush(stdout);  // before the next progress line on stderr
}

std::string Elapsed(std::chrono::steady_clock::time_point start) {
  return DurationWords(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// The inputs left at the mean time of those merged so far.
std::string Left(std::chrono::steady_clock::time_point start, std::size_t done, std::size_t all) {
  const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return DurationWords(spent / static_cast<double>(done) * static_cast<double>(all - done));
}

int Merge(const MergeOptions& o) {
  if (o.out.empty()) throw FatalError(ExitCode::kUsage, "merge: name the output database (harness merge OUT.db IN.db...)");
  std::error_code ec;
  for (const auto& in : o.inputs) {
    if (!std::filesystem::exists(in, ec)) throw FatalError(ExitCode::kUsage, fmt::format("{}: no such database", in));
    if (std::filesystem::equivalent(in, o.out, ec))
      throw FatalError(ExitCode::kUsage, fmt::format("{}: is also the output; merge into another file", in));
  }
  // Every input is checked before any is copied, so a bad one among many changes nothing.
  for (const auto& in : o.inputs) ValueOrThrow(Store::CheckMergeInput(in));
  auto store = ValueOrThrow(Store::Open(o.out));
  MergeCounts total;
  ProgressLine line;  // stderr: which input, how far, how long
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < o.inputs.size(); ++i) {
    const std::string& in = o.inputs[i];
    line.Show(fmt::format("merge {}/{}: merging {} | {} elapsed", i + 1, o.inputs.size(), in, Elapsed(start)));
    MergeCounts c = ValueOrThrow(store->MergeFrom(in));
    line.Show(fmt::format("merge {}/{}: {}: {} runs added | {} elapsed, about {} left", i + 1, o.inputs.size(), in,
                          c.runs_added, Elapsed(start), Left(start, i + 1, o.inputs.size())));
    line.Clear();
    PrintCounts(in, c);
    total.runs_added += c.runs_added;
    total.cases += c.cases;
    total.nightlies.insert(c.nightlies.begin(), c.nightlies.end());
  }
  line.Finish();
  std::printf("merged %zu databases into %s: %lld runs, %lld cases added\n", o.inputs.size(), o.out.c_str(),
              static_cast<long long>(total.runs_added), static_cast<long long>(total.cases));
  // A lost shard job must not leave a green nightly: name every gap of the nightlies this
  // merge wrote into (older nightlies the output already held are not this merge's to judge).
  // A re-run shard job stored a second attempt of its shard: the latest finished one is the
  // nightly's, the others stay as reruns (RunRow::superseded_by); say which, so nothing is
  // counted twice silently.
  bool incomplete = false;
  for (const auto& nightly : total.nightlies) {
    const auto runs = ValueOrThrow(store->reader().NightlyRuns(nightly));
    for (const auto& text : ReplacedAttemptTexts(runs)) std::printf("%s\n", text.c_str());
    for (const auto& gap : NightlyGaps(runs)) {
      std::fprintf(stderr, "harness merge: incomplete %s\n", NightlyGapText(gap).c_str());
      incomplete = true;
    }
  }
  return incomplete ? 1 : 0;
}

}  // namespace

CommandMain SetupMerge(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  app.add_option("out", o->out, "Database to merge into (created when missing)")->required();
  app.add_option("inputs", o->inputs, "Databases to merge from (any number; each is only read)")->required();
  return [o] { return Merge(*o); };
}

}  // namespace harness
