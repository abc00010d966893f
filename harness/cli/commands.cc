#include "harness/cli/commands.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>
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

namespace {

// Runs the parsed command; a FatalError is "harness: error: ..." and its exit code.
int RunParsed(const std::vector<std::pair<CLI::App*, CommandMain>>& mains) {
  try {
    for (const auto& [sub, run] : mains)
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

// An unknown command is named with the known ones (CLI11 would only say "not expected").
// Returns the message, or "" when argv[1] is a command or an option.
std::string UnknownCommand(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  std::vector<std::string> names;
  for (const auto& c : kCommands) names.emplace_back(c.name);
  if (std::find(names.begin(), names.end(), argv[1]) != names.end()) return "";
  std::string hint = DidYouMean(argv[1], names);
  if (hint.find("did you mean") != std::string::npos) hint += fmt::format(" (known: {})", fmt::join(names, ", "));
  return fmt::format("unknown command {}{}", Quote(argv[1]), hint);
}

// For each --flag of argv that the parsed command does not have, " --flag: did you mean
// '--x'?" (CLI11 lists what it did not expect and suggests nothing). Values that start with
// "--" are named too, but only after the parse has already failed.
std::string FlagSuggestions(const CLI::App& command, int argc, char** argv) {
  std::vector<std::string> known;
  for (const CLI::Option* opt : command.get_options())
    for (const auto& name : opt->get_lnames()) known.push_back("--" + name);
  std::string out;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--")) continue;
    const std::string flag(arg.substr(0, arg.find('=')));
    if (std::find(known.begin(), known.end(), flag) != known.end()) continue;
    out += fmt::format("\nharness: unknown option '{}' of '{}'{}", flag, command.get_name(), DidYouMean(flag, known));
  }
  return out;
}

}  // namespace

int Main(int argc, char** argv) {
  // What a server, exec-stack or bisect command leaves running re-parents to us, so it
  // ends with the program that started it (harness/util/subprocess.h).
  BecomeChildSubreaper();
  CLI::App app{"harness: accuracy and regression tests for ML compiler and kernel stacks"};
  app.name("harness");
  app.require_subcommand(1);
  app.fallthrough(false);
  if (const std::string unknown = UnknownCommand(argc, argv); !unknown.empty()) {
    std::fprintf(stderr, "harness: error: %s\n", SafeMessage(unknown).c_str());
    return static_cast<int>(ExitCode::kUsage);
  }
  // `harness --version` is `harness version`, as most tools spell it.
  std::vector<char*> args(argv, argv + argc);
  static char version_command[] = "version";
  if (argc == 2 && std::string_view(argv[1]) == "--version") args[1] = version_command;
  std::vector<std::pair<CLI::App*, CommandMain>> mains;
  for (const auto& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    mains.emplace_back(sub, c.setup(*sub));
  }
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string hints;
    for (auto& [sub, run] : mains)
      if (sub->parsed()) hints = FlagSuggestions(*sub, argc, argv);
    std::fprintf(stderr, "harness: error: %s%s\n", SafeMessage(e.what()).c_str(), SafeMessage(hints).c_str());
    std::fprintf(stderr, "Run 'harness --help' or 'harness <command> --help'.\n");
    return static_cast<int>(ExitCode::kUsage);
  }
  return RunParsed(mains);
}

}  // namespace harness
