#include "harness/stack/tensorcast_table.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

namespace harness {
namespace {

// The layout of the msmodeling user guide's example (no input shapes), with log lines
// before the table and the runner's summary after it.
constexpr const char* kGuideTable = R"(INFO loading model Qwen/Qwen3-32B
-----------------------------------------  --------------  ------------  ----------
                   Name                    analytic total  analytic avg  # of Calls
-----------------------------------------  --------------  ------------  ----------
tensor_cast.static_quant_linear.default         884.004ms       1.973ms         448
tensor_cast.attention.default                   512.250ms       8.004ms          64
aten.view.default                                 0.000ns       0.000ns        1024
-----------------------------------------  --------------  ------------  ----------
Total time for analytic: 1.744s
[analytic] Execution time: 1.744174 s
)";

TEST(TensorCastTable, ReadsTheGuideLayoutSkippingLogsAndTheSummary) {
  auto t = ParseTensorCastTable(kGuideTable, "out.txt");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->ops.size(), 3u);
  EXPECT_EQ(t->ops[0].op, "tensor_cast.static_quant_linear.default");
  EXPECT_EQ(t->ops[0].input_shapes, "");
  EXPECT_EQ(t->ops[0].calls, 448);
  EXPECT_DOUBLE_EQ(t->ops[0].est_seconds, 0.884004);
  EXPECT_EQ(t->ops[2].calls, 1024);
  EXPECT_DOUBLE_EQ(t->total_seconds, 1.744);
  EXPECT_EQ(t->table_text.substr(0, 5), "-----");
  EXPECT_EQ(t->table_text.find("INFO"), std::string::npos);
  EXPECT_EQ(t->table_text.find("Execution time"), std::string::npos);
  EXPECT_NE(t->table_text.find("Total time for analytic: 1.744s"), std::string::npos);
}

TEST(TensorCastTable, ShapesWithSpacesBoundColumnsAndCodePointWidths) {
  // "Bound" and the % columns are optional extras; "ü" is one code point of two bytes, so
  // its row is one byte longer than its neighbours, as Python pads it.
  const std::string text =
      "--------------------------  -------------  ---------------------  --------------  ------------  ----------------  ----------\n"
      "           Name             Bound (anal.)       Input Shapes      analytic total  analytic avg  analytic comm %   # of Calls\n"
      "--------------------------  -------------  ---------------------  --------------  ------------  ----------------  ----------\n"
      "tensor_cast.all_reduce.dft  comm_bound     [1, 128, 5120]               20.500us      20.500us             99.00           1\n"
      "tensor_cast.rms_norm.übung  memory_bound   [1, 64, 5120], [5120]         4.000us       2.000us              0.00           2\n"
      "--------------------------  -------------  ---------------------  --------------  ------------  ----------------  ----------\n"
      "Total time for analytic: 24.500us\n";
  auto t = ParseTensorCastTable(text, "t.txt");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->ops.size(), 2u);
  EXPECT_EQ(t->ops[0].input_shapes, "[1, 128, 5120]");
  EXPECT_EQ(t->ops[1].op, "tensor_cast.rms_norm.übung");
  EXPECT_EQ(t->ops[1].input_shapes, "[1, 64, 5120], [5120]");
  EXPECT_EQ(t->ops[1].calls, 2);
  EXPECT_DOUBLE_EQ(t->ops[1].est_seconds, 4e-6);
  EXPECT_DOUBLE_EQ(t->total_seconds, 24.5e-6);
}

