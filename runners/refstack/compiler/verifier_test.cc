#include "runners/refstack/compiler/verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include "runners/refstack/compiler/compile_test_util.h"

namespace harness::compiler {
namespace {

using testing_util::Bf16;

using ::testing::HasSubstr;

std::string VerifyError(const Graph& g) {
  auto status = Verify(g);
  return status.ok() ? "(verified)" : status.error().message;
}

TEST(VerifierTest, AcceptsAWellFormedGraph) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({1, 8, 16}));
  Node* w = g.AddGetAttr("w", Bf16({16}));
  Node* begin = g.Call(OpKind::kRegionBegin, {x, int64_t{0}});
  Node* norm = g.Call(OpKind::kRmsNorm, {begin, w, 1e-6});
  Node* end = g.Call(OpKind::kRegionEnd, {norm, int64_t{0}});
  Node* copy = g.Call(OpKind::kCopyRegionV2, {end, end, int64_t{0}});
  g.SetOutput({copy, end});
  EXPECT_EQ(VerifyError(g), "(verified)");
}

TEST(VerifierTest, UseBeforeDefinitionNamesBothNodes) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({4, 4}));
  Node* producer = g.Call(OpKind::kMul, {x, x});
  {
    auto guard = g.InsertBefore(producer);
    g.Call(OpKind::kAdd, {producer, x});
  }
  g.SetOutput({producer});
  EXPECT_EQ(VerifyError(g),
            "graph verification failed: node 'mul' (aten.mul.Tensor) is defined after its consumer 'add' "
            "(aten.add.Tensor)");
}

TEST(VerifierTest, RejectsReferencesIntoAnotherGraph) {
  Graph other;
  Node* foreign = other.AddPlaceholder("foreign", Bf16({4, 4}));
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({4, 4}));
  Node* sum = g.Call(OpKind::kAdd, {x, foreign});
  g.SetOutput({sum});
  EXPECT_THAT(VerifyError(g), HasSubstr("dangling reference: 'add' (aten.add.Tensor) uses 'foreign', which belongs "
                                        "to another graph"));
}

TEST(VerifierTest, RejectsMetaThatDisagreesWithTheShapeRule) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({1, 8, 16}));
  Node* w = g.AddGetAttr("w", Bf16({16}));
  Node* norm = g.CallWithMeta("tensor_cast.rms_norm.default", {x, w, 1e-6}, {Bf16({1, 4, 16})});
  g.SetOutput({norm});
  EXPECT_EQ(VerifyError(g),
            "graph verification failed: shape mismatch at 'rms_norm' (tensor_cast.rms_norm.default): it has "
            "bf16[1, 4, 16] but its inputs give bf16[1, 8, 16]");
}

TEST(VerifierTest, RejectsKnownOpsWhoseInputsBreakTheRule) {
  Graph g;
  Node* a = g.AddPlaceholder("a", Bf16({8, 16}));
  Node* b = g.AddPlaceholder("b", Bf16({32, 4}));
  Node* mm = g.CallWithMeta("aten.mm.default", {a, b}, {Bf16({8, 4})});
  g.SetOutput({mm});
  EXPECT_THAT(VerifyError(g), HasSubstr("node 'mm' (aten.mm.default): cannot multiply bf16[8, 16] by bf16[32, 4]"));
}

TEST(VerifierTest, UnknownOpsKeepTheirOwnMeta) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({8, 16}));
  Node* custom = g.CallWithMeta("vendor.fancy_op.default", {x, int64_t{3}}, {Bf16({2})});
  g.SetOutput({custom});
  EXPECT_EQ(custom->name(), "fancy_op");
  EXPECT_EQ(VerifyError(g), "(verified)");
}

TEST(VerifierTest, RejectsMalformedRegions) {
  {
    Graph g;
    Node* x = g.AddPlaceholder("x", Bf16({4, 4}));
    Node* copy = g.Call(OpKind::kCopyRegion, {x, int64_t{7}});
    g.SetOutput({copy});
    EXPECT_THAT(VerifyError(g), HasSubstr("replays region 7, which has not been closed"));
  }
  {
    Graph g;
    Node* x = g.AddPlaceholder("x", Bf16({4, 4}));
    Node* b0 = g.Call(OpKind::kRegionBegin, {x, int64_t{0}});
    Node* b1 = g.Call(OpKind::kRegionBegin, {b0, int64_t{1}});
    g.SetOutput({b1});
    EXPECT_THAT(VerifyError(g), HasSubstr("region 1 begins at '_internal_mark_region_begin_1'"));
  }
  {
    Graph g;
    Node* x = g.AddPlaceholder("x", Bf16({4, 4}));
    Node* b = g.Call(OpKind::kRegionBegin, {x, int64_t{0}});
    Node* e = g.Call(OpKind::kRegionEnd, {b, int64_t{0}});
    Node* copy = g.Call(OpKind::kCopyRegionV2, {e, x, int64_t{0}});
    g.SetOutput({copy});
    EXPECT_THAT(VerifyError(g), HasSubstr("uses 'x' (placeholder) as output template, not the end of region 0"));
  }
}

TEST(VerifierTest, RequiresAnOutputNode) {
  Graph g;
  g.AddPlaceholder("x", Bf16({4, 4}));
  EXPECT_EQ(VerifyError(g), "graph verification failed: the graph has no output node");
}

}  // namespace
}  // namespace harness::compiler
