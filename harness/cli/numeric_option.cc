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

std::string NumericTypeName(const NumberRange& range) { return range.integer ? "INT" : "NUMBER"; }

}  // namespace harness
