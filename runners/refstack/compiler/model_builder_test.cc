#include "runners/refstack/compiler/model_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "harness/util/paths.h"
#include "runners/refstack/compiler/verifier.h"
#include "runners/refstack/compiler/compile_test_util.h"

namespace harness::compiler {
namespace {

using testing_util::All;
using testing_util::Count;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ModelConfig LoadGolden(const std::string& id) {
  auto path = ModelConfigPath(harness::GoldenDir() / "models", id);
  EXPECT_TRUE(path.ok()) << path.error().message;
  auto config = LoadModelConfig(*path);
  EXPECT_TRUE(config.ok()) << config.error().message;
  return *config;
}

Graph BuildOk(const ModelConfig& config, const BuildOptions& options) {
  auto graph = BuildModel(config, options);
  EXPECT_TRUE(graph.ok()) << graph.error().message;
  auto verified = Verify(*graph);
  EXPECT_TRUE(verified.ok()) << verified.error().message;
  return std::move(graph).value();
}

TEST(ModelConfigTest, GoldenConfigsCarryTheResearchValues) {
  ModelConfig dense = LoadGolden("Qwen/Qwen3-32B");
  EXPECT_EQ(dense.model_type, "qwen3");
  EXPECT_EQ(dense.hidden_size, 5120);
  EXPECT_EQ(dense.num_hidden_layers, 64);
  EXPECT_EQ(dense.num_attention_heads, 64);
  EXPECT_EQ(dense.num_key_value_heads, 8);
  EXPECT_EQ(dense.head_dim, 128);
  EXPECT_EQ(dense.intermediate_size, 25600);
  EXPECT_EQ(dense.vocab_size, 151936);
  EXPECT_DOUBLE_EQ(dense.rms_norm_eps, 1e-6);
  ModelConfig moe = LoadGolden("Qwen/Qwen3-235B-A22B");
  EXPECT_EQ(moe.model_type, "qwen3_moe");
  EXPECT_EQ(moe.hidden_size, 4096);
  EXPECT_EQ(moe.num_hidden_layers, 94);
  EXPECT_EQ(moe.num_key_value_heads, 4);
  EXPECT_EQ(moe.num_experts, 128);
  EXPECT_EQ(moe.num_experts_per_tok, 8);
  EXPECT_EQ(moe.moe_intermediate_size, 1536);
  EXPECT_TRUE(moe.IsMoeLayer(0));
  EXPECT_TRUE(moe.IsMoeLayer(93));
}

TEST(ModelConfigTest, MissingFieldNamesTheFieldAndTheFile) {
  harness::Json j = harness::Json::parse(R"({"transformers_version": "4.51.0", "model_type": "qwen3",
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 64,
      "vocab_size": 128, "max_position_embeddings": 64, "rms_norm_eps": 1e-6})");
  auto config = ParseModelConfig(j, "models/Tiny.json");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message, "models/Tiny.json: hidden_size: missing field (expected an integer)");
  EXPECT_EQ(config.error().code, harness::ExitCode::kUsage);
  j["hidden_size"] = 32;
  j["model_type"] = "llama";
  config = ParseModelConfig(j, "models/Tiny.json");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message,
            "models/Tiny.json: model_type: unknown model type 'llama' (known: qwen3, qwen3_moe)");
  j["model_type"] = "qwen3_moe";
  config = ParseModelConfig(j, "models/Tiny.json");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message, "models/Tiny.json: num_experts: missing field (expected an integer)");
}

TEST(ModelConfigTest, MalformedFileAndUnknownModelAreUsageErrors) {
  const auto dir = std::filesystem::temp_directory_path() / "refstack_model_config_test";
  std::filesystem::create_directories(dir / "Org");
  { std::ofstream(dir / "Org" / "Broken.json") << "{\n  \"hidden_size\": ,\n}\n"; }
  auto config = LoadModelConfig(dir / "Org" / "Broken.json");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.error().message, HasSubstr("Broken.json:2:"));
  auto path = ModelConfigPath(dir, "Org/Missing");
  ASSERT_FALSE(path.ok());
  EXPECT_THAT(path.error().message, HasSubstr("unknown model 'Org/Missing' (known: Org/Broken;"));
  EXPECT_FALSE(ModelConfigPath(dir, "../Org/Broken").ok());
  std::filesystem::remove_all(dir);
}