// The table docs/exec-protocol.md shows, read from the document itself: its shapes cell
// "[1, 64, 5120], [5120]" is one character wider than its dashes, and reading by the
// dashes' widths stored "[1, 64, 5120], [5120".
TEST(TensorCastTable, TheExecProtocolExampleIsReadWhole) {
  const std::string doc = testing_util::ReadFile(std::filesystem::path(testing_util::kSourceRoot) / "docs/exec-protocol.md");
  const auto start = doc.find("```\nINFO compiling");
  ASSERT_NE(start, std::string::npos) << "the example moved";
  const std::string example = doc.substr(start + 4, doc.find("```", start + 4) - start - 4);
  auto t = ParseTensorCastTable(example, "exec-protocol.md");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->ops.size(), 1u);
  EXPECT_EQ(t->ops[0].op, "tensor_cast.rms_norm.default");
  EXPECT_EQ(t->ops[0].input_shapes, "[1, 64, 5120], [5120]");
  EXPECT_EQ(t->ops[0].calls, 2);
  EXPECT_DOUBLE_EQ(t->ops[0].est_seconds, 20e-6);
  EXPECT_DOUBLE_EQ(t->total_seconds, 20e-6);
}

// Columns are counted in characters, not bytes: a name of 2-, 3- and 4-byte UTF-8 characters
// and a byte that begins none (counted alone), in the layout where a cell is placed by its
// column (a blank cell beside it), leaves each later text under its own column's dashes. By
// bytes, "2.000us" would sit under two columns.
TEST(TensorCastTable, ColumnsAreCountedInCharactersAndAStrayByteIsOne) {
  const std::string rule = "------  --------------  --------------  ----------\n";
  const std::string head = rule + " Name    Input Shapes    analytic total  # of Calls\n" + rule;
  const std::string name = "z\u00e9\u2603\U0001d11e\xff";  // 5 characters, 11 bytes
  auto t = ParseTensorCastTable(head + name + std::string(25, ' ') + "2.000us           3\n" + rule, "u8.txt");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->ops.size(), 1u);
  EXPECT_EQ(t->ops[0].op, name);
  EXPECT_EQ(t->ops[0].input_shapes, "");
  EXPECT_DOUBLE_EQ(t->ops[0].est_seconds, 2e-6);
  EXPECT_EQ(t->ops[0].calls, 3);
}

TEST(TensorCastTable, CellsAreReadByTheirSeparatorsNotTheDashesWidths) {
  const std::string rule = "------  --------------  --------------  ----------\n";
  const std::string head = rule + " Name    Input Shapes    analytic total  # of Calls\n" + rule;
  // A name far wider than its dashes shifts the row: one text per column, read in order.
  auto wide = ParseTensorCastTable(
      head + "tensor_cast.grouped_matmul_swiglu_quant.default  [1, 100, 5120], [128, 5120, 1536]  1.500ms  4\n" + rule,
      "w.txt");
  ASSERT_TRUE(wide.ok()) << wide.error().message;
  EXPECT_EQ(wide->ops[0].op, "tensor_cast.grouped_matmul_swiglu_quant.default");
  EXPECT_EQ(wide->ops[0].input_shapes, "[1, 100, 5120], [128, 5120, 1536]");
  EXPECT_EQ(wide->ops[0].calls, 4);
  EXPECT_DOUBLE_EQ(wide->ops[0].est_seconds, 1.5e-3);
  // A blank cell (an op without tensor arguments): each text goes under its column's dashes.
  auto blank = ParseTensorCastTable(head + "zeros                         2.000us           3\n" + rule, "b.txt");
  ASSERT_TRUE(blank.ok()) << blank.error().message;
  EXPECT_EQ(blank->ops[0].op, "zeros");
  EXPECT_EQ(blank->ops[0].input_shapes, "");
  EXPECT_EQ(blank->ops[0].calls, 3);
  // A blank cell and a text under two columns: which cell it is cannot be told.
  auto unclear = ParseTensorCastTable(head + "aten.zeros.default            2.000us           3\n" + rule, "u.txt");
  ASSERT_FALSE(unclear.ok());
  EXPECT_EQ(unclear.error().code, ExitCode::kUsage);
  EXPECT_EQ(unclear.error().message,
            "u.txt:4:1: 3 cells for 4 columns, and the cell 'aten.zeros.default' lies under columns 'Name' and "
            "'Input Shapes': cannot tell which column it is in (cells are separated by two spaces)");
}

