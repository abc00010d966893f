#include "harness/util/json_file.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/util/input_file.h"
#include "harness/util/quote.h"
#include "harness/util/suggest.h"

namespace harness {

std::pair<int, int> LineColumnOf(const std::string& text, std::size_t byte_offset) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < byte_offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

namespace {

// The first bracket past kMaxJsonDepth, if any: its byte offset. Strings are skipped, so
// brackets inside them do not count; the scan is linear and allocates nothing.
std::optional<std::size_t> TooDeepAt(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // skip the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

// Parses text; place(offset) names where a byte of it is (npos: the text as a whole).
template <class Place>
Result<Json> Parse(const std::string& text, const Place& place) {
  if (auto at = TooDeepAt(text))
    return UsageError(fmt::format("{}: arrays and objects nested deeper than {} levels", place(*at), kMaxJsonDepth));
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // nlohmann reports the 1-based byte index of the offending character.
    std::string what = e.what();
    // Strip nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: ".
    if (auto pos = what.find(": "); pos != std::string::npos && what.rfind("[json.exception", 0) == 0) {
      what = what.substr(pos + 2);
    }
    // Cut: its "last read: '...'" may be a 30 MB number.
    return UsageError(fmt::format("{}: {}", place(e.byte > 0 ? e.byte - 1 : 0), CutText(what, 2 * kQuotedBytes)));
  } catch (const Json::out_of_range& e) {
    // A number too large for a double ("1e99999"): nlohmann says which text, not where, so
    // the place is that text's first occurrence. Found by fuzzing the exec answer parser.
    const std::string what = e.what();
    std::size_t at = std::string::npos;
    const auto open = what.find('\''), close = what.rfind('\'');
    if (open != std::string::npos && close > open) at = text.find(what.substr(open + 1, close - open - 1));
    return UsageError(fmt::format("{}: {}", place(at), CutText(what.substr(what.find(']') + 2), 2 * kQuotedBytes)));
  }
}

}  // namespace

Result<Json> ParseJson(const std::string& text, const std::string& origin) {
  return Parse(text, [&](std::size_t at) {
    if (at == std::string::npos) return origin;
    auto [line, col] = LineColumnOf(text, at);
    return fmt::format("{}:{}:{}", origin, line, col);
  });
}

Result<Json> ParseJsonLine(const std::string& line, const std::string& origin, int line_number) {
  return Parse(line, [&](std::size_t at) {
    if (at == std::string::npos) return fmt::format("{}:{}", origin, line_number);
    return fmt::format("{}:{}:{}", origin, line_number, at + 1);
  });
}

Status ForEachJsonObjectLine(const std::string& text, const std::string& origin,
                             const std::function<Status(const JsonObject& o, const std::string& row, int line)>& fn) {
  std::size_t start = 0;
  for (int line = 1; start < text.size(); ++line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string row = text.substr(start, end - start);
    start = end + 1;
    if (row.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", origin, line);
    auto json = ParseJsonLine(row, origin, line);
    if (!json) return json.error();
    if (!json->is_object()) return UsageError(where + ": expected a JSON object per line");
    if (auto s = fn(JsonObject(*json, where), row, line); !s) return s;
  }
  return OkStatus();
}

Json ParseJsonOrDiscarded(std::string_view text) {
  if (TooDeepAt(text)) return Json(Json::value_t::discarded);
  return Json::parse(text, nullptr, /*allow_exceptions=*/false);
}

Result<Json> ReadJsonFile(const std::filesystem::path& path) {
  auto text = ReadInputFile(path, kMaxJsonFileBytes, "JSON files");
  if (!text) return text.error();
  return ParseJson(*text, path.string());
}

JsonObject::JsonObject(const Json& j, std::string origin, std::string path)
    : j_(j), origin_(std::move(origin)), path_(std::move(path)) {}

std::string JsonObject::PathOf(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

Error JsonObject::FieldError(const std::string& key, const std::string& what) const {
  // A key is user data too: a 60 MB key is named by its head.
  return UsageError(fmt::format("{}: {}: {}", origin_, CutText(PathOf(key)), what));
}

bool JsonObject::Has(const std::string& key) const { return Find(key) != nullptr; }

const Json* JsonObject::Find(const std::string& key) const {
  if (!j_.is_object()) return nullptr;
  auto it = j_.find(key);
  return it == j_.end() ? nullptr : &*it;
}

Result<std::string> JsonObject::String(const std::string& key) const {
  const Json* v = Find(key);
  if (!v) return FieldError(key, "missing field (expected a string)");
  if (!v->is_string()) return FieldError(key, "expected a string");
  return v->get<std::string>();
}

Result<int64_t> JsonObject::Int(const std::string& key) const {
  const Json* v = Find(key);
  if (!v) return FieldError(key, "missing field (expected an integer)");
  if (!v->is_number_integer()) return FieldError(key, "expected an integer");
  return v->get<int64_t>();
}

Result<double> JsonObject::Number(const std::string& key) const {
  const Json* v = Find(key);
  if (!v) return FieldError(key, "missing field (expected a number)");
  if (!v->is_number()) return FieldError(key, "expected a number");
  return v->get<double>();
}

Result<bool> JsonObject::Bool(const std::string& key) const {
  const Json* v = Find(key);
  if (!v) return FieldError(key, "missing field (expected true or false)");
  if (!v->is_boolean()) return FieldError(key, "expected true or false");
  return v->get<bool>();
}

Result<std::vector<int64_t>> JsonObject::IntList(const std::string& key) const {
  const Json* v = Find(key);
  if (!v) return FieldError(key, "missing field (expected a list of integers)");
  if (!v->is_array()) return FieldError(key, "expected a list of integers");
  std::vector<int64_t> out;
  for (const auto& e : *v) {
    if (!e.is_number_integer()) return FieldError(key, "expected a list of integers");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

Result<std::vector<std::string>> JsonObject::StringList(const std::string& key) const {
  const Json* v = Find(key);
  if (!v) return FieldError(key, "missing field (expected a list of strings)");
  if (!v->is_array()) return FieldError(key, "expected a list of strings");
  std::vector<std::string> out;
  for (const auto& e : *v) {
    if (!e.is_string()) return FieldError(key, "expected a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<std::string> JsonObject::String(const std::string& key, const std::string& fallback) const {
  return Has(key) ? String(key) : Result<std::string>(fallback);
}
Result<int64_t> JsonObject::Int(const std::string& key, int64_t fallback) const {
  return Has(key) ? Int(key) : Result<int64_t>(fallback);
}
Result<double> JsonObject::Number(const std::string& key, double fallback) const {
  return Has(key) ? Number(key) : Result<double>(fallback);
}
Result<bool> JsonObject::Bool(const std::string& key, bool fallback) const {
  return Has(key) ? Bool(key) : Result<bool>(fallback);
}

std::string DumpJson(const Json& j, int indent) { return j.dump(indent, ' ', false, Json::error_handler_t::replace); }

Status JsonObject::RequireVersion(int version) const {
  auto v = Int("format_version");
  if (!v) return v.error();
  if (*v != version)
    return FieldError("format_version", fmt::format("unsupported version {} (this binary reads {})", *v, version));
  return OkStatus();
}

Status JsonObject::KnownKeys(const std::vector<std::string>& known) const {
  if (!j_.is_object()) return OkStatus();
  for (const auto& [key, value] : j_.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    return FieldError(key, "unknown field" + DidYouMean(key, known));
  }
  return OkStatus();
}

Result<JsonObject> JsonObject::Object(const std::string& key) const {
  const Json* v = Find(key);
  if (!v) return FieldError(key, "missing field (expected an object)");
  if (!v->is_object()) return FieldError(key, "expected an object");
  return JsonObject(*v, origin_, PathOf(key));
}

}  // namespace harness
