// Reading JSON files with errors that name file:line:column, and typed field access
// whose errors name the file and the JSON path of the offending field. Every JSON text the
// harness reads is parsed here, within the bounds below.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/util/error.h"

namespace harness {

using Json = nlohmann::json;

// The deepest nesting of arrays and objects a JSON text may have (libxml2's default for XML
// elements). nlohmann parses iteratively but copies, compares and dumps recursively, so a
// text nested 150,000 deep would overflow the stack; it is refused before it is parsed.
inline constexpr int kMaxJsonDepth = 256;
// The largest JSON file ReadJsonFile reads (stack configs, suite tables, golden files).
inline constexpr std::uintmax_t kMaxJsonFileBytes = std::uintmax_t{64} << 20;

// Parses a file (a regular file of at most kMaxJsonFileBytes); a syntax error becomes
// "FILE:LINE:COL: message" (exit code 2).
Result<Json> ReadJsonFile(const std::filesystem::path& path);
// Parses text that came from `origin` (a file name or a description) the same way. Text
// nested deeper than kMaxJsonDepth is refused naming the bracket that goes too deep.
Result<Json> ParseJson(const std::string& text, const std::string& origin);
// One line of a JSON-lines file: errors name origin:line_number:column.
Result<Json> ParseJsonLine(const std::string& line, const std::string& origin, int line_number);
// For callers with their own fallback or message when a text does not parse (JSON the
// store holds, an HTTP body): the value, or a discarded one when the text is not JSON or is
// nested deeper than kMaxJsonDepth.
Json ParseJsonOrDiscarded(std::string_view text);
// Serialises JSON for output; invalid UTF-8 inside strings (a command's stderr, a
// model's completion) becomes U+FFFD instead of an exception, so output stays valid.
std::string DumpJson(const Json& j, int indent = 2);
// Line and column (1-based) of a byte offset in text.
std::pair<int, int> LineColumnOf(const std::string& text, std::size_t byte_offset);

// Typed access to one JSON object, remembering where it came from so that a missing or
// mistyped field is reported as "FILE: PATH.field: expected <type>".
class JsonObject {
 public:
  JsonObject(const Json& j, std::string origin, std::string path = "");
  bool Has(const std::string& key) const;
  Result<std::string> String(const std::string& key) const;
  Result<int64_t> Int(const std::string& key) const;
  Result<double> Number(const std::string& key) const;
  Result<bool> Bool(const std::string& key) const;
  Result<std::vector<int64_t>> IntList(const std::string& key) const;
  Result<std::vector<std::string>> StringList(const std::string& key) const;
  // Optional variants: absent -> fallback; present but mistyped -> error.
  Result<std::string> String(const std::string& key, const std::string& fallback) const;
  Result<int64_t> Int(const std::string& key, int64_t fallback) const;
  Result<double> Number(const std::string& key, double fallback) const;
  Result<bool> Bool(const std::string& key, bool fallback) const;
  Result<JsonObject> Object(const std::string& key) const;
  const Json& json() const { return j_; }
  const std::string& origin() const { return origin_; }
  std::string PathOf(const std::string& key) const;
  Error FieldError(const std::string& key, const std::string& what) const;
  // format_version must be present and equal to version (the reader's named constant).
  Status RequireVersion(int version) const;
  // Every key must be one of known: a typo is an error naming the key and the nearest
  // known one, never a silent default.
  Status KnownKeys(const std::vector<std::string>& known) const;

 private:
  const Json* Find(const std::string& key) const;
  Json j_;
  std::string origin_;
  std::string path_;
};

// The objects of a JSON-lines text: fn gets each non-blank line's object (its errors name
// origin:line), the line's text and its 1-based number. A line that is not a JSON object
// is an error naming origin:line; the first error stops the walk.
Status ForEachJsonObjectLine(const std::string& text, const std::string& origin,
                             const std::function<Status(const JsonObject& o, const std::string& row, int line)>& fn);

}  // namespace harness
