// The CLI surface: the command table, --help for every command, exit codes for usage errors.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/cli/commands.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::RunHarness;

TEST(Cli, TableHasEveryDesignedCommandInOrder) {
  std::vector<std::string> names;
  for (const auto& c : Commands()) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"run", "history", "compare", "bisect", "report", "golden", "ingest",
                                             "merge", "prune", "serve-sim", "version"}));
}

TEST(Cli, EveryCommandHasHelp) {
  for (const auto& c : Commands()) {
    auto r = RunHarness({c.name, "--help"});
    EXPECT_EQ(r.exit_code, 0) << c.name;
    EXPECT_NE(r.out.find(c.help), std::string::npos) << c.name << ": " << r.out;
  }
}

TEST(Cli, UnknownCommandOrFlagIsUsageError) {
  auto r = RunHarness({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("harness: error:"), std::string::npos);
  EXPECT_EQ(RunHarness({"run", "--no-such-flag"}).exit_code, 2);
}

TEST(Cli, VersionPrintsFormatVersions) {
  auto r = RunHarness({"version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("store schema"), std::string::npos);
}

// A numeric option of some command, as the command table builds it.
struct NumericOption {
  std::vector<std::string> command;  // "bisect", "log"
  std::string name;                  // "--confidence", or a positional's name
  bool positional = false;
  std::string help;
};

// Calls visit(command path, option) for every option of app and its subcommands.
void ForEachOption(CLI::App* app, const std::vector<std::string>& command,
                   const std::function<void(const std::vector<std::string>&, const CLI::Option*)>& visit) {
  for (const CLI::Option* opt : app->get_options()) visit(command, opt);
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    auto path = command;
    path.push_back(sub->get_name());
    ForEachOption(sub, path, visit);
  }
}

// Every option of every command, walked in the command table as Main builds it: a flag added
// later is walked too.
void ForEveryOption(const std::function<void(const std::vector<std::string>&, const CLI::Option*)>& visit) {
  CLI::App app;
  for (const auto& c : Commands()) c.setup(*app.add_subcommand(c.name, c.help));
  ForEachOption(&app, {}, visit);
}

std::vector<NumericOption> EveryNumericOption() {
  std::vector<NumericOption> found;
  ForEveryOption([&](const std::vector<std::string>& command, const CLI::Option* opt) {
    const std::string type = opt->get_type_name();
    const std::string word = type.substr(0, type.find(' '));
    if (opt->get_type_size() == 0 || (word != "INT" && word != "UINT" && word != "FLOAT" && word != "NUMBER")) return;
    found.push_back({command, opt->get_name(), !opt->nonpositional(), opt->get_description()});
  });
  return found;
}

// A repeatable flag takes one value per flag. CLI11 lets a vector option take every word
// after it, so `bisect --case ID -- CMD ARGS` once handed the command to --case; each such
// flag must say allow_extra_args(false), and a flag added later is checked here.
TEST(Cli, EveryRepeatableFlagTakesOneValuePerFlag) {
  std::set<std::string> repeatable;
  ForEveryOption([&](const std::vector<std::string>& command, const CLI::Option* opt) {
    if (!opt->nonpositional() || opt->get_items_expected_max() <= 1) return;
    const std::string name = fmt::format("{} {}", fmt::join(command, " "), opt->get_name());
    repeatable.insert(name);
    EXPECT_FALSE(opt->get_allow_extra_args()) << name << " takes the words after its value as more values";
  });
  for (const char* known : {"bisect --case", "bisect --watch", "report --also", "run --suite", "run --fault"})
    EXPECT_TRUE(repeatable.count(known)) << known << " not found among " << fmt::format("{}", fmt::join(repeatable, ", "));
}

TEST(Cli, EveryNumericFlagRefusesHostileValuesNamingFlagValueAndRange) {
  const auto options = EveryNumericOption();
  std::set<std::string> names;
  for (const auto& o : options) names.insert(fmt::format("{} {}", fmt::join(o.command, " "), o.name));
  // The walk finds what it should (a CLI11 change in type names would otherwise make it vacuous).
  for (const char* known : {"bisect --confidence", "bisect --flake-rate", "bisect --max-runs", "bisect --timeout",
                            "serve-sim --port", "run --seed", "prune --keep-samples-days", "bisect log id"})
    EXPECT_TRUE(names.count(known)) << known << " not found among " << fmt::format("{}", fmt::join(names, ", "));
  const std::vector<std::string> hostile = {"nan", "inf", "-inf", "NaN", "0x50", "", "5junk", " 7", "1e999",
                                            "99999999999999999999999", "-99999999", "1e30", "\x1b[2J7",
                                            std::string(100000, '9')};
  for (const auto& o : options) {
    // Its range is in its help, where `--help` and the docs show it.
    EXPECT_TRUE(o.help.find(" in [") != std::string::npos || o.help.find(" in (") != std::string::npos)
        << o.name << ": " << o.help;
    for (const std::string& value : hostile) {
      std::vector<std::string> args = o.command;
      // --flag=VALUE and -- VALUE: "-inf" is then the value, not an option's name.
      if (o.positional) args.insert(args.end(), {"--", value});
      else args.push_back(o.name + "=" + value);
      auto r = RunHarness(args, {.timeout_s = 30});
      const std::string shown = value.size() > 40 ? value.substr(0, 40) + "..." : value;
      EXPECT_EQ(r.exit_code, 2) << o.name << " " << shown << ": " << r.err;
      EXPECT_NE(r.err.find(o.name), std::string::npos) << o.name << " " << shown << ": " << r.err;
      EXPECT_TRUE(r.err.find("in [") != std::string::npos || r.err.find("in (") != std::string::npos)
          << o.name << " " << shown << ": " << r.err;
      EXPECT_LT(r.err.size(), 2000u) << o.name << ": the value is quoted cut";
      EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << o.name << ": ESC reached the terminal raw";
    }
  }
}

// The same ranges hold where the numbers come from a file: a replayed bisect log whose
// header was edited to a confidence, flake rate or run budget no flag would accept.
// The log of a small status bisect stored in dir/h.db: its session line and the rest.
struct SessionLog {
  Json header;
  std::string rest;
  // The log with its session line changed by `change`, as dir/edited.log, replayed into dir/h.db.
  auto ReplayEdited(const testing_util::TempDir& dir, const std::function<void(Json&)>& change) const {
    Json edited = header;
    change(edited);
    testing_util::WriteFile(dir / "edited.log", edited.dump() + rest);
    return RunHarness({"bisect", "replay", (dir / "edited.log").string(), "--db", (dir / "h.db").string()});
  }
};
SessionLog StatusBisectLog(const testing_util::TempDir& dir) {
  auto shas = testing_util::MakeGitRepo(dir / "repo", 4, [](int i) {
    return std::map<std::string, std::string>{{"test.sh", i >= 3 ? "exit 1\n" : "exit 0\n"}};
  });
  const std::string db = (dir / "h.db").string();
  auto ok = RunHarness({"bisect", "--good", shas[0], "--bad", shas[3], "--case", "x/y_0", "--repo",
                        (dir / "repo").string(), "--db", db, "--", "sh", "{worktree}/test.sh"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  auto log = RunHarness({"bisect", "log", "1", "--db", db});
  EXPECT_EQ(log.exit_code, 0) << log.err;
  const std::string header = log.out.substr(0, log.out.find('\n'));
  auto parsed = ParseJson(header, "header");
  EXPECT_TRUE(parsed.ok()) << header;
  return {parsed.ok() ? *parsed : Json(), log.out.substr(log.out.find('\n'))};
}

TEST(Cli, AReplayedLogsNumbersAreCheckedAgainstTheFlagsRanges) {
  testing_util::TempDir dir;
  const SessionLog log = StatusBisectLog(dir);
  ASSERT_TRUE(log.header.is_object());
  const std::vector<std::pair<std::string, Json>> bad = {
      {"confidence", 1.5}, {"confidence", 0.5}, {"flake_rate", -5}, {"flake_rate", 0.5},
      {"max_runs", 1000000000000LL}, {"max_runs", -1}, {"noise_sigma", 0}, {"noise_sigma", 1e300}};
  for (const auto& edit : bad) {
    const auto& [field, value] = edit;
    auto r = log.ReplayEdited(dir, [&edit](Json& h) { h[edit.first] = edit.second; });
    EXPECT_EQ(r.exit_code, 2) << field << " " << value.dump() << ": " << r.err;
    EXPECT_NE(r.err.find(field), std::string::npos) << r.err;
    EXPECT_TRUE(r.err.find(" in [") != std::string::npos || r.err.find(" in (") != std::string::npos)
        << field << " " << value.dump() << ": " << r.err;
  }
}

// A replayed log's target is what the search is built from: one series per case plus the
// status series, and a status or a metric to bisect. An edited one is exit 2 naming the
// field, before anything runs or is stored.
TEST(Cli, AReplayedLogsTargetIsCheckedNamingItsField) {
  testing_util::TempDir dir;
  const SessionLog log = StatusBisectLog(dir);
  ASSERT_TRUE(log.header.is_object() && log.header.contains("target")) << log.header.dump();
  const std::pair<std::string, std::function<void(Json&)>> edits[] = {
      {"target: missing", [](Json& h) { h.erase("target"); }},
      {"target.specs: one per case plus one", [](Json& h) { h["target"]["specs"].erase(0); }},
      {"target.specs: one per case plus one", [](Json& h) { h["target"]["specs"].push_back(h["target"]["specs"][0]); }},
      {"target: names neither a status nor a metric", [](Json& h) { h["target"]["status"] = false; }}};
  for (const auto& [says, change] : edits) {
    auto r = log.ReplayEdited(dir, change);
    EXPECT_EQ(r.exit_code, 2) << says << ": " << r.err;
    EXPECT_NE(r.err.find("edited.log:1: " + says), std::string::npos) << r.err;
  }
  auto sessions = RunHarness({"bisect", "log", "2", "--db", (dir / "h.db").string()});
  EXPECT_EQ(sessions.exit_code, 2) << "no edited log was stored as a session: " << sessions.out;
}

}  // namespace
}  // namespace harness
