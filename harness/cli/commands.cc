#include "harness/cli/commands.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/error.h"
#include "harness/util/quote.h"
#include "harness/util/subprocess.h"
#include "harness/util/suggest.h"

namespace harness {
namespace {

constexpr Command kCommands[] = {
    {"run", "Run suites against a stack and store every case", SetupRun},
    {"history", "Per-commit status and metric values of one case", SetupHistory},
    {"compare", "Paired comparison of two commits' results", SetupCompare},
    {"bisect", "Find the commit that changed a metric, even when it is noisy", SetupBisect},
    {"report", "Write the self-contained HTML report of a run", SetupReport},
    {"golden", "Diff or accept golden expectations", SetupGolden},
    {"ingest", "Import results produced elsewhere (JUnit, GoogleTest JSON, lm-eval, sglang)", SetupIngest},
    {"merge", "Merge results from other databases (sharded CI jobs)", SetupMerge},
    {"prune", "Drop the samples of old runs and compact the database", SetupPrune},
    {"serve-sim", "Serve the stand-in OpenAI-compatible LM endpoint", SetupServeSim},
    {"version", "Print the harness, schema and format versions", SetupVersion},
};

}  // namespace

std::span<const Command> Commands() { return kCommands; }

std::string DefaultDbPath() {
  const char* env = std::getenv("HARNESS_DB");
  return env && *env ? env : "harness.db";
}

CommitInfo ResolveCommitOption(const std::string& rev, const std::string& repo) {
  if (rev.empty()) {
    auto c = ReadCommit(repo, "HEAD");
    if (!c) throw FatalError(ExitCode::kUsage, fmt::format("{} (pass --commit SHA when not in a git checkout)", c.error().message));
    return *c;
  }
  if (auto c = ReadCommit(repo, rev)) return *c;
  // Not a commit git knows here: stored as given, without metadata, when it is a sha.
  if (!IsHexSha(rev))
    throw FatalError(ExitCode::kUsage,
                     fmt::format("--commit '{}' is neither a hex sha (7 to 64 digits) nor a revision of the repository "
                                 "'{}'",
                                 rev, repo));
  CommitInfo c;
  c.sha = rev;
  return c;
}

int Main(int argc, char** argv) {
  // What a server, exec-stack or bisect command leaves running re-parents to us, so it
  // ends with the program that started it (harness/util/subprocess.h).
  BecomeChildSubreaper();
  CLI::App app{"harness: accuracy and regression tests for ML compiler and kernel stacks"};
  app.name("harness");
  app.require_subcommand(1);
  app.fallthrough(false);
  // An unknown command is named with the known ones (CLI11 would only say "not expected").
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto& c : kCommands) names.emplace_back(c.name);
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::string hint = DidYouMean(argv[1], names);
      if (hint.find("did you mean") != std::string::npos) hint += fmt::format(" (known: {})", fmt::join(names, ", "));
      std::fprintf(stderr, "harness: error: unknown command %s%s\n", Quote(argv[1]).c_str(), SafeMessage(hint).c_str());
      return static_cast<int>(ExitCode::kUsage);
    }
  }
  std::vector<std::pair<CLI::App*, CommandMain>> mains;
  for (const auto& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    mains.emplace_back(sub, c.setup(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "harness: error: %s\n", SafeMessage(e.what()).c_str());
    std::fprintf(stderr, "Run 'harness --help' or 'harness <command> --help'.\n");
    return static_cast<int>(ExitCode::kUsage);
  }
  try {
    for (auto& [sub, run] : mains)
      if (sub->parsed()) return run();
    return static_cast<int>(ExitCode::kUsage);
  } catch (const FatalError& e) {
    // The one place every fatal message passes: whatever user data it quotes reaches the
    // terminal cut and with its control characters escaped (util/quote.h).
    std::fprintf(stderr, "harness: error: %s\n", SafeMessage(e.message()).c_str());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "harness: error: %s\n", SafeMessage(e.what()).c_str());
    return static_cast<int>(ExitCode::kInfra);
  }
}

}  // namespace harness
