#include "harness/results/case_id.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <utility>

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

CaseId::CaseId(std::string id) : id_(std::move(id)), slash_(id_.find('/')) {}

CaseId CaseId::Native(std::string_view suite, std::string_view test, std::size_t index) {
  return CaseId(std::string(suite) + "/" + std::string(test) + "_" + std::to_string(index));
}

std::string CaseId::suite() const { return id_.substr(0, slash_); }

std::string CaseId::name() const { return slash_ == std::string::npos ? std::string() : id_.substr(slash_ + 1); }

std::optional<CaseId::Row> CaseId::row() const {
  if (slash_ == std::string::npos) return std::nullopt;
  const std::string_view name = std::string_view(id_).substr(slash_ + 1);
  const std::size_t underscore = name.rfind('_');
  if (underscore == std::string_view::npos) return std::nullopt;
  const std::string_view digits = name.substr(underscore + 1);
  std::size_t index = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return Row{std::string(name.substr(0, underscore)), index};
}

}  // namespace harness
