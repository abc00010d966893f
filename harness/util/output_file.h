// Writing output files (JUnit XML, reports) without ever damaging the results database
// or leaving half a file: the path is checked against the database first, and the
// content goes to a temporary file in the same folder that is renamed over the target.
#pragma once

#include <filesystem>
#include <string>

#include "harness/util/error.h"

namespace harness {

// A usage error when out is the database (or its -wal/-shm/-journal file) under any
// spelling: ./ prefixes, .., symlinks and hard links all count. flag names the option.
Status CheckOutputPath(const std::filesystem::path& out, const std::filesystem::path& db, const std::string& flag);
// Writes content to path atomically (temporary file + fsync + rename); exit-3 error on failure.
Status WriteOutputFile(const std::filesystem::path& path, const std::string& content);

}  // namespace harness