TEST(TensorCastTable, AnEmptyTableAndAMissingTotalLine) {
  const std::string text =
      "----  --------------  ----------\n"
      "Name  analytic total  # of Calls\n"
      "----  --------------  ----------\n"
      "----  --------------  ----------\n";
  auto t = ParseTensorCastTable(text, "t.txt");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->ops.empty());
  EXPECT_EQ(t->total_seconds, 0);
}

TEST(TensorCastTable, MalformedInputNamesLineAndColumn) {
  const std::string head =
      "--------------------  --------------  ----------\n"
      "        Name          analytic total  # of Calls\n"
      "--------------------  --------------  ----------\n";
  const std::string rule = head.substr(0, head.find('\n') + 1);
  auto bad_calls = ParseTensorCastTable(head + "aten.mm.default              1.0ms         x2\n" + rule, "o.txt");
  ASSERT_FALSE(bad_calls.ok());
  EXPECT_EQ(bad_calls.error().message, "o.txt:4:44: row 1, column '# of Calls': expected a whole number, got 'x2'");
  EXPECT_EQ(bad_calls.error().code, ExitCode::kUsage);
  auto bad_time = ParseTensorCastTable(head + "aten.mm.default              1.0 h          2\n" + rule, "o.txt");
  ASSERT_FALSE(bad_time.ok());
  EXPECT_NE(bad_time.error().message.find("o.txt:4:30: row 1, column 'analytic total': expected a time"),
            std::string::npos)
      << bad_time.error().message;
  // Not the last row of an unclosed table: a malformed row, not a cut one.
  auto inner = ParseTensorCastTable(head + "aten.mm.default              1.0ms         x2\n" +
                                        "aten.mm.default              1.0ms          2\n",
                                    "o.txt");
  ASSERT_FALSE(inner.ok());
  EXPECT_EQ(inner.error().message, "o.txt:4:44: row 1, column '# of Calls': expected a whole number, got 'x2'");
  // Columns count code points as Python does: a name of 2-, 3- and 4-byte characters as
  // long as "aten.mm.default" puts 'x2' at the same column.
  auto wide = ParseTensorCastTable(head + "aten.mm.dé→𝑥ult              1.0ms         x2\n" + rule, "o.txt");
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.error().message, "o.txt:4:44: row 1, column '# of Calls': expected a whole number, got 'x2'");
  auto no_calls = ParseTensorCastTable(
      "----  -----\nName  Shape\n----  -----\n----  -----\n", "o.txt");
  ASSERT_FALSE(no_calls.ok());
  EXPECT_EQ(no_calls.error().message, "o.txt:2:1: the header has no '# of Calls' column");
  auto none = ParseTensorCastTable("compile failed\n----\n", "o.txt");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("o.txt:1: no TensorCast performance table"), std::string::npos);
}

// A log with no table, of every length up to a few lines (a lone dashed rule among them,
// last or not, and lines that start with dashes but hold words), is "no table" counting its
// lines: never a table found at its last lines.
TEST(TensorCastTable, ALogWithoutATableOfAnyLengthIsNoTable) {
  const std::vector<std::string> log = {"compile failed",    "----",        "--- retry 2 of 3 ---",
                                        "see the log above", "----  -----", "-- done --"};
  for (std::size_t n = 1; n <= log.size(); ++n) {
    std::string text;
    for (std::size_t i = 0; i < n; ++i) text += log[i] + "\n";
    auto parsed = ParseTensorCastTable(text, "o.txt");
    ASSERT_FALSE(parsed.ok()) << n << " lines: read a table";
    EXPECT_NE(parsed.error().message.find(fmt::format("o.txt:1: no TensorCast performance table (a header line between "
                                                      "two dashed separators, then rows, then a separator) in {} line(s)",
                                                      n)),
              std::string::npos)
        << parsed.error().message;
  }
}

