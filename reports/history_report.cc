#include "reports/history_report.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/git.h"
#include "harness/util/utf8.h"
#include "harness/util/versions.h"

namespace harness::reports {

namespace {

// The rows of one case at one commit: consecutive in the store's answer.
struct RowSpan {
  std::size_t begin = 0, end = 0;
  std::optional<double> mean;  // of the runs that stored the metric; none for verdict metrics
};

std::vector<RowSpan> SpansOf(const std::vector<HistoryRow>& rows) {
  std::vector<RowSpan> out;
  for (std::size_t i = 0; i < rows.size(); ++i)  // the store returns a commit's runs of a case next to each other
    if (i == 0 || rows[i - 1].sha != rows[i].sha || rows[i - 1].case_id != rows[i].case_id) out.push_back({i, i, {}});
  for (std::size_t k = 0; k < out.size(); ++k) {
    RowSpan& g = out[k];
    g.end = k + 1 < out.size() ? out[k + 1].begin : rows.size();
    double sum = 0;
    int values = 0;
    bool verdict = false;
    for (std::size_t i = g.begin; i < g.end; ++i) {
      verdict |= !rows[i].label.empty();
      if (rows[i].value) {
        sum += *rows[i].value;
        ++values;
      }
    }
    if (values && !verdict) g.mean = sum / values;
  }
  return out;
}

}  // namespace

std::vector<HistoryGroup> GroupHistory(const std::vector<HistoryRow>& rows) {
  std::vector<HistoryGroup> out;
  for (const RowSpan& span : SpansOf(rows)) {
    const HistoryRow& r = rows[span.begin];
    out.push_back({r.sha, r.ordinal, r.subject, r.case_id,
                   std::vector<HistoryRow>(rows.begin() + static_cast<std::ptrdiff_t>(span.begin),
                                           rows.begin() + static_cast<std::ptrdiff_t>(span.end)),
                   span.mean});
  }
  return out;
}

namespace {

// The metric column: the verdict words, the one run's value with its interval, or the mean.
std::string MetricCell(const HistoryGroup& g) {
  std::vector<std::string> labels;
  for (const auto& r : g.runs)
    if (!r.label.empty()) labels.push_back(r.label);
  if (!labels.empty()) return fmt::format("{}", fmt::join(labels, " "));
  if (!g.mean) return "-";
  const auto& only = g.runs.front();
  if (g.runs.size() == 1 && only.low && only.high) return fmt::format("{:.4g} [{:.3g},{:.3g}]", *g.mean, *only.low, *only.high);
  return g.runs.size() == 1 ? fmt::format("{:.4g}", *g.mean) : fmt::format("mean {:.4g}", *g.mean);
}

}  // namespace

namespace {

// Width on a terminal, as code points (the cells are TerminalText: valid UTF-8).
std::size_t Columns(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string HistoryText(const HistoryQuery& q, const std::vector<HistoryRow>& rows) {
  // Every cell made safe for a terminal first, then each column as wide as its widest cell
  // (a commit run five times has a long status list; a verdict word may be any length), so
  // the columns stay aligned whatever the values.
  std::vector<std::array<std::string, 7>> table = {
      {"COMMIT", "ORD", "CASE", "RUNS", "STATUS", q.metric.empty() ? "-" : TerminalText(q.metric), "SUBJECT"}};
  for (const auto& g : GroupHistory(rows)) {
    std::vector<std::string_view> statuses;
    for (const auto& r : g.runs) statuses.push_back(Label(r.status));
    table.push_back({ShortSha(g.sha), g.ordinal ? std::to_string(*g.ordinal) : "-", g.case_id,
                     std::to_string(g.runs.size()), fmt::format("{}", fmt::join(statuses, ",")), MetricCell(g),
                     g.subject});
    for (auto& cell : table.back()) cell = TerminalText(cell);
  }
  std::array<std::size_t, 7> width{};
  for (const auto& row : table)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], Columns(row[i]));
  std::string out;
  for (const auto& row : table) {
    for (std::size_t i = 0; i + 1 < row.size(); ++i) {
      const std::string pad(width[i] - Columns(row[i]), ' ');
      out += i == 3 ? pad + row[i] : row[i] + pad;  // RUNS is a number: right-aligned
      out += "  ";
    }
    out += row.back() + "\n";
  }
  return out;
}

Json HistoryJson(const HistoryQuery& q, const std::vector<HistoryRow>& rows) {
  Json j{{"format_version", kHistoryFormat}, {"metric", q.metric}, {"commits", Json::array()}};
  j["case"] = q.case_id.empty() ? Json(nullptr) : Json(q.case_id);
  j["suite"] = q.suite.empty() ? Json(nullptr) : Json(q.suite);
  for (const auto& g : GroupHistory(rows)) {
    Json& commits = j["commits"];
    if (commits.empty() || commits.back()["commit"] != g.sha) {
      Json c{{"commit", g.sha}, {"subject", g.subject}, {"cases", Json::array()}};
      c["ordinal"] = g.ordinal ? Json(*g.ordinal) : Json(nullptr);
      commits.push_back(c);
    }
    Json cj{{"case", g.case_id}, {"count", g.runs.size()}, {"runs", Json::array()}};
    if (!q.metric.empty()) cj["mean"] = g.mean ? Json(*g.mean) : Json(nullptr);
    for (const auto& r : g.runs) {
      Json rj{{"run_id", r.run_id}, {"started_at", r.started_at}, {"status", Word(r.status)}};
      if (!q.metric.empty()) {
        rj["value"] = r.value ? Json(*r.value) : Json(nullptr);
        if (r.n) rj["n"] = r.n;
        if (r.low) rj["low"] = *r.low;
        if (r.high) rj["high"] = *r.high;
        if (!r.label.empty()) rj["verdict"] = r.label;
      }
      cj["runs"].push_back(rj);
    }
    commits.back()["cases"].push_back(cj);
  }
  return j;
}

namespace {

// One value as DumpJson spells it (numbers, strings with invalid UTF-8 replaced, null).
void Leaf(std::string& out, const Json& v) { out += v.dump(-1, ' ', false, Json::error_handler_t::replace); }
// Integers and printable ASCII strings without quotes or backslashes, which dump spells as
// they are, are written directly: they are most of a long history's leaves.
void Leaf(std::string& out, int64_t v) { fmt::format_to(std::back_inserter(out), "{}", v); }
void Leaf(std::string& out, std::size_t v) { fmt::format_to(std::back_inserter(out), "{}", v); }
void Leaf(std::string& out, std::string_view v) {
  for (unsigned char c : v)
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') return Leaf(out, Json(v));
  out += '"';
  out += v;
  out += '"';
}
void Leaf(std::string& out, const std::string& v) { Leaf(out, std::string_view(v)); }

// Writes the members of objects in key order at an indent, as nlohmann's dump(2) does.
struct JsonWriter {
  std::string out;
  std::string& Key(int depth, const char* key, bool first) {
    out += first ? "\n" : ",\n";
    out.append(static_cast<std::size_t>(depth) * 2, ' ');
    out += '"';
    out += key;
    out += "\": ";
    return out;
  }
  void Close(int depth, char bracket) {
    out += '\n';
    out.append(static_cast<std::size_t>(depth) * 2, ' ');
    out += bracket;
  }
  void Open(int depth, bool first) {
    out += first ? "\n" : ",\n";
    out.append(static_cast<std::size_t>(depth) * 2, ' ');
    out += '{';
  }
};

void RunMembers(JsonWriter& w, const HistoryQuery& q, const HistoryRow& r, int depth) {
  const bool metric = !q.metric.empty();
  bool first = true;
  auto key = [&](const char* k) -> std::string& {
    w.Key(depth, k, first);
    first = false;
    return w.out;
  };
  if (metric && r.high) Leaf(key("high"), Json(*r.high));
  if (metric && r.low) Leaf(key("low"), Json(*r.low));
  if (metric && r.n) Leaf(key("n"), r.n);
  Leaf(key("run_id"), r.run_id);
  Leaf(key("started_at"), r.started_at);
  Leaf(key("status"), Word(r.status));
  if (metric) Leaf(key("value"), r.value ? Json(*r.value) : Json(nullptr));
  if (metric && !r.label.empty()) Leaf(key("verdict"), r.label);
}

void CaseObject(JsonWriter& w, const HistoryQuery& q, const std::vector<HistoryRow>& rows, const RowSpan& g, int depth,
                bool first) {
  w.Open(depth, first);
  Leaf(w.Key(depth + 1, "case", true), rows[g.begin].case_id);
  Leaf(w.Key(depth + 1, "count", false), g.end - g.begin);
  if (!q.metric.empty()) Leaf(w.Key(depth + 1, "mean", false), g.mean ? Json(*g.mean) : Json(nullptr));
  w.Key(depth + 1, "runs", false);
  w.out += '[';
  for (std::size_t i = g.begin; i < g.end; ++i) {
    w.Open(depth + 2, i == g.begin);
    RunMembers(w, q, rows[i], depth + 3);
    w.Close(depth + 2, '}');
  }
  w.Close(depth + 1, ']');
  w.Close(depth, '}');
}

void CommitTail(JsonWriter& w, const HistoryRow& r, int depth) {
  w.Close(depth + 1, ']');
  Leaf(w.Key(depth + 1, "commit", false), r.sha);
  Leaf(w.Key(depth + 1, "ordinal", false), r.ordinal ? Json(*r.ordinal) : Json(nullptr));
  Leaf(w.Key(depth + 1, "subject", false), r.subject);
  w.Close(depth, '}');
}

}  // namespace

std::string HistoryJsonText(const HistoryQuery& q, const std::vector<HistoryRow>& rows) {
  const auto spans = SpansOf(rows);
  JsonWriter w;
  w.out.reserve(rows.size() * 400);  // about what a run takes with its case around it
  w.out += '{';
  Leaf(w.Key(1, "case", true), q.case_id.empty() ? Json(nullptr) : Json(q.case_id));
  w.Key(1, "commits", false);
  w.out += '[';
  // A commit's cases are next to each other (the store's order).
  auto sha = [&](std::size_t k) -> const std::string& { return rows[spans[k].begin].sha; };
  for (std::size_t k = 0; k < spans.size(); ++k) {
    const bool opens = k == 0 || sha(k - 1) != sha(k);
    if (opens) {
      w.Open(2, k == 0);
      w.Key(3, "cases", true);
      w.out += '[';
    }
    CaseObject(w, q, rows, spans[k], 4, opens);
    if (k + 1 == spans.size() || sha(k + 1) != sha(k)) CommitTail(w, rows[spans[k].begin], 2);
  }
  w.out += spans.empty() ? "]" : "\n  ]";
  Leaf(w.Key(1, "format_version", false), static_cast<int64_t>(kHistoryFormat));
  Leaf(w.Key(1, "metric", false), q.metric);
  Leaf(w.Key(1, "suite", false), q.suite.empty() ? Json(nullptr) : Json(q.suite));
  w.Close(0, '}');
  return std::move(w.out);
}

}  // namespace harness::reports
