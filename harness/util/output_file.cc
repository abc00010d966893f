#include "harness/util/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

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

// The kernel's own limit on symlinks followed in one lookup (MAXSYMLINKS).
constexpr int kMaxSymlinkHops = 40;

// The prefix of WriteOutputFile's temporaries for target (mkstemp adds six characters).
std::string TemporaryPrefix(const std::filesystem::path& target) { return "." + target.filename().string() + ".tmp-"; }

Status WriteAll(int fd, const std::string& content) {
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return InfraError(std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  return OkStatus();
}

// 1 or 2 when st is the file the process's stdout or stderr is (same device and inode), else -1.
int OwnStreamFd(const struct stat& st) {
  for (int fd : {1, 2}) {
    struct stat own {};
    if (fstat(fd, &own) == 0 && own.st_dev == st.st_dev && own.st_ino == st.st_ino) return fd;
  }
  return -1;
}

// Appends to what the process's stdout or stderr is (a `>>` log keeps its earlier lines;
// a `>` one goes on at its offset), after what stdio buffered for it.
Status WriteToOwnStream(const OutputTarget& target, const std::string& content) {
  std::fflush(target.fd == 1 ? stdout : stderr);
  if (Status s = WriteAll(target.fd, content); !s)
    return InfraError(fmt::format("{}: cannot write: {}", target.path.string(), s.error().message));
  return OkStatus();
}

// A character device or fifo already exists and is what the user named: written into as it is.
Status WriteThrough(const std::filesystem::path& path, const std::string& content) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return InfraError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  Status written = WriteAll(fd, content);
  const int close_rc = close(fd);
  if (!written) return InfraError(fmt::format("{}: cannot write: {}", path.string(), written.error().message));
  if (close_rc != 0) return InfraError(fmt::format("{}: cannot write (close): {}", path.string(), std::strerror(errno)));
  return OkStatus();
}

// The rename is durable only once the folder that holds the new name is on disk too.
Status SyncFolder(const std::filesystem::path& folder, const std::filesystem::path& path) {
  int fd = open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return InfraError(fmt::format("{}: cannot sync its folder: {}", path.string(), std::strerror(errno)));
  const int rc = fsync(fd);
  const int err = errno;
  close(fd);
  if (rc != 0) return InfraError(fmt::format("{}: cannot sync its folder: {}", path.string(), std::strerror(err)));
  return OkStatus();
}

Status ReplaceAtomically(const OutputTarget& target, const std::string& content) {
  const std::filesystem::path& path = target.path;
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : ".";
  std::string tmpl = (folder / (TemporaryPrefix(path) + "XXXXXX")).string();
  int fd = mkstemp(tmpl.data());
  if (fd < 0) return InfraError(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
  auto fail = [&](const char* what, const std::string& why) {
    close(fd);
    unlink(tmpl.c_str());
    return InfraError(fmt::format("{}: cannot write ({}): {}", path.string(), what, why));
  };
  if (Status s = WriteAll(fd, content); !s) return fail("write", s.error().message);
  if (fchmod(fd, target.mode) != 0) return fail("chmod", std::strerror(errno));
  if (fsync(fd) != 0) return fail("fsync", std::strerror(errno));
  if (close(fd) != 0) {
    const int err = errno;
    unlink(tmpl.c_str());
    return InfraError(fmt::format("{}: cannot write (close): {}", path.string(), std::strerror(err)));
  }
  if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmpl.c_str());
    return InfraError(fmt::format("{}: cannot write (rename): {}", path.string(), std::strerror(err)));
  }
  return SyncFolder(folder, path);
}

}  // namespace

Result<OutputTarget> ResolveOutputTarget(const std::filesystem::path& path) {
  // What the path leads to decides how it is written; stat() follows every link, the
  // kernel's /proc/self/fd ones (/dev/stdout) too, which readlink() could not.
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    if (const int fd = OwnStreamFd(st); fd >= 0) return OutputTarget{OutputTarget::Kind::kOwnStream, path, 0, fd};
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return OutputTarget{OutputTarget::Kind::kStream, path, 0};
    if (S_ISDIR(st.st_mode)) return UsageError(fmt::format("{}: is a folder", path.string()));
    if (!S_ISREG(st.st_mode))
      return UsageError(fmt::format("{}: is a {}, not a file an output can be written to", path.string(),
                                    S_ISBLK(st.st_mode) ? "block device" : "socket"));
  } else if (errno == ELOOP) {
    return UsageError(fmt::format("{}: too many symlinks to follow (a loop?)", path.string()));
  } else if (errno != ENOENT) {
    return InfraError(fmt::format("{}: cannot inspect: {}", path.string(), std::strerror(errno)));
  }
  // A regular file, or nothing yet: find the name the new file must be renamed to, at the
  // end of the symlinks (a dangling one names the file to create).
  std::filesystem::path p = path;
  for (int hop = 0; hop <= kMaxSymlinkHops; ++hop) {
    struct stat link {};
    if (lstat(p.c_str(), &link) != 0) {
      if (errno == ENOENT) return OutputTarget{OutputTarget::Kind::kNew, p, 0644};
      return InfraError(fmt::format("{}: cannot inspect {}: {}", path.string(), p.string(), std::strerror(errno)));
    }
    if (!S_ISLNK(link.st_mode)) return OutputTarget{OutputTarget::Kind::kRegular, p, link.st_mode & 07777};
    std::vector<char> buf(static_cast<std::size_t>(link.st_size > 0 ? link.st_size : PATH_MAX) + 1);
    const ssize_t n = readlink(p.c_str(), buf.data(), buf.size());
    if (n < 0 || static_cast<std::size_t>(n) >= buf.size())
      return InfraError(fmt::format("{}: cannot read the symlink {}", path.string(), p.string()));
    const std::filesystem::path to(std::string(buf.data(), static_cast<std::size_t>(n)));
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return UsageError(fmt::format("{}: too many symlinks to follow (a loop?)", path.string()));
}

Status CheckOutputPath(const std::filesystem::path& out, const std::filesystem::path& db, const std::string& flag) {
  if (out.empty()) return UsageError(flag + " is empty: name a file");
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::path target = db;
    target += suffix;
    if (SameFile(out, target))
      return UsageError(fmt::format("{} {}: that is the results database {}; refusing to overwrite it", flag,
                                    out.string(), target.string()));
  }
  auto target = ResolveOutputTarget(out);
  if (!target) return Error{target.error().code, flag + " " + target.error().message};
  return OkStatus();
}

Status WriteOutputFile(const std::filesystem::path& path, const std::string& content) {
  auto target = ResolveOutputTarget(path);
  if (!target) return target.error();
  if (target->kind == OutputTarget::Kind::kStream) return WriteThrough(target->path, content);
  if (target->kind == OutputTarget::Kind::kOwnStream) return WriteToOwnStream(*target, content);
  return ReplaceAtomically(*target, content);
}

void RemoveOutputTemporaries(const std::filesystem::path& path) {
  auto target = ResolveOutputTarget(path);
  if (!target) return;
  const std::filesystem::path folder = target->path.has_parent_path() ? target->path.parent_path() : ".";
  const std::string prefix = TemporaryPrefix(target->path);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() == prefix.size() + 6 && name.compare(0, prefix.size(), prefix) == 0 &&
        e.symlink_status(ec).type() == std::filesystem::file_type::regular)
      std::filesystem::remove(e.path(), ec);
  }
}

}  // namespace harness