// A header cell under two columns past the first is named by their numbers (the header
// has no names yet to give them).
TEST(TensorCastTable, AHeaderCellUnderTwoLaterColumnsNamesTheirNumbers) {
  const std::string rule = "----  -----  ----------\n";
  auto parsed = ParseTensorCastTable(rule + "Name  Shapes_X_Calls\n" + rule, "o.txt");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message,
            "o.txt:2:7: 2 cells for 3 columns, and the cell 'Shapes_X_Calls' lies under columns 2 and 3: cannot tell "
            "which column it is in (cells are separated by two spaces)");
}

// msmodeling's documentation shortens tables with a "..." row and may leave the closing
// rule out; a run killed mid-print leaves a table without it and a cut last row.
TEST(TensorCastTable, ElisionRowsAndUnclosedTablesAreReadWithANote) {
  const std::string head =
      "--------------------  --------------  ----------\n"
      "        Name          analytic total  # of Calls\n"
      "--------------------  --------------  ----------\n";
  const std::string rows =
      "aten.mm.default              1.0ms          2\n"
      "...\n"
      "       ...                  ...           ...\n"
      "aten.add.Tensor              2.0ms          4\n";
  auto closed = ParseTensorCastTable(head + rows + head.substr(0, head.find('\n') + 1), "o.txt");
  ASSERT_TRUE(closed.ok()) << closed.error().message;
  ASSERT_EQ(closed->ops.size(), 2u);
  EXPECT_EQ(closed->ops[1].op, "aten.add.Tensor");
  ASSERT_EQ(closed->notes.size(), 2u);
  EXPECT_EQ(closed->notes[0], "o.txt:5: row 2 ('...') stands for rows left out; skipped");
  EXPECT_DOUBLE_EQ(closed->total_seconds, 0.003);
  // No closing rule: read to the end of the file.
  auto unclosed = ParseTensorCastTable(head + rows, "o.txt");
  ASSERT_TRUE(unclosed.ok()) << unclosed.error().message;
  EXPECT_EQ(unclosed->ops.size(), 2u);
  EXPECT_NE(unclosed->notes.back().find("o.txt:7: the table has no closing dashed separator"), std::string::npos)
      << unclosed->notes.back();
  // Killed mid-print: the cut last row is dropped, said in a note; the total line after a
  // table without its rule ends the rows.
  auto cut = ParseTensorCastTable(head + rows + "aten.softmax.int             3.0", "o.txt");
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  EXPECT_EQ(cut->ops.size(), 2u);
  EXPECT_NE(cut->notes[2].find("o.txt:8: row 5 is cut off"), std::string::npos) << cut->notes[2];
  auto total = ParseTensorCastTable(head + rows + "Total time for analytic: 5ms\n", "o.txt");
  ASSERT_TRUE(total.ok()) << total.error().message;
  EXPECT_DOUBLE_EQ(total->total_seconds, 0.005);
  // The same rows written with the ellipsis character (U+2026), alone and under every column.
  const std::string ellipsis = "\xe2\x80\xa6";
  auto unicode = ParseTensorCastTable(head + "aten.mm.default              1.0ms          2\n" + ellipsis +
                                          "\n       " + ellipsis + "                  " + ellipsis + "           " +
                                          ellipsis + "\naten.add.Tensor              2.0ms          4\n" +
                                          head.substr(0, head.find('\n') + 1),
                                      "o.txt");
  ASSERT_TRUE(unicode.ok()) << unicode.error().message;
  ASSERT_EQ(unicode->ops.size(), 2u);
  EXPECT_EQ(unicode->ops[1].op, "aten.add.Tensor");
  ASSERT_EQ(unicode->notes.size(), 2u);
  EXPECT_EQ(unicode->notes[0], "o.txt:5: row 2 ('" + ellipsis + "') stands for rows left out; skipped");
  // A row is elided only when dots are all it holds: a shapes cell "[...]" is part of a row.
  const std::string shaped =
      "---------------  ------------  --------------  ----------\n"
      "      Name       Input Shapes  analytic total  # of Calls\n"
      "---------------  ------------  --------------  ----------\n";
  auto elided_shape = ParseTensorCastTable(shaped + "aten.mm.default  [...]                  1.0ms           2\n" + shaped.substr(0, shaped.find('\n') + 1), "o.txt");
  ASSERT_TRUE(elided_shape.ok()) << elided_shape.error().message;
  ASSERT_EQ(elided_shape->ops.size(), 1u);
  EXPECT_EQ(elided_shape->ops[0].input_shapes, "[...]");
  EXPECT_TRUE(elided_shape->notes.empty());
  // What was read reads back the same (the exec stack and the fuzz target rely on it).
  auto again = ParseTensorCastTable(cut->table_text, "again.txt");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->ops, cut->ops);
}

