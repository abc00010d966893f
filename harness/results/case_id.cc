#include "harness/results/case_id.h"

#include <algorithm>
#include <cstdio>

namespace harness {

std::optional<std::string> CaseIdProblem(std::string_view id) {
  if (id.empty()) return "a case id is SUITE/NAME, not empty";
  if (id.size() > kMaxCaseIdBytes)
    return "longer than " + std::to_string(kMaxCaseIdBytes) + " bytes (" + std::to_string(id.size()) + ")";
  for (char c : id) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return byte == 0 ? "holds a NUL byte" : "holds a control character";
  }
  if (id.front() == '/') return "starts with '/' (a case id is SUITE/NAME, never a path)";
  for (std::size_t start = 0; start <= id.size();) {
    const std::size_t end = std::min(id.find('/', start), id.size());
    if (id.substr(start, end - start) == "..") return "has a '..' segment (a case id is SUITE/NAME, never a path)";
    start = end + 1;
  }
  return std::nullopt;
}

std::string PrintableCaseId(std::string_view id) {
  std::string out;
  for (char c : id) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", byte);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace harness
