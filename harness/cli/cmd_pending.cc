// Commands whose capability belongs to a later piece of work. They say so and exit 2
// instead of pretending: a CI job that calls one fails loudly.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "harness/cli/commands.h"
#include "harness/util/error.h"

namespace harness {
namespace {

CommandMain Pending(CLI::App& app, const char* what) {
  app.allow_extras();
  return [&app, what] {
    std::fprintf(stderr, "harness: error: '%s' is not available in this version: %s\n", app.get_name().c_str(), what);
    return static_cast<int>(ExitCode::kUsage);
  };
}

}  // namespace

CommandMain SetupMerge(CLI::App& app) { return Pending(app, "merging sharded databases arrives with the merge work"); }

}  // namespace harness
