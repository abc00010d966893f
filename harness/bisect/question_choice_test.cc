#include "harness/bisect/flip_rates.h"

#include <gtest/gtest.h>

namespace harness::bisect {
namespace {
TEST(FlipRates, Placeholder) {}
}  // namespace
}  // namespace harness::bisect
