// Writing output files (JUnit XML, reports, golden expectations) without ever damaging the
// results database, leaving half a file or replacing what the path points at: the path is
// checked against the database first; a symlink is followed to the file it names; a
// regular file (or a new one) gets a temporary file in its folder that is renamed over it;
// a character device or fifo (/dev/null, a pipe) is written through. A path that leads to
// the process's own stdout or stderr (the same inode as fd 1 or 2, however it is named:
// /dev/stdout, /proc/self/fd/1, the path of the log file `>> ci.log` appends to) is written
// to that descriptor, after what the process printed so far: replacing the file would drop
// the log written before and send the rest of the output to an unlinked inode. Anything
// else (a folder, a block device, a socket) is refused.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "harness/util/error.h"

namespace harness {

// Where an output path leads once its symlinks are followed.
struct OutputTarget {
  // stream: a character device or a fifo; own_stream: the process's stdout or stderr (fd)
  enum class Kind { kNew, kRegular, kStream, kOwnStream };
  Kind kind = Kind::kNew;
  // The file to replace or create: the end of the symlinks (a dangling link names the file
  // to create). A stream keeps the path as given: opening it follows the links.
  std::filesystem::path path;
  mode_t mode = 0644;                            // a regular file's permissions, kept when it is replaced
  int fd = -1;                                   // kOwnStream: 1 or 2
};

// Follows path's symlinks (at most 40, as the kernel does). A folder, a block device, a
// socket or a symlink loop is a usage error naming path.
Result<OutputTarget> ResolveOutputTarget(const std::filesystem::path& path);

// A usage error when out is the database (or its -wal/-shm/-journal file) under any
// spelling: ./ prefixes, .., symlinks and hard links all count; or when out is not
// something an output can be written to (ResolveOutputTarget). flag names the option.
Status CheckOutputPath(const std::filesystem::path& out, const std::filesystem::path& db, const std::string& flag);

// Writes content to path: a regular or new file atomically (temporary file + fsync +
// rename + fsync of the folder), a character device or fifo through, the process's own
// stdout or stderr after flushing what stdio holds for it (so the order is kept). Exit-3 error on a
// failed write, usage error for a target ResolveOutputTarget refuses.
Status WriteOutputFile(const std::filesystem::path& path, const std::string& content);

// Removes the temporary files a killed WriteOutputFile of target left in its folder. Only
// for a caller that knows no other process is writing target (it holds a lock).
void RemoveOutputTemporaries(const std::filesystem::path& target);

}  // namespace harness
