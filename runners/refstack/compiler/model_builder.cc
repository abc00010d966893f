#include "runners/refstack/compiler/model_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace harness::compiler {

using harness::Result;

std::string_view QuantTypeName(QuantType quant) {
  switch (quant) {
    case QuantType::kNone:
      return "none";
    case QuantType::kW8A8:
      return "w8a8";
    case QuantType::kW4A8:
      return "w4a8";
    case QuantType::kFp8:
      return "fp8";
    case QuantType::kMxfp4:
      return "mxfp4";
  }
  return "?";
}

Result<QuantType> ParseQuantType(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "bf16") return QuantType::kNone;
  for (QuantType q : {QuantType::kNone, QuantType::kW8A8, QuantType::kW4A8, QuantType::kFp8, QuantType::kMxfp4})
    if (QuantTypeName(q) == lower) return q;
  return harness::UsageError(fmt::format("unknown quant type '{}' (known: none, bf16, w8a8, w4a8, fp8, mxfp4)", name));
}

Result<WordEmbeddingTp> ParseWordEmbeddingTp(std::string_view name) {
  if (name == "row") return WordEmbeddingTp::kRow;
  if (name == "col") return WordEmbeddingTp::kCol;
  return harness::UsageError(fmt::format("unknown word_embedding_tp '{}' (known: row, col)", name));
}

namespace {

TensorMeta Meta(Shape shape, DType dtype) { return {std::move(shape), dtype}; }

// A quantized (or plain) activation and its dynamic scale.
struct Activation {
  Node* value;
  Node* scale = nullptr;
};

class Builder {
 public:
  Builder(const ModelConfig& c, const BuildOptions& o) : c_(c), o_(o) {
    T_ = o.num_queries * o.query_len;
    for (int64_t r = 0; r < o.tp_size; ++r) group_.push_back(r);
    heads_ = c.num_attention_heads / o.tp_size;
    kv_heads_ = std::max<int64_t>(1, c.num_key_value_heads / o.tp_size);
  }

  Graph Build() {
    Inputs();
    Node* hidden = Embedding();
    Rope();
    const int64_t layers = o_.num_layers_override > 0 ? o_.num_layers_override : c_.num_hidden_layers;
    Node* final_norm = o_.enable_repetition ? ReplayedLayers(layers, hidden) : ExpandedLayers(layers, hidden);
    Node* logits = LmHead(final_norm);
    NodeList outputs{logits};
    // Region replay v2 keeps each representative's output as a formal graph output.
    if (o_.copy_version == RegionCopyVersion::kV2)
      for (const auto& [key, region] : regions_) outputs.push_back(region.end);
    g_.SetOutput(outputs);
    return std::move(g_);
  }

 private:
  struct Region {
    int64_t id;
    Node* end;
  };

  Node* Weight(const std::string& name, Shape shape, DType dtype) {
    return g_.AddGetAttr(name, Meta(std::move(shape), dtype));
  }
  Node* View(Node* x, Shape shape) { return g_.Call(OpKind::kView, {x, IntList(std::move(shape))}); }
  Node* Get(Node* tuple, int64_t i) { return g_.GetItem(tuple, i); }
  Node* AllReduce(Node* x) { return o_.tp_size > 1 ? g_.Call(OpKind::kAllReduce, {x, o_.rank, group_}) : x; }
  Shape Bsh(int64_t width) const { return {o_.num_queries, o_.query_len, width}; }
  DType Act() const { return o_.act_dtype; }

