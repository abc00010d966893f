#include "runners/refstack/compiler/gmm_swiglu_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runners/refstack/compiler/verifier.h"
#include "runners/refstack/compiler/compile_test_util.h"

namespace harness::compiler {
namespace {

using testing_util::Count;

using ::testing::HasSubstr;

constexpr int64_t kRows = 16, kHidden = 64, kInter = 32, kExperts = 4;

Node* Find(const Graph& g, OpKind kind) {
  for (Node* node : g.Nodes())
    if (node->kind() == kind) return node;
  return nullptr;
}

// GMM1 of an MoE MLP for one grouped-matmul kind: x [16, 64] (quantized as the kind
// needs), experts [4, 64, 2 * 32], then split / swiglu and an optional MXFP4 quant tail.
struct MoeMlp {
  Graph g;
  Node* gmm = nullptr;
  Node* split = nullptr;
  Node* swiglu = nullptr;
  Node* consumer = nullptr;  // what reads the swiglu (or its quant)

  explicit MoeMlp(OpKind kind, bool quant_tail = false, bool split_tensor = false) {
    const Shape w_shape{kExperts, kHidden, 2 * kInter};
    std::vector<Arg> args;
    auto x = [&](DType dtype) { return g.AddPlaceholder("x", {{kRows, kHidden}, dtype}); };
    auto scale = [&](Shape s, DType dtype) { return g.AddGetAttr("scale", {std::move(s), dtype}); };
    switch (kind) {
      case OpKind::kGroupedMatmul:
        args = {NodeList{x(DType::kBFloat16)}, NodeList{g.AddGetAttr("w", {w_shape, DType::kBFloat16})}, NodeList{}};
        break;
      case OpKind::kGroupedMatmulQuant:
      case OpKind::kGroupedMatmulQuantInt4: {
        const DType w = kind == OpKind::kGroupedMatmulQuant ? DType::kInt8 : DType::kInt4;
        args = {NodeList{x(DType::kInt8)},
                NodeList{g.AddGetAttr("w", {w_shape, w})},
                NodeList{scale({kExperts, 2 * kInter}, DType::kFloat32)},
                NodeList{},
                NodeList{scale({kRows, 1}, DType::kFloat32)},
                NodeList{},
                NodeList{},
                DType::kBFloat16};
        break;
      }
      case OpKind::kGroupedMatmulFp8:
      case OpKind::kGroupedMatmulMxfp4: {
        const DType d = kind == OpKind::kGroupedMatmulFp8 ? DType::kFloat8E4M3 : DType::kFloat4E2M1;
        args = {NodeList{x(d)},
                NodeList{g.AddGetAttr("w", {w_shape, d})},
                NodeList{scale({kExperts, 2 * kInter}, DType::kFloat32)},
                NodeList{scale({kRows, 2}, DType::kFloat32)},
                NodeList{},
                DType::kBFloat16};
        break;
      }
      default:
        ADD_FAILURE() << "not a base grouped matmul";
        return;
    }
    gmm = g.Call(kind, args);
    split = split_tensor ? g.Call(OpKind::kSplit, {gmm, kInter, int64_t{1}})
                         : g.Call(OpKind::kSplitWithSizes, {gmm, IntList{kInter, kInter}, int64_t{-1}});
    swiglu = g.Call(OpKind::kSwiglu, {g.GetItem(split, 0), g.GetItem(split, 1)});
    if (quant_tail) {
      Node* quant = g.Call(OpKind::kDynamicQuantizeMxfp4, {swiglu, int64_t{32}});
      Node* payload = g.GetItem(quant, 0);
      Node* q_scale = g.GetItem(quant, 1);
      consumer = g.Call(
          OpKind::kGroupedMatmulMxfp4,
          {NodeList{payload}, NodeList{g.AddGetAttr("w2", {{kExperts, kInter, kHidden}, DType::kFloat4E2M1})},
           NodeList{scale({kExperts, kHidden}, DType::kFloat32)}, NodeList{q_scale}, NodeList{}, DType::kBFloat16});
    } else {
      consumer = g.Call(OpKind::kMul, {swiglu, 2.0});
    }
    g.SetOutput({consumer});
  }
};

GroupedMatmulSwigluStats FuseOk(Graph& g, const GroupedMatmulSwigluOptions& o = {}) {
  auto stats = RunGroupedMatmulSwigluPass(g, o);
  EXPECT_TRUE(stats.ok()) << stats.error().message;
  auto verified = Verify(g);
  EXPECT_TRUE(verified.ok()) << verified.error().message << "\n" << g.Print();
  return stats.ok() ? *stats : GroupedMatmulSwigluStats{};
}

TEST(GroupedMatmulSwigluTest, EachGroupedMatmulFusesToItsSwigluForm) {
  const std::pair<OpKind, OpKind> map[] = {
      {OpKind::kGroupedMatmul, OpKind::kGroupedMatmulSwiglu},
      {OpKind::kGroupedMatmulQuant, OpKind::kGroupedMatmulQuantSwiglu},
      {OpKind::kGroupedMatmulQuantInt4, OpKind::kGroupedMatmulQuantInt4Swiglu},
      {OpKind::kGroupedMatmulFp8, OpKind::kGroupedMatmulFp8Swiglu},
      {OpKind::kGroupedMatmulMxfp4, OpKind::kGroupedMatmulMxfp4Swiglu},
  };
  for (const auto& [base, fused_kind] : map) {
    SCOPED_TRACE(std::string(InfoOf(base).name));
    MoeMlp m(base);
    const std::vector<Arg> gmm_args = m.gmm->args();
    auto stats = FuseOk(m.g);
    EXPECT_EQ(stats.fused, 1);
    EXPECT_EQ(stats.fused_with_quant, 0);
    Node* fused = m.consumer->node_arg(0);
    ASSERT_EQ(fused->kind(), fused_kind);
    EXPECT_EQ(fused->args(), gmm_args);  // same arguments as the grouped matmul
    EXPECT_EQ(fused->shape(), (Shape{kRows, kInter}));
    EXPECT_EQ(Count(m.g, OpKind::kSwiglu), 0);
    EXPECT_EQ(Count(m.g, OpKind::kSplitWithSizes), 0);
    EXPECT_EQ(Count(m.g, base), 0);
  }
}

TEST(GroupedMatmulSwigluTest, Mxfp4QuantTailFusesIntoSwigluQuant) {
  MoeMlp m(OpKind::kGroupedMatmulMxfp4, /*quant_tail=*/true);
  auto stats = FuseOk(m.g);
  EXPECT_EQ(stats.fused, 1);
  EXPECT_EQ(stats.fused_with_quant, 1);
  Node* fused = Find(m.g, OpKind::kGroupedMatmulMxfp4SwigluQuant);
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(std::get<int64_t>(fused->args().back()), 32);  // group_size appended
  EXPECT_TRUE(fused->is_tuple());
  EXPECT_EQ(fused->outputs()[0], (TensorMeta{{kRows, kInter}, DType::kFloat4E2M1}));
  EXPECT_EQ(fused->outputs()[1], (TensorMeta{{kRows, 1}, DType::kFloat8E8M0}));
  // GMM2 reads the fused op's payload and scale; the quant op and the swiglu are gone.
  Node* payload = std::get<NodeList>(m.consumer->args()[0])[0];
  EXPECT_EQ(payload->node_arg(0), fused);
  EXPECT_EQ(Count(m.g, OpKind::kDynamicQuantizeMxfp4), 0);
  EXPECT_EQ(Count(m.g, OpKind::kSwiglu), 0);
  EXPECT_EQ(Count(m.g, OpKind::kGroupedMatmulMxfp4), 1);  // GMM2 stays
}

TEST(GroupedMatmulSwigluTest, WithoutTheQuantTailFaultTheFusionStopsAtSwiglu) {
  MoeMlp m(OpKind::kGroupedMatmulMxfp4, /*quant_tail=*/true);
  auto stats = FuseOk(m.g, {.fuse_mxfp4_quant = false});
  EXPECT_EQ(stats.fused, 1);
  EXPECT_EQ(stats.fused_with_quant, 0);
  EXPECT_EQ(Count(m.g, OpKind::kGroupedMatmulMxfp4Swiglu), 1);
  EXPECT_EQ(Count(m.g, OpKind::kGroupedMatmulMxfp4SwigluQuant), 0);
  EXPECT_EQ(Count(m.g, OpKind::kDynamicQuantizeMxfp4), 1);
}

TEST(GroupedMatmulSwigluTest, SplitTensorAndSwappedHalvesAlsoMatch) {
  MoeMlp m(OpKind::kGroupedMatmulFp8, false, /*split_tensor=*/true);
  EXPECT_EQ(FuseOk(m.g).fused, 1);
  MoeMlp swapped(OpKind::kGroupedMatmul);
  Node* g0 = swapped.swiglu->node_arg(0);
  Node* g1 = swapped.swiglu->node_arg(1);
  swapped.g.SetArg(swapped.swiglu, 0, g1);
  swapped.g.SetArg(swapped.swiglu, 1, g0);
  EXPECT_EQ(FuseOk(swapped.g).fused, 1);
}

TEST(GroupedMatmulSwigluTest, ChainsWithOtherUsersOrOtherSplitsAreLeftAlone) {
  {  // the gate half is also read elsewhere
    MoeMlp m(OpKind::kGroupedMatmul);
    m.g.SetOutput({m.consumer, m.g.Call(OpKind::kMul, {m.swiglu->node_arg(0), 1.0})});
    EXPECT_EQ(FuseOk(m.g).fused, 0);
  }
  {  // the split output is read a third time
    MoeMlp m(OpKind::kGroupedMatmul);
    m.g.SetOutput({m.consumer, m.g.GetItem(m.split, 0)});
    EXPECT_EQ(FuseOk(m.g).fused, 0);
  }
  {  // split along the token dim
    Graph g;
    Node* x = g.AddPlaceholder("x", {{kRows, kHidden}, DType::kBFloat16});
    Node* w = g.AddGetAttr("w", {{kExperts, kHidden, kHidden}, DType::kBFloat16});
    Node* gmm = g.Call(OpKind::kGroupedMatmul, {NodeList{x}, NodeList{w}, NodeList{}});
    Node* split = g.Call(OpKind::kSplitWithSizes, {gmm, IntList{kRows / 2, kRows / 2}, int64_t{0}});
    g.SetOutput({g.Call(OpKind::kSwiglu, {g.GetItem(split, 0), g.GetItem(split, 1)})});
    EXPECT_EQ(FuseOk(g).fused, 0);
  }
  {  // a dense mm is not in the map
    Graph g;
    Node* x = g.AddPlaceholder("x", {{kRows, kHidden}, DType::kBFloat16});
    Node* mm = g.Call(OpKind::kMm, {x, g.AddGetAttr("w", {{kHidden, 2 * kInter}, DType::kBFloat16})});
    Node* split = g.Call(OpKind::kSplitWithSizes, {mm, IntList{kInter, kInter}, int64_t{-1}});
    g.SetOutput({g.Call(OpKind::kSwiglu, {g.GetItem(split, 0), g.GetItem(split, 1)})});
    EXPECT_EQ(FuseOk(g).fused, 0);
  }
}

TEST(GroupedMatmulSwigluTest, TopoDisorderFaultPutsTheUnquantizedFusionAfterItsConsumer) {
  MoeMlp m(OpKind::kGroupedMatmul);
  auto stats = RunGroupedMatmulSwigluPass(m.g, {.misplace_unquantized = true});
  ASSERT_TRUE(stats.ok());
  auto verified = Verify(m.g);
  ASSERT_FALSE(verified.ok());
  EXPECT_EQ(verified.error().message,
            "graph verification failed: node 'grouped_matmul_swiglu' (tensor_cast.grouped_matmul_swiglu.default) is "
            "defined after its consumer 'mul' (aten.mul.Tensor)");
  // Quantized forms are not affected by the fault.
  MoeMlp quant(OpKind::kGroupedMatmulQuant);
  EXPECT_EQ(FuseOk(quant.g, {.misplace_unquantized = true}).fused, 1);
}

}  // namespace
}  // namespace harness::compiler
