// The CLI: a static table of subcommands {name, one-line help, setup}. A setup adds the
// command's options to its CLI11 subcommand and returns the function to run after
// parsing. Everything but main() is here, in the harness_cli library, so tests can link it
// (cli_test checks the table in-process; the e2e tests run the binary).
#pragma once

#include <functional>
#include <span>
#include <string>

#include "harness/util/git.h"

namespace CLI {
class App;
}

namespace harness {

using CommandMain = std::function<int()>;

struct Command {
  const char* name;
  const char* help;
  CommandMain (*setup)(CLI::App& app);
};

std::span<const Command> Commands();

// Parses argv, runs the command, and turns a FatalError into "harness: error: ..." and
// its exit code. Returns the process exit code. Makes the process the child subreaper of
// what it starts first (util/subprocess.h, BecomeChildSubreaper).
int Main(int argc, char** argv);

// Setups, one per command file (cmd_<name>.cc).
CommandMain SetupRun(CLI::App& app);
CommandMain SetupHistory(CLI::App& app);
CommandMain SetupReport(CLI::App& app);
CommandMain SetupServeSim(CLI::App& app);
CommandMain SetupVersion(CLI::App& app);
CommandMain SetupCompare(CLI::App& app);
CommandMain SetupBisect(CLI::App& app);
CommandMain SetupGolden(CLI::App& app);
CommandMain SetupIngest(CLI::App& app);
CommandMain SetupMerge(CLI::App& app);
CommandMain SetupPrune(CLI::App& app);

// Shared option helpers.
std::string DefaultDbPath();  // $HARNESS_DB or harness.db
// --commit / --repo: rev read from repo (HEAD when empty); a hex sha git does not know
// there is stored as given, without metadata. Anything else throws a usage error.
CommitInfo ResolveCommitOption(const std::string& rev, const std::string& repo);

}  // namespace harness