  // Vocab-parallel (row) embedding masks the ids outside this rank's slice and sums the
  // partial lookups with an all_reduce; column mode gathers the hidden slices.
  // The graph inputs, first as in an FX graph: token ids, positions, attention metadata.
  void Inputs() {
    input_ids_ = g_.AddPlaceholder("input_ids", Meta({o_.num_queries, o_.query_len}, DType::kInt64));
    positions_ = g_.AddPlaceholder("positions", Meta({o_.num_queries, o_.query_len}, DType::kInt64));
    const int64_t blocks = (o_.query_len + kKvBlockSize - 1) / kKvBlockSize;
    slot_mapping_ = g_.AddPlaceholder("slot_mapping", Meta({T_}, DType::kInt64));
    block_table_ = g_.AddPlaceholder("block_table", Meta({o_.num_queries, blocks}, DType::kInt32));
    query_start_loc_ = g_.AddPlaceholder("query_start_loc", Meta({o_.num_queries + 1}, DType::kInt32));
    seq_lens_ = g_.AddPlaceholder("seq_lens", Meta({o_.num_queries}, DType::kInt32));
    query_lens_ = g_.AddPlaceholder("query_lens", Meta({o_.num_queries}, DType::kInt32));
  }

  Node* Embedding() {
    Node* ids = input_ids_;
    const std::string name = "model.embed_tokens.weight";
    if (o_.tp_size == 1)
      return g_.Call(OpKind::kEmbedding, {Weight(name, {c_.vocab_size, c_.hidden_size}, Act()), ids});
    if (o_.word_embedding_tp == WordEmbeddingTp::kCol) {
      Node* local =
          g_.Call(OpKind::kEmbedding, {Weight(name, {c_.vocab_size, c_.hidden_size / o_.tp_size}, Act()), ids});
      return g_.Call(OpKind::kAllGather, {local, int64_t{-1}, o_.rank, group_});
    }
    const int64_t local_vocab = c_.vocab_size / o_.tp_size;
    const int64_t start = o_.rank * local_vocab;
    Node* ge = g_.Call(OpKind::kGeScalar, {ids, start});
    Node* lt = g_.Call(OpKind::kLtScalar, {ids, start + local_vocab});
    Node* mask = g_.Call(OpKind::kBitwiseAnd, {ge, lt});
    Node* shifted = g_.Call(OpKind::kSub, {ids, start});
    Node* local_ids = g_.Call(OpKind::kMul, {shifted, mask});
    Node* rows = g_.Call(OpKind::kEmbedding, {Weight(name, {local_vocab, c_.hidden_size}, Act()), local_ids});
    Node* masked = g_.Call(OpKind::kMul, {rows, g_.Call(OpKind::kUnsqueeze, {mask, int64_t{-1}})});
    return AllReduce(masked);
  }

  // cos/sin for every token, computed once before the layers as HF's model-level rotary
  // embedding is.
  void Rope() {
    Node* flat = View(positions_, {T_});
    const Shape cache{c_.max_position_embeddings, c_.head_dim};
    cos_ = g_.Call(OpKind::kIndexSelect, {Weight("model.rotary_emb.cos_cached", cache, Act()), int64_t{0}, flat});
    sin_ = g_.Call(OpKind::kIndexSelect, {Weight("model.rotary_emb.sin_cached", cache, Act()), int64_t{0}, flat});
  }

  Activation Quantize(Node* x) {
    switch (o_.quant) {
      case QuantType::kNone:
        return {x};
      case QuantType::kW8A8:
      case QuantType::kW4A8:
      case QuantType::kFp8: {
        const DType out = o_.quant == QuantType::kFp8 ? DType::kFloat8E4M3 : DType::kInt8;
        Node* q = g_.Call(OpKind::kDynamicQuantizeSymmetric, {x, IntList{-1}, DType::kFloat32, out});
        return {Get(q, 0), Get(q, 1)};
      }
      case QuantType::kMxfp4: {
        Node* q = g_.Call(OpKind::kDynamicQuantizeMxfp4, {x, kMxfp4GroupSize});
        return {Get(q, 0), Get(q, 1)};
      }
    }
    return {x};
  }

