#include "harness/util/placeholders.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/suggest.h"

namespace harness {

Result<std::vector<std::string>> PlaceholdersOf(const std::string& arg) {
  std::vector<std::string> names;
  for (size_t i = 0; i < arg.size(); ++i) {
    if ((arg[i] == '{' || arg[i] == '}') && i + 1 < arg.size() && arg[i + 1] == arg[i]) {
      ++i;  // {{ and }} are literal braces
    } else if (arg[i] == '{') {
      const size_t close = arg.find('}', i);
      if (close == std::string::npos) return UsageError(fmt::format("'{}': unclosed '{{' (write {{{{ for a brace)", arg));
      names.push_back(arg.substr(i + 1, close - i - 1));
      i = close;
    } else if (arg[i] == '}') {
      return UsageError(fmt::format("'{}': unmatched '}}' (write }}}} for a brace)", arg));
    }
  }
  return names;
}

std::string FillTemplate(const std::string& arg, const std::map<std::string, std::string>& values) {
  std::string out;
  for (size_t i = 0; i < arg.size(); ++i) {
    if ((arg[i] == '{' || arg[i] == '}') && i + 1 < arg.size() && arg[i + 1] == arg[i]) {
      out += arg[i++];
    } else if (arg[i] == '{') {
      const size_t close = arg.find('}', i);
      auto it = values.find(arg.substr(i + 1, close - i - 1));
      if (it != values.end()) out += it->second;
      i = close;
    } else {
      out += arg[i];
    }
  }
  return out;
}

Status CheckPlaceholders(const std::string& arg, const std::vector<std::string>& known) {
  auto names = PlaceholdersOf(arg);
  if (!names) return names.error();
  for (const auto& n : *names) {
    if (std::find(known.begin(), known.end(), n) != known.end()) continue;
    std::string hint = DidYouMean(n, known);  // a near name, else the known ones already
    if (hint.find("did you mean") != std::string::npos) hint += fmt::format(" (known: {})", fmt::join(known, ", "));
    return UsageError(fmt::format("unknown placeholder {{{}}}{}", n, hint));
  }
  return OkStatus();
}

}  // namespace harness
