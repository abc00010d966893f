// Reading an input file whole, within a bound: only a regular file (after symlinks) of at
// most max_bytes is read, so a directory, a device such as /dev/zero, a FIFO or a runaway
// file is an input error naming the file instead of an exception or all of memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "harness/util/error.h"

namespace harness {

// The bytes of path. Errors (exit 2) name the path: "cannot open file (reason)", "not a
// regular file (a directory)", "N bytes, over the M MiB limit for <kind>" (kind: "JSON
// files") for a file larger than max_bytes, or "grew past ..." for one that grows beyond it
// while being read.
Result<std::string> ReadInputFile(const std::filesystem::path& path, std::uintmax_t max_bytes, std::string_view kind);

// "64 MiB", "4 KiB", "100 bytes": a limit as the docs state it.
std::string ByteSize(std::uintmax_t bytes);

}  // namespace harness