  // Weight and weight-scale of a [K, N] projection (or [E, K, N] expert stack).
  std::pair<Node*, Node*> QuantWeights(const std::string& name, Shape shape) {
    const int64_t n = shape.back();
    Shape scale(shape.begin(), shape.end() - 2);
    switch (o_.quant) {
      case QuantType::kNone:
        return {Weight(name + ".weight", shape, Act()), nullptr};
      case QuantType::kW8A8:
      case QuantType::kW4A8:
      case QuantType::kFp8: {
        const DType w = o_.quant == QuantType::kW8A8   ? DType::kInt8
                        : o_.quant == QuantType::kW4A8 ? DType::kInt4
                                                       : DType::kFloat8E4M3;
        scale.push_back(n);
        return {Weight(name + ".weight", shape, w), Weight(name + ".weight_scale", scale, DType::kFloat32)};
      }
      case QuantType::kMxfp4: {
        const int64_t k = shape[shape.size() - 2];
        scale.push_back((k + kMxfp4GroupSize - 1) / kMxfp4GroupSize);
        scale.push_back(n);
        return {Weight(name + ".weight", shape, DType::kFloat4E2M1),
                Weight(name + ".weight_scale", scale, DType::kFloat8E8M0)};
      }
    }
    return {nullptr, nullptr};
  }

  Node* Linear(const Activation& a, const std::string& name, int64_t k, int64_t n) {
    auto [w, w_scale] = QuantWeights(name, {k, n});
    switch (o_.quant) {
      case QuantType::kNone:
        return g_.Call(OpKind::kMm, {a.value, w});
      case QuantType::kW8A8:
      case QuantType::kW4A8:
        return g_.Call(o_.quant == QuantType::kW8A8 ? OpKind::kStaticQuantLinear : OpKind::kStaticQuantLinearInt4,
                       {a.value, w, w_scale, None{}, a.scale, None{}, None{}, Act()});
      case QuantType::kFp8:
        return g_.Call(OpKind::kFp8Linear, {a.value, w, a.scale, w_scale, None{}, Act()});
      case QuantType::kMxfp4:
        return g_.Call(OpKind::kMxfp4Linear, {a.value, w, a.scale, w_scale, None{}, Act()});
    }
    return nullptr;
  }

  Node* GroupedMatmul(const Activation& a, const std::string& name, int64_t k, int64_t n) {
    auto [w, w_scale] = QuantWeights(name, {c_.num_experts, k, n});
    switch (o_.quant) {
      case QuantType::kNone:
        return g_.Call(OpKind::kGroupedMatmul, {NodeList{a.value}, NodeList{w}, NodeList{}});
      case QuantType::kW8A8:
      case QuantType::kW4A8:
        return g_.Call(o_.quant == QuantType::kW8A8 ? OpKind::kGroupedMatmulQuant : OpKind::kGroupedMatmulQuantInt4,
                       {NodeList{a.value}, NodeList{w}, NodeList{w_scale}, NodeList{}, NodeList{a.scale}, NodeList{},
                        NodeList{}, Act()});
      case QuantType::kFp8:
      case QuantType::kMxfp4:
        return g_.Call(o_.quant == QuantType::kFp8 ? OpKind::kGroupedMatmulFp8 : OpKind::kGroupedMatmulMxfp4,
                       {NodeList{a.value}, NodeList{w}, NodeList{w_scale}, NodeList{a.scale}, NodeList{}, Act()});
    }
    return nullptr;
  }

  std::string LayerName(int64_t layer, std::string_view rest) const {
    return fmt::format("model.layers.{}.{}", layer, rest);
  }

  Node* RmsNorm(Node* x, const std::string& weight) {
    return g_.Call(OpKind::kRmsNorm, {x, Weight(weight, {x->shape().back()}, Act()), c_.rms_norm_eps});
  }
  Node* AddRmsNorm2(Node* x, Node* residual, const std::string& weight) {
    return g_.Call(OpKind::kAddRmsNorm2, {x, residual, Weight(weight, {c_.hidden_size}, Act()), c_.rms_norm_eps});
  }

