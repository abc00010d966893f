#include "harness/util/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace harness {
namespace {

bool SameFile(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  if (std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec)) {
    bool same = std::filesystem::equivalent(a, b, ec);  // same device and inode: links too
    if (!ec) return same;
  }
  // One of them does not exist yet: compare where they would be.
  return std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec);
}

}  // namespace

Status CheckOutputPath(const std::filesystem::path& out, const std::filesystem::path& db, const std::string& flag) {
  if (out.empty()) return UsageError(flag + " is empty: name a file");
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::path target = db;
    target += suffix;
    if (SameFile(out, target))
      return UsageError(fmt::format("{} {}: that is the results database {}; refusing to overwrite it", flag,
                                    out.string(), target.string()));
  }
  std::error_code ec;
  if (std::filesystem::is_directory(out, ec)) return UsageError(fmt::format("{} {}: is a folder", flag, out.string()));
  return OkStatus();
}

Status WriteOutputFile(const std::filesystem::path& path, const std::string& content) {
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : ".";
  std::string tmpl = (folder / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  int fd = mkstemp(tmpl.data());
  if (fd < 0) return InfraError(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
  auto fail = [&](const char* what) {
    const int err = errno;
    close(fd);
    unlink(tmpl.c_str());
    return InfraError(fmt::format("{}: cannot write ({}): {}", path.string(), what, std::strerror(err)));
  };
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (fchmod(fd, 0644) != 0) return fail("chmod");
  if (fsync(fd) != 0) return fail("fsync");
  if (close(fd) != 0) {
    unlink(tmpl.c_str());
    return InfraError(fmt::format("{}: cannot write (close): {}", path.string(), std::strerror(errno)));
  }
  if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmpl.c_str());
    return InfraError(fmt::format("{}: cannot write (rename): {}", path.string(), std::strerror(err)));
  }
  return OkStatus();
}

}  // namespace harness
