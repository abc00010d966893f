// Every numeric flag of every command is added here: its value is parsed by ParseNumberIn
// (util/number_range.h) before CLI11 converts it, so hex (CLI11 reads "0x50" as 80), nan,
// inf, blanks, trailing junk and overflow are refused with exit 2 and a message naming the
// flag, the value (cut) and the range; the range is appended to the flag's help, where the
// docs copy it from. cli_test walks the command table and tries hostile values on every
// numeric flag, so a flag added with plain add_option fails that test.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "harness/util/number_range.h"

namespace harness {

// Ranges several commands share (bisect's own are in harness/bisect/bisect_ranges.h, the
// timeout's in util/subprocess.h).
inline constexpr NumberRange kRunIdRange = WholeIn(1, 9223372036854775807.0L);     // a stored run or session id
inline constexpr NumberRange kSeedRange = WholeIn(0, 18446744073709551615.0L);     // any 64-bit seed
inline constexpr NumberRange kLastRange = WholeIn(1, 1000000);                      // --last N commits

// The CLI11 validator for range (its description is the range).
CLI::Validator NumberValidator(const NumberRange& range);

// The type name a numeric flag shows in --help ("NUMBER in (0.5, 1)", "INT in [0, 65535]"),
// whose first word cli_test reads to find numeric flags.
std::string NumericTypeName(const NumberRange& range);

template <class T>
CLI::Option* AddNumericOption(CLI::App& app, const std::string& name, T& value, const NumberRange& range,
                              const std::string& help) {
  return app.add_option(name, value, help + " (" + range.Describe() + ")")
      ->check(NumberValidator(range))
      ->type_name(NumericTypeName(range));
}

}  // namespace harness