TEST(ModelBuilderTest, UnknownQuantTypeListsTheKnownOnes) {
  auto q = ParseQuantType("int3");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().message, "unknown quant type 'int3' (known: none, bf16, w8a8, w4a8, fp8, mxfp4)");
  EXPECT_EQ(*ParseQuantType("MXFP4"), QuantType::kMxfp4);
  EXPECT_EQ(*ParseQuantType("bf16"), QuantType::kNone);
  EXPECT_FALSE(ParseWordEmbeddingTp("diagonal").ok());
}

TEST(ModelBuilderTest, OptionsTheConfigCannotShardAreRejected) {
  ModelConfig c = LoadGolden("Qwen/Qwen3-32B");
  BuildOptions o;
  o.tp_size = 3;
  auto g = BuildModel(c, o);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.error().message, HasSubstr("Qwen3-32B.json: tp_size 3 does not divide num_attention_heads = 64"));
  o.tp_size = 2;
  o.query_len = 0;
  EXPECT_THAT(BuildModel(c, o).error().message, HasSubstr("query_len must be at least 1, got 0"));
}

TEST(ModelBuilderTest, DenseLayerWithTensorParallelismAndRepetition) {
  ModelConfig c = LoadGolden("Qwen/Qwen3-32B");
  BuildOptions o;
  o.tp_size = 2;
  o.num_layers_override = 1;
  Graph g = BuildOk(c, o);
  // Row embedding, o_proj and down_proj each end in a TP all_reduce on [tokens, hidden].
  auto reduces = All(g, OpKind::kAllReduce);
  ASSERT_EQ(reduces.size(), 3u);
  EXPECT_EQ(reduces[0]->shape(), (Shape{1, 128, 5120}));
  EXPECT_EQ(reduces[1]->shape(), (Shape{128, 5120}));
  EXPECT_EQ(reduces[2]->shape(), (Shape{128, 5120}));
  // Half the heads per rank: q [128, 32*128], k/v [128, 4*128]; MLP 25600/2 per rank.
  auto mms = All(g, OpKind::kMm);
  ASSERT_EQ(mms.size(), 7u);  // q, k, v, o, gate_up, down, lm_head
  EXPECT_EQ(mms[0]->shape(), (Shape{128, 4096}));
  EXPECT_EQ(mms[1]->shape(), (Shape{128, 512}));
  EXPECT_EQ(mms[4]->shape(), (Shape{128, 25600}));
  EXPECT_EQ(mms[6]->shape(), (Shape{128, 151936}));
  EXPECT_EQ(Count(g, OpKind::kRmsNorm), 4);  // input, q_norm, k_norm, final
  EXPECT_EQ(Count(g, OpKind::kAddRmsNorm2), 1);
  EXPECT_EQ(Count(g, OpKind::kSwiglu), 1);
  // One representative region, its output kept as a formal graph output (v2).
  auto ends = All(g, OpKind::kRegionEnd);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(Count(g, OpKind::kRegionBegin), 1);
  EXPECT_EQ(std::get<NodeList>(g.output_node()->args()[0]).size(), 2u);
  EXPECT_EQ(std::get<NodeList>(g.output_node()->args()[0])[1], ends[0]);
  EXPECT_THAT(ends[0]->users(), ElementsAre(All(g, OpKind::kRmsNorm).back(), g.output_node()));
}

TEST(ModelBuilderTest, LaterLayersReplayTheRepresentative) {
  ModelConfig c = LoadGolden("Qwen/Qwen3-32B");
  BuildOptions o;
  o.num_layers_override = 4;
  Graph g = BuildOk(c, o);
  auto copies = All(g, OpKind::kCopyRegionV2);
  ASSERT_EQ(copies.size(), 3u);
  const Node* end = All(g, OpKind::kRegionEnd)[0];
  EXPECT_EQ(copies[0]->node_arg(0), end);
  EXPECT_EQ(copies[1]->node_arg(0), copies[0]);
  EXPECT_EQ(copies[2]->node_arg(0), copies[1]);
  for (const Node* copy : copies) EXPECT_EQ(copy->node_arg(1), end);
  EXPECT_EQ(Count(g, OpKind::kAttention), 1);  // one real layer
  o.copy_version = RegionCopyVersion::kV1;
  Graph v1 = BuildOk(c, o);
  EXPECT_EQ(Count(v1, OpKind::kCopyRegion), 3);
  EXPECT_EQ(Count(v1, OpKind::kCopyRegionV2), 0);
  EXPECT_EQ(std::get<NodeList>(v1.output_node()->args()[0]).size(), 1u);  // logits only
}