TEST(TensorCastTable, RowTimesThatOverflowTheirSumAreRefused) {
  const std::string text =
      "----  -------  ----------\n"
      "Name  a total  # of Calls\n"
      "----  -------  ----------\n"
      "x     1e308s            1\n"
      "y     1e308s            1\n"
      "----  -------  ----------\n";
  auto t = ParseTensorCastTable(text, "big.txt");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "big.txt:5:7: row 2, column 'a total': the rows' times add up to more than a double holds");
}

// A file written on Windows ends lines in "\r\n"; a log that passed through a terminal may
// add more. A row's last cell reads the same however many carriage returns end its line,
// in a closed table and in the last row of an unclosed one, and table_text reads back.
TEST(TensorCastTable, CarriageReturnsEndingALineAreNotPartOfItsLastCell) {
  for (const std::string cr : {"\r", "\r\r\r"}) {
    const std::string rows = "----  -------  ----------" + cr + "\n" + "Name  a total  # of Calls" + cr + "\n" +
                             "----  -------  ----------" + cr + "\n" + "x      1.5ms           2" + cr + "\n" +
                             "y      2.5ms           3" + cr;
    for (const std::string& closing : {"\n----  -------  ----------" + cr + "\n", std::string()}) {
      SCOPED_TRACE(testing::Message() << cr.size() << " carriage return(s), " << (closing.empty() ? "un" : "") << "closed");
      auto t = ParseTensorCastTable(rows + closing, "crlf.txt");
      ASSERT_TRUE(t.ok()) << t.error().message;
      ASSERT_EQ(t->ops.size(), 2u);
      EXPECT_EQ(t->ops[1].calls, 3);
      EXPECT_DOUBLE_EQ(t->total_seconds, 4e-3);
      auto again = ParseTensorCastTable(t->table_text, "again.txt");
      ASSERT_TRUE(again.ok()) << again.error().message;
      EXPECT_EQ(again->ops, t->ops);
      EXPECT_EQ(again->table_text, t->table_text);
    }
  }
}

TEST(TensorCastTable, TimesAndDetection) {
  EXPECT_DOUBLE_EQ(*ParseTensorCastTime("1.234ms"), 0.001234);
  EXPECT_DOUBLE_EQ(*ParseTensorCastTime("2.000s"), 2.0);
  EXPECT_DOUBLE_EQ(*ParseTensorCastTime(" 5.5ns "), 5.5e-9);
  EXPECT_FALSE(ParseTensorCastTime("ms").has_value());
  EXPECT_FALSE(ParseTensorCastTime("-1ms").has_value());
  EXPECT_FALSE(ParseTensorCastTime("1.0 min").has_value());
  // from_chars reads these; a time they are not (found by fuzz_tensorcast_table).
  EXPECT_FALSE(ParseTensorCastTime("nanms").has_value());
  EXPECT_FALSE(ParseTensorCastTime("infs").has_value());
  EXPECT_FALSE(ParseTensorCastTime("1e999s").has_value());
  EXPECT_FALSE(LooksLikeTensorCastTable("  \n{\"format_version\": 1}"));
  EXPECT_TRUE(LooksLikeTensorCastTable("-----\n"));
}

}  // namespace
}  // namespace harness
