#include <cstdio>
#include <utility>

#include <CLI/CLI.hpp>

#include "harness/cli/commands.h"
#include "harness/store/store.h"
#include "harness/util/versions.h"

namespace harness {

CommandMain SetupVersion(CLI::App&) {
  return [] {
    std::printf("harness %s\n", kHarnessVersion);
    std::printf("store schema %d\n", Store::kSchemaVersion);
    const std::pair<const char*, int> formats[] = {
        {"suite table format", kSuiteTableFormat},     {"stack config format", kStackConfigFormat},
        {"regression catalogue format", kCatalogueFormat}, {"golden op table format", kGoldenOpsFormat},
        {"device profile format", kDeviceProfileFormat}, {"sim profile format", kSimProfileFormat},
        {"exec protocol format", kExecProtocolFormat},   {"performance table JSON format", kPerfTableFormat},
        {"run summary JSON format", kRunSummaryFormat},  {"history JSON format", kHistoryFormat},
        {"run identity format", kRunIdentityFormat},
        {"bisect log format", kBisectLogFormat},       {"bisect JSON format", kBisectJsonFormat},     {"report format", kReportFormat},
        {"compare JSON format", kCompareFormat},          {"golden diff JSON format", kGoldenDiffFormat},
    };
    for (const auto& [name, version] : formats) std::printf("%s %d\n", name, version);
    return 0;
  };
}

}  // namespace harness