  // Self-attention of one layer on normed [B, S, H]; returns the o_proj output [B, S, H]
  // (after its TP all_reduce).
  Node* SelfAttention(int64_t layer, Node* normed) {
    const int64_t hd = c_.head_dim;
    Activation x = Quantize(View(normed, {T_, c_.hidden_size}));
    Node* q = Linear(x, LayerName(layer, "self_attn.q_proj"), c_.hidden_size, heads_ * hd);
    Node* k = Linear(x, LayerName(layer, "self_attn.k_proj"), c_.hidden_size, kv_heads_ * hd);
    Node* v = Linear(x, LayerName(layer, "self_attn.v_proj"), c_.hidden_size, kv_heads_ * hd);
    Node* qn = RmsNorm(View(q, {T_, heads_, hd}), LayerName(layer, "self_attn.q_norm.weight"));
    Node* kn = RmsNorm(View(k, {T_, kv_heads_, hd}), LayerName(layer, "self_attn.k_norm.weight"));
    Node* v3 = View(v, {T_, kv_heads_, hd});
    Node* rope = g_.Call(OpKind::kApplyRope, {qn, kn, cos_, sin_, int64_t{1}});
    Node* qr = Get(rope, 0);
    Node* kr = Get(rope, 1);
    const int64_t blocks = o_.num_queries * ((o_.query_len + kKvBlockSize - 1) / kKvBlockSize);
    Node* kv_cache = Weight(LayerName(layer, "self_attn.kv_cache"), {2, blocks, kKvBlockSize, kv_heads_, hd}, Act());
    g_.Call(OpKind::kReshapeAndCache, {kr, v3, kv_cache, slot_mapping_});
    Node* attn =
        g_.Call(OpKind::kAttention, {qr, kr, v3, None{}, block_table_, query_start_loc_, seq_lens_, query_lens_});
    Activation a = Quantize(View(attn, {T_, heads_ * hd}));
    Node* o = AllReduce(Linear(a, LayerName(layer, "self_attn.o_proj"), heads_ * hd, c_.hidden_size));
    return View(o, Bsh(c_.hidden_size));
  }

  // gate_up projection -> split -> swiglu -> down projection.
  Node* DenseMlp(int64_t layer, Node* normed) {
    const int64_t inter = c_.intermediate_size / o_.tp_size;
    Activation x = Quantize(View(normed, {T_, c_.hidden_size}));
    Node* gate_up = Linear(x, LayerName(layer, "mlp.gate_up_proj"), c_.hidden_size, 2 * inter);
    Node* split = g_.Call(OpKind::kSplitWithSizes, {gate_up, IntList{inter, inter}, int64_t{-1}});
    Node* act = g_.Call(OpKind::kSwiglu, {Get(split, 0), Get(split, 1)});
    Node* down = AllReduce(Linear(Quantize(act), LayerName(layer, "mlp.down_proj"), inter, c_.hidden_size));
    return View(down, Bsh(c_.hidden_size));
  }

  // Router -> top-k softmax -> token permutation -> GMM1 (gate_up) -> split -> swiglu
  // -> GMM2 (down) -> unpermute; experts are TP-sharded on the intermediate dim.
  Node* MoeMlp(int64_t layer, Node* normed) {
    const int64_t inter = c_.moe_intermediate_size / o_.tp_size;
    Node* x = View(normed, {T_, c_.hidden_size});
    Node* logits =
        g_.Call(OpKind::kMm, {x, Weight(LayerName(layer, "mlp.gate.weight"), {c_.hidden_size, c_.num_experts}, Act())});
    Node* topk = g_.Call(OpKind::kMoeGatingTopKSoftmax, {logits, c_.num_experts_per_tok});
    Node* weights = Get(topk, 0);
    Node* indices = Get(topk, 1);
    Node* routed = g_.Call(OpKind::kInitRoutingV2, {x, indices});
    Node* gate_up =
        GroupedMatmul(Quantize(routed), LayerName(layer, "mlp.experts.gate_up_proj"), c_.hidden_size, 2 * inter);
    Node* split = g_.Call(OpKind::kSplitWithSizes, {gate_up, IntList{inter, inter}, int64_t{-1}});
    Node* act = g_.Call(OpKind::kSwiglu, {Get(split, 0), Get(split, 1)});
    Node* down = GroupedMatmul(Quantize(act), LayerName(layer, "mlp.experts.down_proj"), inter, c_.hidden_size);
    Node* combined = g_.Call(OpKind::kUnpermuteTokens, {down, indices, weights});
    return View(AllReduce(combined), Bsh(c_.hidden_size));
  }

