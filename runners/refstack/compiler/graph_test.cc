#include "runners/refstack/compiler/graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include "runners/refstack/compiler/compile_test_util.h"

namespace harness::compiler {
namespace {

using testing_util::Bf16;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(GraphTest, CallInfersMetaAndNamesNodesLikeFx) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({1, 8, 16}));
  Node* w = g.AddGetAttr("model.norm.weight", Bf16({16}));
  Node* a = g.Call(OpKind::kRmsNorm, {x, w, 1e-6});
  Node* b = g.Call(OpKind::kRmsNorm, {a, w, 1e-6});
  EXPECT_EQ(a->name(), "rms_norm");
  EXPECT_EQ(b->name(), "rms_norm_1");
  EXPECT_EQ(w->name(), "model_norm_weight");
  EXPECT_EQ(b->op(), "tensor_cast.rms_norm.default");
  EXPECT_EQ(b->meta(), Bf16({1, 8, 16}));
  EXPECT_THAT(g.Nodes(), ElementsAre(x, w, a, b));
}

TEST(GraphTest, UsersAreOrderedAndListedOncePerUser) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({4, 4}));
  Node* sq = g.Call(OpKind::kMul, {x, x});
  Node* sum = g.Call(OpKind::kAdd, {sq, x});
  EXPECT_THAT(x->users(), ElementsAre(sq, sum));
  EXPECT_THAT(sq->users(), ElementsAre(sum));
}

TEST(GraphTest, InsertAfterKeepsCreationOrderAndDefaultAppendsBeforeOutput) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({4, 4}));
  Node* last = g.Call(OpKind::kAdd, {x, x});
  Node* out = g.SetOutput({last});
  Node* tail = g.Call(OpKind::kMul, {last, x});  // default: before the output node
  Node *first, *second;
  {
    auto guard = g.InsertAfter(x);
    first = g.Call(OpKind::kMul, {x, x});
    second = g.Call(OpKind::kMul, {first, x});
  }
  EXPECT_THAT(g.Nodes(), ElementsAre(x, first, second, last, tail, out));
}

TEST(GraphTest, ReplaceInputRewritesNodeListsAndUsers) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({4, 8}));
  Node* y = g.AddPlaceholder("y", Bf16({4, 8}));
  Node* w = g.AddGetAttr("w", Bf16({2, 8, 6}));
  Node* gmm = g.Call(OpKind::kGroupedMatmul, {NodeList{x}, NodeList{w}, NodeList{}});
  g.ReplaceInput(gmm, x, y);
  EXPECT_EQ(std::get<NodeList>(gmm->args()[0]), NodeList{y});
  EXPECT_TRUE(x->users().empty());
  EXPECT_THAT(y->users(), ElementsAre(gmm));
}

TEST(GraphTest, ReplaceAllUsesSkipsTheNewNodeAndFilteredUsers) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({4, 4}));
  Node* a = g.Call(OpKind::kMul, {x, x});
  Node* b = g.Call(OpKind::kAdd, {x, a});
  Node* keep = g.Call(OpKind::kSub, {x, a});
  Node* out = g.SetOutput({b, keep});
  Node* repl = [&] {
    auto guard = g.InsertAfter(x);
    return g.Call(OpKind::kAdd, {x, 1.0});
  }();
  const int changed = g.ReplaceAllUses(x, repl, [&](const Node* u) { return u == keep; });
  EXPECT_EQ(changed, 2);  // a and b; repl itself and keep untouched
  EXPECT_EQ(a->node_arg(0), repl);
  EXPECT_EQ(b->node_arg(0), repl);
  EXPECT_EQ(keep->node_arg(0), x);
  EXPECT_THAT(x->users(), ElementsAre(keep, repl));
  EXPECT_EQ(out->kind(), OpKind::kOutput);
}

