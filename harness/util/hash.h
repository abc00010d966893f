// A stable content digest for identities ("the same config"), not a security digest.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace harness {

// FNV-1a 64 as 16 hex digits.
inline std::string Fnv1a64Hex(std::string_view bytes) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace harness