  // The layer after its input norm: attention, the post-attention add_rms_norm2 and the
  // MLP. Returns (residual, mlp output) for the caller to add.
  std::pair<Node*, Node*> LayerBody(int64_t layer, Node* normed, Node* residual) {
    Node* attn = SelfAttention(layer, normed);
    Node* post = AddRmsNorm2(residual, attn, LayerName(layer, "post_attention_layernorm.weight"));
    Node* post_normed = Get(post, 0);
    Node* post_residual = Get(post, 1);
    Node* mlp = c_.IsMoeLayer(layer) ? MoeMlp(layer, post_normed) : DenseMlp(layer, post_normed);
    return {post_residual, mlp};
  }

  // Repetition on: the first layer of each structure is a marked representative region;
  // later layers of that structure replay it.
  Node* ReplayedLayers(int64_t layers, Node* hidden) {
    for (int64_t layer = 0; layer < layers; ++layer) {
      const bool moe = c_.IsMoeLayer(layer);
      auto it = regions_.find(moe);
      if (it != regions_.end()) {
        const Region& r = it->second;
        hidden = o_.copy_version == RegionCopyVersion::kV1 ? g_.Call(OpKind::kCopyRegion, {hidden, r.id})
                                                           : g_.Call(OpKind::kCopyRegionV2, {hidden, r.end, r.id});
        continue;
      }
      const auto id = static_cast<int64_t>(regions_.size());
      Node* begin = g_.Call(OpKind::kRegionBegin, {hidden, id});
      Node* normed = RmsNorm(begin, LayerName(layer, "input_layernorm.weight"));
      auto [residual, mlp] = LayerBody(layer, normed, begin);
      Node* out = g_.Call(OpKind::kAdd, {residual, mlp});
      hidden = g_.Call(OpKind::kRegionEnd, {out, id});
      regions_.emplace(moe, Region{id, hidden});
    }
    return RmsNorm(hidden, "model.norm.weight");
  }

  // Repetition off: every layer is emitted, and each layer's residual add fuses with the
  // next norm (add_rms_norm2 into the next layer, add_rms_norm into the final norm).
  Node* ExpandedLayers(int64_t layers, Node* hidden) {
    Node* residual = hidden;
    Node* delta = nullptr;
    for (int64_t layer = 0; layer < layers; ++layer) {
      Node* normed;
      if (delta == nullptr) {
        normed = RmsNorm(hidden, LayerName(layer, "input_layernorm.weight"));
      } else {
        Node* fused = AddRmsNorm2(residual, delta, LayerName(layer, "input_layernorm.weight"));
        normed = Get(fused, 0);
        residual = Get(fused, 1);
      }
      std::tie(residual, delta) = LayerBody(layer, normed, residual);
    }
    if (delta == nullptr) return RmsNorm(hidden, "model.norm.weight");
    return g_.Call(OpKind::kAddRmsNorm,
                   {residual, delta, Weight("model.norm.weight", {c_.hidden_size}, Act()), c_.rms_norm_eps});
  }

  // lm_head is replicated (msmodeling's TP transformation shards attention, MLP and the
  // word embedding); logits for every token, as the GMM test's (1, N, vocab) output.
  Node* LmHead(Node* final_norm) {
    Node* x = View(final_norm, {T_, c_.hidden_size});
    Node* logits = g_.Call(OpKind::kMm, {x, Weight("lm_head.weight", {c_.hidden_size, c_.vocab_size}, Act())});
    return View(logits, Bsh(c_.vocab_size));
  }