TEST(GraphTest, EraseRefusesNodesWithUsersAndDceKeepsImpureOps) {
  Graph g;
  Node* k = g.AddPlaceholder("k", Bf16({8, 2, 4}));
  Node* cache = g.AddGetAttr("cache", Bf16({2, 1, 8, 2, 4}));
  Node* slots = g.AddPlaceholder("slots", {{8}, DType::kInt64});
  Node* dead1 = g.Call(OpKind::kMul, {k, k});
  Node* dead2 = g.Call(OpKind::kAdd, {dead1, k});
  Node* store = g.Call(OpKind::kReshapeAndCache, {k, k, cache, slots});
  Node* live = g.Call(OpKind::kMul, {k, 2.0});
  g.SetOutput({live});
  auto refused = g.Erase(dead1);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("still has 1 user(s), first 'add'"));
  EXPECT_EQ(g.EliminateDeadCode(), 2);
  EXPECT_FALSE(dead1->live());
  EXPECT_FALSE(dead2->live());
  EXPECT_TRUE(store->live());
  EXPECT_TRUE(cache->live());
  EXPECT_THAT(k->users(), ElementsAre(store, live));
}

TEST(GraphTest, StableTopoSortLeavesValidOrderAndMovesOnlyWhatMust) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({4, 4}));
  Node* a = g.Call(OpKind::kMul, {x, x});
  Node* b = g.Call(OpKind::kAdd, {a, x});
  Node* c = g.Call(OpKind::kSub, {b, x});
  Node* out = g.SetOutput({c});
  ASSERT_TRUE(g.StableTopoSort().ok());
  EXPECT_THAT(g.Nodes(), ElementsAre(x, a, b, c, out));
  // A producer emitted after its consumer: only the producer moves.
  Node* late = [&] {
    auto guard = g.InsertAfter(c);
    return g.Call(OpKind::kMul, {x, 3.0});
  }();
  g.ReplaceInput(b, x, late);
  EXPECT_THAT(g.Nodes(), ElementsAre(x, a, b, c, late, out));
  ASSERT_TRUE(g.StableTopoSort().ok());
  EXPECT_THAT(g.Nodes(), ElementsAre(x, a, late, b, c, out));
}

TEST(GraphTest, TupleOutputsAreReadThroughGetItem) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({6, 10}));
  Node* split = g.Call(OpKind::kSplitWithSizes, {x, IntList{4, 6}, int64_t{-1}});
  EXPECT_TRUE(split->is_tuple());
  Node* second = g.GetItem(split, 1);
  EXPECT_EQ(second->meta(), Bf16({6, 6}));
  EXPECT_THROW(g.GetItem(split, 2), ShapeError);
  EXPECT_THROW(g.GetItem(x, 0), ShapeError);
  EXPECT_THROW((void)split->meta(), ShapeError);
  // A failed Call leaves no node behind.
  EXPECT_EQ(g.size(), 3u);
}

TEST(GraphTest, BadShapesFailNamingNodeAndOp) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({1, 8, 16}));
  Node* w = g.AddGetAttr("w", Bf16({32}));
  try {
    g.Call(OpKind::kRmsNorm, {x, w, 1e-6});
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("node 'rms_norm' (tensor_cast.rms_norm.default): weight bf16[32] does not "
                                    "match the last dim of bf16[1, 8, 16]"));
  }
}

TEST(GraphTest, PrintShowsMetaArgsAndFlags) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({1, 8, 16}));
  Node* rs = g.Call(OpKind::kReduceScatter, {x, int64_t{1}, int64_t{0}, IntList{0, 1}});
  rs->SetFlag(kFlagSpSourceAllReduce);
  g.SetOutput({rs});
  EXPECT_EQ(g.Print(),
            "%x: bf16[1, 8, 16] = placeholder\n"
            "%reduce_scatter: bf16[1, 4, 16] = tensor_cast.reduce_scatter.default(%x, 1, 0, [0, 1])"
            "  # sp_source_all_reduce\n"
            "return [%reduce_scatter]\n");
}

TEST(GraphTest, PropagateMetaFollowsRewrittenInputs) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({1, 8, 16}));
  Node* local = g.AddPlaceholder("local", Bf16({1, 4, 16}));
  Node* w = g.AddGetAttr("w", Bf16({16}));
  Node* norm = g.Call(OpKind::kRmsNorm, {x, w, 1e-6});
  Node* twice = g.Call(OpKind::kAdd, {norm, norm});
  g.ReplaceInput(norm, x, local);
  ASSERT_TRUE(g.PropagateMeta().ok());
  EXPECT_EQ(twice->meta(), Bf16({1, 4, 16}));
}

}  // namespace
}  // namespace harness::compiler
