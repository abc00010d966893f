#include "harness/cli/numeric_option.h"

namespace harness {

CLI::Validator NumberValidator(const NumberRange& range) {
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        auto parsed = ParseNumberIn(text, range, "");
        return parsed ? std::string() : parsed.error().message;
      },
      "", "number-range");
}

std::string NumericTypeName(const NumberRange& range) {
  // With its range: CLI11 reports an empty value ("--port=") as "1 required TYPE missing"
  // before any validator sees it, and the range belongs in that message too.
  const std::string bounds = range.Describe();
  return (range.integer ? "INT" : "NUMBER") + bounds.substr(bounds.find(" in "));
}

}  // namespace harness
