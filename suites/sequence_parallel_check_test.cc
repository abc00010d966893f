// CheckSequenceParallel called directly: a table that sequence-parallelizes the norm passes,
// and each thing a broken table lacks or keeps is its own failure line, in the words the
// suite's cases fail with; the leftover all_reduce of the catalogued fault, compiled by the
// reference compiler, is the first line against the real golden.
#include "suites/sequence_parallel_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/util/paths.h"
#include "runners/refstack/compiler/compile_test_util.h"

namespace harness {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::StartsWith;

CompileRequest Tp(int tp_size) {
  CompileRequest r;
  r.tp_size = tp_size;
  r.num_queries = 1;
  return r;
}

CompileResult Table(std::vector<OpRow> ops) {
  CompileResult c;
  c.ops = std::move(ops);
  c.table_text = "<the table>";
  return c;
}

// An expectation of calls only: the op table meets it when the all_reduce is gone.
GoldenOpTable NoAllReduce() {
  GoldenOpTable g;
  g.kind = GoldenOpTable::Kind::kCalls;
  g.calls = {{"tensor_cast.all_reduce.default", 0}};
  return g;
}

const LocalNormShape kLocal{64, 5120};
const OpRow kLocalNorm{"tensor_cast.rms_norm.default", "[1, 64, 5120], [5120]", 2, 1e-6};

TEST(CheckSequenceParallel, ATableThatScattersTheNormPasses) {
  const CompileResult table = Table({kLocalNorm,
                                     {"tensor_cast.reduce_scatter.default", "[128, 5120]", 2, 1e-5},
                                     {"tensor_cast.all_gather.default", "[1, 64, 5120]", 3, 1e-4}});
  const CaseOutcome outcome = CheckSequenceParallel(Tp(2), kLocal, table, NoAllReduce(), "g.json");
  EXPECT_THAT(outcome.failures, IsEmpty());
  EXPECT_THAT(outcome.metrics, IsEmpty()) << "the body records the table and its time";
  EXPECT_THAT(outcome.notes, IsEmpty());
}

TEST(CheckSequenceParallel, EachMissingOrLeftoverPartIsItsOwnLineAndTheGoldenDifferenceLast) {
  const CompileResult table = Table({{"tensor_cast.rms_norm.default", "[1, 128, 5120], [5120]", 1, 1e-6},
                                     {"tensor_cast.all_reduce.default", "[128, 5120]", 1, 7e-5},
                                     {"tensor_cast.all_reduce.default", "[1, 128, 5120]", 2, 7e-5}});
  const CaseOutcome outcome = CheckSequenceParallel(Tp(2), kLocal, table, NoAllReduce(), "g.json");
  EXPECT_THAT(
      outcome.failures,
      ElementsAre("no tensor_cast.rms_norm.default on the local shard ([1, 64, 5120], [5120]) in:\n<the table>",
                  "tensor_cast.all_reduce.default is left in the table: tensor_cast.all_reduce.default [128, 5120] "
                  "x1; tensor_cast.all_reduce.default [1, 128, 5120] x2",
                  "no tensor_cast.reduce_scatter.default in:\n<the table>",
                  "no tensor_cast.all_gather.default in:\n<the table>",
                  "op table differs from its golden expectation: tensor_cast.all_reduce.default: expected 0 "
                  "call(s), got 3\nexpected by g.json:\ntensor_cast.all_reduce.default: expected 0 call(s), got 3"));
}

TEST(CheckSequenceParallel, TpOneScattersNothing) {
  const OpRow scatter{"tensor_cast.reduce_scatter.default", "[64, 5120]", 1, 1e-5};
  EXPECT_THAT(CheckSequenceParallel(Tp(1), kLocal, Table({kLocalNorm}), NoAllReduce(), "g.json").failures,
              IsEmpty());
  EXPECT_THAT(CheckSequenceParallel(Tp(1), kLocal, Table({kLocalNorm, scatter}), NoAllReduce(), "g.json").failures,
              ElementsAre("TP 1 has no tokens to scatter:\n<the table>"));
}

// The catalogued fault sp-counts-bookkeeping-users through the reference compiler, against
// the case's real golden: the leftover all_reduce is the headline, the golden difference
// follows; without the fault the same case passes.
TEST(CheckSequenceParallel, TheCataloguedFaultFailsTheRealCaseNamingTheAllReduce) {
  const std::string id = "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0";
  const auto golden_file = GoldenOpTablePath(GoldenDir(), id).value();
  const GoldenOpTable golden = LoadGoldenOpTable(golden_file).value();
  const CompileRequest request = compiler::testing_util::SpRequest(/*disable_repetition=*/false);
  const CompileResult clean = compiler::testing_util::CompileOk(request);
  EXPECT_THAT(CheckSequenceParallel(request, kLocal, clean, golden, golden_file.string()).failures, IsEmpty());
  const CompileResult broken = compiler::testing_util::CompileOk(request, {.sp_counts_bookkeeping_users = true});
  const CaseOutcome outcome = CheckSequenceParallel(request, kLocal, broken, golden, golden_file.string());
  ASSERT_EQ(outcome.failures.size(), 2u);
  EXPECT_EQ(outcome.failures[0],
            "tensor_cast.all_reduce.default is left in the table: tensor_cast.all_reduce.default [128, 5120] x1");
  EXPECT_THAT(outcome.failures[1], StartsWith("op table differs from its golden expectation: "));
}

}  // namespace
}  // namespace harness
