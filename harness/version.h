#pragma once

namespace harness {
inline constexpr const char* kVersion = "0.1.0";
}
