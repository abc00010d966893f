#include <cstdio>

#include <CLI/CLI.hpp>

#include "harness/commands.h"
#include "harness/store.h"
#include "harness/version.h"
#include "reports/html_report.h"

namespace harness {

CommandMain SetupVersion(CLI::App&) {
  return [] {
    std::printf("harness %s\nstore schema %d\nsuite table format 1\nstack config format 1\nrun summary JSON format 1\n"
                "HTML report format %d\n",
                kVersion, Store::kSchemaVersion, reports::kHtmlReportVersion);
    return 0;
  };
}

}  // namespace harness
