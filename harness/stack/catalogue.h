// golden/regressions.json: the known regressions, each with the reference stack's fault
// switch that reproduces it, the suite cases that must catch it and the message they
// must fail with.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/util/error.h"

namespace harness {

struct Regression {
  std::string fault;
  std::string summary;
  std::vector<std::string> cases;
  std::string message;
};

Result<std::vector<Regression>> LoadCatalogue(const std::filesystem::path& path);
// Checks every name against the catalogue; an unknown one lists the known faults.
Status ValidateFaults(const std::vector<std::string>& faults, const std::vector<Regression>& catalogue);

}  // namespace harness
