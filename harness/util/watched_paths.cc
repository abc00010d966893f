#include "harness/util/watched_paths.h"

namespace harness {

std::optional<std::string> WatchPathProblem(const std::string& entry) {
  if (entry.empty()) return "is empty";
  if (entry[0] == '/') return "is absolute; name a path inside the repository";
  for (unsigned char c : entry)
    if (c < 0x20 || c == 0x7f) return "holds a control character";
  std::string body = entry;
  if (body.back() == '/') body.pop_back();
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = body.find('/', start);
    const std::string part = body.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part == "..") return "holds '..'; name a path inside the repository";
    if (part.empty() || part == ".") return "holds an empty or '.' component";
    if (slash == std::string::npos) return std::nullopt;
    start = slash + 1;
  }
}

bool IsWatched(const std::string& changed_file, const std::vector<std::string>& watch) {
  for (std::string prefix : watch) {
    if (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    if (changed_file.size() < prefix.size() || changed_file.compare(0, prefix.size(), prefix) != 0) continue;
    if (changed_file.size() == prefix.size() || changed_file[prefix.size()] == '/') return true;
  }
  return false;
}

bool TouchesWatched(const std::vector<std::string>& changed_files, const std::vector<std::string>& watch) {
  for (const auto& f : changed_files)
    if (IsWatched(f, watch)) return true;
  return false;
}

}  // namespace harness