  const ModelConfig& c_;
  const BuildOptions& o_;
  Graph g_;
  int64_t T_ = 0;
  IntList group_;
  int64_t heads_ = 0;
  int64_t kv_heads_ = 0;
  Node* input_ids_ = nullptr;
  Node* positions_ = nullptr;
  Node* cos_ = nullptr;
  Node* sin_ = nullptr;
  Node* slot_mapping_ = nullptr;
  Node* block_table_ = nullptr;
  Node* query_start_loc_ = nullptr;
  Node* seq_lens_ = nullptr;
  Node* query_lens_ = nullptr;
  std::map<bool, Region> regions_;  // structure key (is MoE layer) -> representative
};

harness::Error OptionError(const ModelConfig& c, const std::string& message) {
  return harness::UsageError(fmt::format("{}: {}", c.origin, message));
}

harness::Status CheckOptions(const ModelConfig& c, const BuildOptions& o) {
  for (auto [name, value] :
       {std::pair{"tp_size", o.tp_size}, {"query_len", o.query_len}, {"num_queries", o.num_queries}})
    if (value < 1) return OptionError(c, fmt::format("{} must be at least 1, got {}", name, value));
  if (o.num_layers_override < 0)
    return OptionError(c, fmt::format("num_layers_override must not be negative, got {}", o.num_layers_override));
  if (o.rank < 0 || o.rank >= o.tp_size)
    return OptionError(c, fmt::format("rank {} is outside the TP group of {}", o.rank, o.tp_size));
  const int64_t tp = o.tp_size;
  auto divides = [&](const char* field, int64_t value) -> harness::Status {
    if (value % tp != 0) return OptionError(c, fmt::format("tp_size {} does not divide {} = {}", tp, field, value));
    return harness::OkStatus();
  };
  if (auto s = divides("num_attention_heads", c.num_attention_heads); !s) return s;
  if (c.num_key_value_heads >= tp) {
    if (auto s = divides("num_key_value_heads", c.num_key_value_heads); !s) return s;
  } else if (tp % c.num_key_value_heads != 0) {
    return OptionError(c, fmt::format("num_key_value_heads {} neither divides nor is divided by tp_size {}",
                                      c.num_key_value_heads, tp));
  }
  if (auto s = divides("intermediate_size", c.intermediate_size); !s) return s;
  if (auto s = divides(o.word_embedding_tp == WordEmbeddingTp::kRow ? "vocab_size" : "hidden_size",
                       o.word_embedding_tp == WordEmbeddingTp::kRow ? c.vocab_size : c.hidden_size);
      !s)
    return s;
  if (c.IsMoeModel()) {
    if (auto s = divides("moe_intermediate_size", c.moe_intermediate_size); !s) return s;
  }
  if (o.quant == QuantType::kMxfp4) {
    // MX blocks run along K; every projection's K must be whole blocks.
    const int64_t inter = (c.IsMoeModel() ? c.moe_intermediate_size : c.intermediate_size) / tp;
    for (auto [field, k] : {std::pair{"hidden_size", c.hidden_size},
                            {"intermediate_size / tp", inter},
                            {"heads * head_dim / tp", c.num_attention_heads / tp * c.head_dim}})
      if (k % kMxfp4GroupSize != 0)
        return OptionError(c, fmt::format("mxfp4 needs {} = {} to be a multiple of {}", field, k, kMxfp4GroupSize));
  }
  return harness::OkStatus();
}

}  // namespace

Result<Graph> BuildModel(const ModelConfig& config, const BuildOptions& options) {
  if (auto s = CheckOptions(config, options); !s) return s.error();
  try {
    return Builder(config, options).Build();
  } catch (const ShapeError& e) {
    return harness::Error{harness::ExitCode::kFail, fmt::format("building {}: {}", config.origin, e.what())};
  }
}

}  // namespace harness::compiler
