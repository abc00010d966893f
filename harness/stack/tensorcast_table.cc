#include "harness/stack/tensorcast_table.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include "harness/util/utf8.h"

namespace harness {
namespace {

// A line cut into code points (as byte ranges), so columns count as Python counts them.
struct CodePoints {
  std::string_view line;
  std::vector<size_t> starts;  // byte offset of each code point, then line.size()

  explicit CodePoints(std::string_view l) : line(l) {
    for (size_t i = 0; i < l.size();) {
      starts.push_back(i);
      const auto c = static_cast<unsigned char>(l[i]);
      size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 1;
      // A truncated or invalid sequence counts its lead byte alone.
      for (size_t k = 1; k < n; ++k)
        if (i + k >= l.size() || (static_cast<unsigned char>(l[i + k]) & 0xc0) != 0x80) n = 1;
      i += n;
    }
    starts.push_back(l.size());
  }
  size_t size() const { return starts.size() - 1; }
  // The code points [from, to), clipped to the line.
  std::string_view Slice(size_t from, size_t to) const {
    from = std::min(from, size());
    to = std::min(to, size());
    return line.substr(starts[from], starts[to] - starts[from]);
  }
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

struct Span {
  size_t from = 0, to = 0;  // code points
};

// The dashed separator: one or more runs of dashes split by spaces, nothing else.
std::optional<std::vector<Span>> SeparatorSpans(std::string_view line) {
  while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
  if (line.empty() || line.front() != '-') return std::nullopt;
  std::vector<Span> spans;
  for (size_t i = 0; i < line.size();) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    if (line[i] != '-') return std::nullopt;
    size_t j = i;
    while (j < line.size() && line[j] == '-') ++j;
    spans.push_back({i, j});
    i = j;
  }
  return spans;
}

struct Line {
  std::string_view text;
  int number = 0;  // 1-based
};

// A cell of a line: its text and where it starts (code points).
struct Cell {
  std::string_view text;
  size_t from = 0;
};

// The texts of a line split by runs of two or more spaces (a cell may hold single spaces:
// "[1, 64], [64]"), with their code point ranges.
std::vector<Span> TextRuns(const CodePoints& cps) {
  std::vector<Span> runs;
  size_t i = 0;
  const size_t n = cps.size();
  auto space = [&](size_t k) { return cps.line[cps.starts[k]] == ' '; };
  while (i < n) {
    while (i < n && space(i)) ++i;
    if (i == n) break;
    const size_t from = i;
    size_t end = i;  // one past the last non-space
    while (i < n && !(space(i) && (i + 1 == n || space(i + 1)))) {
      if (!space(i)) end = i + 1;
      ++i;
    }
    runs.push_back({from, end});
  }
  return runs;
}

// A line's cells, one per column (an empty text where the line leaves a column blank),
// read by the line's separators rather than by the dashes' widths, so a cell wider than
// its column (a hand-made table, another printer) is read whole. With one run of text per
// column the runs are the cells in order; with fewer (blank cells) each run belongs to the
// one column whose dashes it overlaps. A run under two columns or none is refused: which
// cell it is cannot be told.
Result<std::vector<Cell>> CellsOf(const Line& line, const std::vector<Span>& spans,
                                  const std::vector<std::string>& column_names, const std::string& origin) {
  const CodePoints cps(line.text);
  const std::vector<Span> runs = TextRuns(cps);
  std::vector<Cell> cells(spans.size());
  for (size_t c = 0; c < spans.size(); ++c) cells[c].from = spans[c].from;
  if (runs.size() == spans.size()) {
    for (size_t c = 0; c < runs.size(); ++c) cells[c] = {cps.Slice(runs[c].from, runs[c].to), runs[c].from};
    return cells;
  }
  auto name = [&](size_t c) {
    return c < column_names.size() && !column_names[c].empty() ? "'" + column_names[c] + "'" : fmt::format("{}", c + 1);
  };
  std::vector<Span> cell_spans(spans.size());
  std::vector<bool> filled(spans.size(), false);
  // Runs and columns both go left to right, so one sweep finds the columns under each run.
  size_t first = 0;  // the first column that ends after the current run starts
  for (const Span& run : runs) {
    while (first < spans.size() && spans[first].to <= run.from) ++first;
    size_t past = first;  // one past the last column the run overlaps
    while (past < spans.size() && spans[past].from < run.to) ++past;
    const auto at = [&](const std::string& what) {
      const std::string_view text = cps.Slice(run.from, run.to);
      const std::string_view shown = Utf8Prefix(text, 80);
      return UsageError(
          fmt::format("{}:{}:{}: {} cells for {} columns, and the cell '{}{}' {}: cannot tell which "
                      "column it is in (cells are separated by two spaces)",
                      origin, line.number, run.from + 1, runs.size(), spans.size(), shown,
                      shown.size() < text.size() ? "..." : "", what));
    };
    if (past == first) return at("lies under no column's dashes");
    if (past - first > 1) return at(fmt::format("lies under columns {} and {}", name(first), name(first + 1)));
    // Two runs under one column are one cell with a wider gap inside.
    Span& s = cell_spans[first];
    s = filled[first] ? Span{s.from, run.to} : run;
    filled[first] = true;
  }
  for (size_t c = 0; c < spans.size(); ++c)
    if (filled[c]) cells[c] = {cps.Slice(cell_spans[c].from, cell_spans[c].to), cell_spans[c].from};
  return cells;
}

std::vector<Line> SplitLines(const std::string& text) {
  std::vector<Line> lines;
  size_t start = 0;
  int n = 1;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view l(text.data() + start, end - start);
    // Every carriage return ending a line goes, not only a CRLF's one: a line's text then
    // reads the same from the file and from table_text, which ends each line with "\n".
    while (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back({l, n++});
    start = end + 1;
  }
  return lines;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A row that stands for rows left out ("...", "…", or such under every column), as a
// shortened table in a document prints it.
bool IsElisionRow(std::string_view line) {
  bool dots = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') continue;
    if (line[i] == '.') {
      dots = dots || line.substr(i, 3) == "...";
      continue;
    }
    if (line.substr(i, 3) == "\xe2\x80\xa6") {  // U+2026 HORIZONTAL ELLIPSIS
      dots = true;
      i += 2;
      continue;
    }
    return false;
  }
  return dots;
}

Error TableError(const std::string& origin, int line, size_t column, const std::string& what) {
  return UsageError(fmt::format("{}:{}:{}: {}", origin, line, column + 1, what));
}

// Which column of the table is what, from its header line.
struct TableColumns {
  std::vector<std::string> names;
  int name = -1, shapes = -1, total = -1, calls = -1;
};

Result<TableColumns> ReadColumns(const Line& header, const std::vector<Span>& spans, const std::string& origin) {
  auto header_cells = CellsOf(header, spans, {}, origin);
  if (!header_cells) return header_cells.error();
  TableColumns columns;
  for (size_t c = 0; c < spans.size(); ++c) {
    const std::string_view h = (*header_cells)[c].text;
    columns.names.emplace_back(h);
    if (h == "Name") columns.name = static_cast<int>(c);
    else if (h == "Input Shapes") columns.shapes = static_cast<int>(c);
    else if (h == "# of Calls") columns.calls = static_cast<int>(c);
    else if (columns.total < 0 && EndsWith(h, " total")) columns.total = static_cast<int>(c);
  }
  if (columns.name < 0) return TableError(origin, header.number, 0, "the header has no Name column");
  if (columns.calls < 0) return TableError(origin, header.number, 0, "the header has no '# of Calls' column");
  if (columns.total < 0) return TableError(origin, header.number, 0, "the header has no '<model> total' column");
  return columns;
}

// One row of the table; an error names the file, line, column, the row's number in the
// table and the column's header.
struct ReadOpRow {
  OpRow row;
  size_t total_from = 0;  // where its time cell starts (code points)
};

Result<ReadOpRow> ReadRow(const Line& line, int row_number, const std::vector<Span>& spans, const TableColumns& columns,
                          const std::string& origin) {
  auto cells = CellsOf(line, spans, columns.names, origin);
  if (!cells) return cells.error();
  auto at = [&](const Cell& cell, int col, const std::string& what) {
    return UsageError(fmt::format("{}:{}:{}: row {}, column '{}': {}", origin, line.number, cell.from + 1, row_number,
                                  columns.names[col], what));
  };
  const Cell& name = (*cells)[columns.name];
  const Cell& calls = (*cells)[columns.calls];
  const Cell& total = (*cells)[columns.total];
  OpRow row;
  row.op = std::string(name.text);
  if (row.op.empty()) return at(name, columns.name, "empty op name");
  if (columns.shapes >= 0) row.input_shapes = std::string((*cells)[columns.shapes].text);
  auto [end, ec] = std::from_chars(calls.text.data(), calls.text.data() + calls.text.size(), row.calls);
  if (calls.text.empty() || ec != std::errc() || end != calls.text.data() + calls.text.size() || row.calls < 0)
    return at(calls, columns.calls, fmt::format("expected a whole number, got '{}'", calls.text));
  auto seconds = ParseTensorCastTime(total.text);
  if (!seconds)
    return at(total, columns.total,
              fmt::format("expected a time such as 1.234ms (s, ms, us or ns), got '{}'", total.text));
  row.est_seconds = *seconds;
  return ReadOpRow{std::move(row), total.from};
}

// The table starts at a header line between two identical dashed separators; a lone
// dashed line before it (a log's rule) is not the table. The index of its first separator.
std::optional<size_t> FindTableStart(const std::vector<Line>& lines) {
  size_t i = 0;
  while (i + 2 < lines.size() &&
         !(SeparatorSpans(lines[i].text) && Trim(lines[i + 2].text) == Trim(lines[i].text)))
    ++i;
  if (i + 2 >= lines.size()) return std::nullopt;
  return i;
}

// A table is closed by a copy of its separator. One without (a run killed mid-print, a
// document that leaves the rule out) ends at the end of the file, a blank line or the
// "Total time for" lines, and a last row that does not read is taken as cut off.
struct RowsExtent {
  size_t end = 0;  // one past the last row: the closing separator when closed
  bool closed = false;
};

RowsExtent FindRowsEnd(const std::vector<Line>& lines, size_t first_row, std::string_view separator) {
  size_t closing = first_row;
  while (closing < lines.size() && Trim(lines[closing].text) != Trim(separator)) ++closing;
  if (closing < lines.size()) return {closing, true};
  size_t end = first_row;
  for (; end < lines.size(); ++end) {
    const std::string_view t = Trim(lines[end].text);
    if (t.empty() || t.substr(0, 15) == "Total time for ") break;
  }
  return {end, false};
}

// Reads the rows [first_row, rows.end) into result (ops and notes); the sum of their times.
Result<double> ReadRows(const std::vector<Line>& lines, size_t first_row, const RowsExtent& rows,
                        const std::vector<Span>& spans, const TableColumns& columns, const std::string& origin,
                        CompileResult& result) {
  double row_sum = 0;
  int row_number = 0;
  for (size_t i = first_row; i < rows.end; ++i) {
    const Line& line = lines[i];
    ++row_number;
    if (IsElisionRow(line.text)) {
      result.notes.push_back(fmt::format("{}:{}: row {} ('{}') stands for rows left out; skipped", origin,
                                         line.number, row_number, Trim(line.text)));
      continue;
    }
    auto row = ReadRow(line, row_number, spans, columns, origin);
    if (!row) {
      if (!rows.closed && i + 1 == rows.end) {
        result.notes.push_back(fmt::format("{}:{}: row {} is cut off and the table not closed; read to row {} ({})",
                                           origin, line.number, row_number, row_number - 1, row.error().message));
        break;
      }
      return row.error();
    }
    row_sum += row->row.est_seconds;
    if (!std::isfinite(row_sum))
      return TableError(origin, line.number, row->total_from,
                        fmt::format("row {}, column '{}': the rows' times add up to more than a double holds",
                                    row_number, columns.names[columns.total]));
    result.ops.push_back(std::move(row->row));
  }
  return row_sum;
}

// The "Total time for <model>: <time>" lines right after the table: the first one's time
// and the last such line (last_line when there is none).
struct TotalLines {
  std::optional<double> total;
  size_t last_line = 0;
};

Result<TotalLines> ReadTotalLines(const std::vector<Line>& lines, size_t last_line, const std::string& origin) {
  TotalLines totals{std::nullopt, last_line};
  constexpr std::string_view kTotal = "Total time for ";
  for (size_t k = last_line + 1; k < lines.size() && Trim(lines[k].text).substr(0, kTotal.size()) == kTotal; ++k) {
    const std::string_view t = Trim(lines[k].text);
    const size_t colon = t.find(": ", kTotal.size());
    auto seconds = colon == std::string_view::npos ? std::nullopt : ParseTensorCastTime(t.substr(colon + 2));
    if (!seconds) return TableError(origin, lines[k].number, 0, "expected 'Total time for <model>: <time>'");
    if (!totals.total) totals.total = seconds;
    totals.last_line = k;
  }
  return totals;
}

}  // namespace

std::optional<double> ParseTensorCastTime(std::string_view text) {
  text = Trim(text);
  struct Unit {
    std::string_view suffix;
    double scale;
  };
  for (const Unit& u : {Unit{"ms", 1e-3}, Unit{"us", 1e-6}, Unit{"ns", 1e-9}, Unit{"s", 1.0}}) {
    if (!EndsWith(text, u.suffix)) continue;
    const std::string_view number = text.substr(0, text.size() - u.suffix.size());
    double v = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    // from_chars also reads "nan" and "inf", which are no time.
    if (number.empty() || ec != std::errc() || end != number.data() + number.size() || !std::isfinite(v) || v < 0)
      return std::nullopt;
    return v * u.scale;
  }
  return std::nullopt;
}

bool LooksLikeTensorCastTable(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first == std::string::npos || text[first] != '{';
}

Result<CompileResult> ParseTensorCastTable(const std::string& text, const std::string& origin) {
  const std::vector<Line> lines = SplitLines(text);
  const std::optional<size_t> first_line = FindTableStart(lines);
  if (!first_line)
    return UsageError(fmt::format("{}:1: no TensorCast performance table (a header line between two dashed "
                                  "separators, then rows, then a separator) in {} line(s)", origin, lines.size()));
  const std::string_view separator = lines[*first_line].text;
  const std::vector<Span> spans = *SeparatorSpans(separator);
  auto columns = ReadColumns(lines[*first_line + 1], spans, origin);
  if (!columns) return columns.error();
  const size_t first_row = *first_line + 3;
  const RowsExtent rows = FindRowsEnd(lines, first_row, separator);
  CompileResult result;
  auto row_sum = ReadRows(lines, first_row, rows, spans, *columns, origin, result);
  if (!row_sum) return row_sum.error();
  if (!rows.closed)
    result.notes.push_back(fmt::format("{}:{}: the table has no closing dashed separator; read to its last complete row",
                                       origin, lines[rows.end - 1].number));
  auto totals = ReadTotalLines(lines, rows.closed ? rows.end : rows.end - 1, origin);
  if (!totals) return totals.error();
  result.total_seconds = totals->total.value_or(*row_sum);
  const char* begin = lines[*first_line].text.data();
  const char* end = lines[totals->last_line].text.data() + lines[totals->last_line].text.size();
  result.table_text = std::string(begin, end) + "\n";
  return result;
}

}  // namespace harness