TEST(ModelBuilderTest, DisabledRepetitionExpandsAndFusesAcrossLayers) {
  ModelConfig c = LoadGolden("Qwen/Qwen3-32B");
  BuildOptions o;
  o.tp_size = 2;
  o.num_layers_override = 3;
  o.enable_repetition = false;
  Graph g = BuildOk(c, o);
  EXPECT_EQ(Count(g, OpKind::kRegionBegin), 0);
  EXPECT_EQ(Count(g, OpKind::kAttention), 3);
  EXPECT_EQ(Count(g, OpKind::kAddRmsNorm2), 5);  // 3 post-attention + 2 next-layer inputs
  EXPECT_EQ(Count(g, OpKind::kAddRmsNorm), 1);   // last residual add + final norm
  EXPECT_EQ(Count(g, OpKind::kAllReduce), 7);
  EXPECT_EQ(Count(g, OpKind::kRmsNorm), 1 + 2 * 3);  // first input norm + q/k norms
}

TEST(ModelBuilderTest, MoeLayerSelectsOpsByQuantType) {
  ModelConfig c = LoadGolden("Qwen/Qwen3-235B-A22B");
  BuildOptions o;
  o.query_len = 100;
  o.num_layers_override = 1;
  struct Expect {
    QuantType quant;
    OpKind gmm;
    OpKind linear;
    OpKind act_quant;
  };
  for (const Expect& e :
       {Expect{QuantType::kW8A8, OpKind::kGroupedMatmulQuant, OpKind::kStaticQuantLinear,
               OpKind::kDynamicQuantizeSymmetric},
        Expect{QuantType::kW4A8, OpKind::kGroupedMatmulQuantInt4, OpKind::kStaticQuantLinearInt4,
               OpKind::kDynamicQuantizeSymmetric},
        Expect{QuantType::kFp8, OpKind::kGroupedMatmulFp8, OpKind::kFp8Linear, OpKind::kDynamicQuantizeSymmetric},
        Expect{QuantType::kMxfp4, OpKind::kGroupedMatmulMxfp4, OpKind::kMxfp4Linear, OpKind::kDynamicQuantizeMxfp4}}) {
    SCOPED_TRACE(std::string(QuantTypeName(e.quant)));
    o.quant = e.quant;
    Graph g = BuildOk(c, o);
    auto gmms = All(g, e.gmm);
    ASSERT_EQ(gmms.size(), 2u);                       // gate_up and down
    EXPECT_EQ(gmms[0]->shape(), (Shape{800, 3072}));  // 100 tokens x top-8, 2 x 1536
    EXPECT_EQ(gmms[1]->shape(), (Shape{800, 4096}));
    EXPECT_EQ(Count(g, e.linear), 4);     // q, k, v, o
    EXPECT_EQ(Count(g, e.act_quant), 4);  // qkv input, o input, routed tokens, swiglu output
    EXPECT_EQ(Count(g, OpKind::kMm), 2);  // router and lm_head stay unquantized
    // The swiglu output feeds GMM2 through its dynamic quant: the shape the MXFP4
    // quant-tail fusion looks for.
    const Node* swiglu = All(g, OpKind::kSwiglu)[0];
    ASSERT_EQ(swiglu->users().size(), 1u);
    EXPECT_EQ(swiglu->users()[0]->kind(), e.act_quant);
  }
  o.quant = QuantType::kNone;
  Graph bf16 = BuildOk(c, o);
  EXPECT_EQ(Count(bf16, OpKind::kGroupedMatmul), 2);
  EXPECT_EQ(All(bf16, OpKind::kSwiglu)[0]->users()[0]->kind(), OpKind::kGroupedMatmul);
}

TEST(ModelBuilderTest, MlpOnlyLayersGetTheirOwnRegion) {
  ModelConfig c = LoadGolden("Qwen/Qwen3-235B-A22B");
  c.mlp_only_layers = {1};
  BuildOptions o;
  o.query_len = 16;
  o.num_layers_override = 4;
  Graph g = BuildOk(c, o);
  auto begins = All(g, OpKind::kRegionBegin);
  ASSERT_EQ(begins.size(), 2u);  // layer 0 (MoE) and layer 1 (dense)
  auto copies = All(g, OpKind::kCopyRegionV2);
  ASSERT_EQ(copies.size(), 2u);  // layers 2 and 3 replay the MoE region 0
  EXPECT_EQ(*copies[0]->int_arg(2), 0);
  EXPECT_EQ(*copies[1]->int_arg(2), 0);
  EXPECT_EQ(Count(g, OpKind::kMoeGatingTopKSoftmax), 1);
  EXPECT_EQ(std::get<NodeList>(g.output_node()->args()[0]).size(), 3u);  // logits + two region ends
}

}  // namespace
}  // namespace harness::compiler
