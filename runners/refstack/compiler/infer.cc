#include "runners/refstack/compiler/infer.h"

#include <fmt/format.h>

#include <algorithm>

namespace harness::compiler {
namespace {

[[noreturn]] void Fail(const Node& n, const std::string& message) {
  throw ShapeError(fmt::format("node '{}' ({}): {}", n.name(), n.op(), message));
}

void NeedArgs(const Node& n, size_t count) {
  if (n.args().size() != count) Fail(n, fmt::format("expected {} arguments, got {}", count, n.args().size()));
}

const TensorMeta& Tensor(const Node& n, size_t i) {
  Node* a = n.node_arg(i);
  if (a == nullptr) Fail(n, fmt::format("argument {} must be a tensor", i));
  if (!a->has_tensor()) Fail(n, fmt::format("argument {} ('{}') is not a single tensor", i, a->name()));
  return a->meta();
}

const TensorMeta* OptionalTensor(const Node& n, size_t i) {
  if (i < n.args().size() && std::holds_alternative<None>(n.args()[i])) return nullptr;
  return &Tensor(n, i);
}

int64_t Int(const Node& n, size_t i) {
  auto v = n.int_arg(i);
  if (!v) Fail(n, fmt::format("argument {} must be an int", i));
  return *v;
}

const IntList& Ints(const Node& n, size_t i) {
  const IntList* v = n.int_list_arg(i);
  if (!v) Fail(n, fmt::format("argument {} must be an int list", i));
  return *v;
}

double Number(const Node& n, size_t i) {
  const Arg& a = n.args()[i];
  if (const auto* d = std::get_if<double>(&a)) return *d;
  if (const auto* v = std::get_if<int64_t>(&a)) return static_cast<double>(*v);
  Fail(n, fmt::format("argument {} must be a number", i));
}

DType DTypeArg(const Node& n, size_t i) {
  const auto* d = std::get_if<DType>(&n.args()[i]);
  if (!d) Fail(n, fmt::format("argument {} must be a dtype", i));
  return *d;
}

std::vector<const TensorMeta*> TensorList(const Node& n, size_t i, bool allow_empty) {
  const auto* list = std::get_if<NodeList>(&n.args()[i]);
  if (!list) Fail(n, fmt::format("argument {} must be a tensor list", i));
  if (!allow_empty && list->empty()) Fail(n, fmt::format("argument {} must not be empty", i));
  std::vector<const TensorMeta*> out;
  for (const Node* e : *list) {
    if (!e->has_tensor()) Fail(n, fmt::format("argument {} holds '{}', which is not a single tensor", i, e->name()));
    out.push_back(&e->meta());
  }
  return out;
}

int64_t NormalizeDim(const Node& n, int64_t dim, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (dim < -r || dim >= r) Fail(n, fmt::format("dim {} out of range for rank {}", dim, rank));
  return dim < 0 ? dim + r : dim;
}

void NeedRank(const Node& n, const TensorMeta& t, size_t rank, std::string_view what) {
  if (t.shape.size() != rank) Fail(n, fmt::format("{} must have rank {}, got {}", what, rank, MetaString(t)));
}

void NeedDType(const Node& n, const TensorMeta& t, DType dtype, std::string_view what) {
  if (t.dtype != dtype) Fail(n, fmt::format("{} must be {}, got {}", what, DTypeName(dtype), MetaString(t)));
}

void NeedSameShape(const Node& n, const TensorMeta& a, const TensorMeta& b, std::string_view what) {
  if (a.shape != b.shape) Fail(n, fmt::format("{} shapes differ: {} vs {}", what, MetaString(a), MetaString(b)));
}

Shape Broadcast(const Node& n, const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (da != db && da != 1 && db != 1)
      Fail(n, fmt::format("cannot broadcast {} with {}", ShapeString(a), ShapeString(b)));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Inferred One(Shape shape, DType dtype) { return {{TensorMeta{std::move(shape), dtype}}, false}; }

void CheckGroup(const Node& n, size_t rank_index, size_t group_index) {
  const int64_t rank = Int(n, rank_index);
  const IntList& group = Ints(n, group_index);
  if (group.empty()) Fail(n, "rank group is empty");
  if (std::find(group.begin(), group.end(), rank) == group.end())
    Fail(n, fmt::format("rank {} is not in rank group {}", rank, ShapeString(group)));
}

Inferred Elementwise(const Node& n, bool to_bool) {
  NeedArgs(n, 2);
  const TensorMeta& a = Tensor(n, 0);
  if (n.node_arg(1) == nullptr) {  // tensor op scalar
    (void)Number(n, 1);
    return One(a.shape, to_bool ? DType::kBool : a.dtype);
  }
  const TensorMeta& b = Tensor(n, 1);
  return One(Broadcast(n, a.shape, b.shape), to_bool ? DType::kBool : PromoteTypes(a.dtype, b.dtype));
}

Inferred View(const Node& n) {
  NeedArgs(n, 2);
  const TensorMeta& x = Tensor(n, 0);
  Shape size = Ints(n, 1);
  int64_t known = 1;
  int inferred_at = -1;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == -1) {
      if (inferred_at >= 0) Fail(n, "only one dimension can be -1");
      inferred_at = static_cast<int>(i);
    } else if (size[i] < 0) {
      Fail(n, fmt::format("invalid size {}", ShapeString(size)));
    } else {
      known *= size[i];
    }
  }
  if (inferred_at >= 0) {
    if (known == 0 || x.numel() % known != 0)
      Fail(n, fmt::format("shape {} is invalid for input {}", ShapeString(size), MetaString(x)));
    size[inferred_at] = x.numel() / known;
  } else if (known != x.numel()) {
    Fail(n, fmt::format("shape {} is invalid for input {}", ShapeString(size), MetaString(x)));
  }
  return One(size, x.dtype);
}

Inferred Norm(const Node& n, size_t weight_index, size_t arg_count) {
  NeedArgs(n, arg_count);
  const TensorMeta& x = Tensor(n, 0);
  const TensorMeta& w = Tensor(n, weight_index);
  (void)Number(n, arg_count - 1);
  if (x.shape.empty() || w.shape != Shape{x.shape.back()})
    Fail(n, fmt::format("weight {} does not match the last dim of {}", MetaString(w), MetaString(x)));
  if (weight_index == 2) {  // add_rms_norm{,2}(x, residual, w, eps)
    const TensorMeta& residual = Tensor(n, 1);
    NeedSameShape(n, x, residual, "x and residual");
  }
  return One(x.shape, x.dtype);
}

Inferred Comm(const Node& n) {
  const OpKind k = n.kind();
  NeedArgs(n, k == OpKind::kAllReduce ? 3 : 4);
  const TensorMeta& x = Tensor(n, 0);
  if (k == OpKind::kAllReduce) {
    CheckGroup(n, 1, 2);
    return One(x.shape, x.dtype);
  }
  CheckGroup(n, 2, 3);
  const int64_t ws = static_cast<int64_t>(Ints(n, 3).size());
  const int64_t dim = NormalizeDim(n, Int(n, 1), x.shape.size());
  Shape out = x.shape;
  if (k == OpKind::kReduceScatter) {
    if (out[dim] % ws != 0)
      Fail(n, fmt::format("dim {} of {} does not divide by world size {}", dim, MetaString(x), ws));
    out[dim] /= ws;
  } else {
    out[dim] *= ws;
  }
  return One(out, x.dtype);
}

// Linear layouts: x [M, K] times w [K, N].
Inferred QuantLinear(const Node& n, size_t arg_count, DType x_dtype, DType w_dtype) {
  NeedArgs(n, arg_count);
  const TensorMeta& x = Tensor(n, 0);
  const TensorMeta& w = Tensor(n, 1);
  NeedRank(n, x, 2, "x");
  NeedRank(n, w, 2, "weight");
  NeedDType(n, x, x_dtype, "x");
  NeedDType(n, w, w_dtype, "weight");
  if (x.shape[1] != w.shape[0]) Fail(n, fmt::format("x {} and weight {} disagree on K", MetaString(x), MetaString(w)));
  return One({x.shape[0], w.shape[1]}, DTypeArg(n, arg_count - 1));
}

struct GmmSignature {
  size_t arg_count;
  DType x_dtype;
  DType w_dtype;
  bool has_out_dtype;
};

GmmSignature SignatureOf(OpKind k) {
  switch (k) {
    case OpKind::kGroupedMatmul:
    case OpKind::kGroupedMatmulSwiglu:
      return {3, DType::kBFloat16, DType::kBFloat16, false};
    case OpKind::kGroupedMatmulQuant:
    case OpKind::kGroupedMatmulQuantSwiglu:
      return {8, DType::kInt8, DType::kInt8, true};
    case OpKind::kGroupedMatmulQuantInt4:
    case OpKind::kGroupedMatmulQuantInt4Swiglu:
      return {8, DType::kInt8, DType::kInt4, true};
    case OpKind::kGroupedMatmulFp8:
    case OpKind::kGroupedMatmulFp8Swiglu:
      return {6, DType::kFloat8E4M3, DType::kFloat8E4M3, true};
    case OpKind::kGroupedMatmulMxfp4:
    case OpKind::kGroupedMatmulMxfp4Swiglu:
      return {6, DType::kFloat4E2M1, DType::kFloat4E2M1, true};
    case OpKind::kGroupedMatmulMxfp4SwigluQuant:
      return {7, DType::kFloat4E2M1, DType::kFloat4E2M1, true};
    default:
      throw ShapeError("not a grouped matmul");
  }
}

// grouped_matmul*(x[], w[], ...): rows of every x concatenated; w stacked per expert as
// [E, K, N]. The *_swiglu forms halve N; the MXFP4 quant form adds (payload, e8m0 scale).
Inferred GroupedMatmul(const Node& n) {
  const OpKind k = n.kind();
  const GmmSignature sig = SignatureOf(k);
  NeedArgs(n, sig.arg_count);
  const auto xs = TensorList(n, 0, false);
  const auto ws = TensorList(n, 1, false);
  int64_t rows = 0;
  const int64_t K = xs[0]->shape.size() == 2 ? xs[0]->shape[1] : -1;
  for (const auto* x : xs) {
    NeedRank(n, *x, 2, "each x");
    if (x->shape[1] != K) Fail(n, "the x tensors disagree on K");
    if (sig.x_dtype != DType::kBFloat16) NeedDType(n, *x, sig.x_dtype, "x");
    rows += x->shape[0];
  }
  int64_t N = -1;
  for (const auto* w : ws) {
    NeedRank(n, *w, 3, "each weight ([experts, K, N])");
    NeedDType(n, *w, sig.w_dtype == DType::kBFloat16 ? xs[0]->dtype : sig.w_dtype, "weight");
    if (w->shape[1] != K) Fail(n, fmt::format("weight {} does not match K={} of x", MetaString(*w), K));
    if (N >= 0 && w->shape[2] != N) Fail(n, "the weights disagree on N");
    N = w->shape[2];
  }
  const DType out_dtype = sig.has_out_dtype ? DTypeArg(n, 5 + (sig.arg_count == 8 ? 2 : 0)) : xs[0]->dtype;
  const bool swiglu = k >= OpKind::kGroupedMatmulSwiglu;
  if (swiglu) {
    if (N % 2 != 0) Fail(n, fmt::format("gate+up width {} is odd", N));
    N /= 2;
  }
  if (k == OpKind::kGroupedMatmulMxfp4SwigluQuant) {
    const int64_t group = Int(n, 6);
    if (group <= 0) Fail(n, fmt::format("group_size must be positive, got {}", group));
    return {
        {TensorMeta{{rows, N}, DType::kFloat4E2M1}, TensorMeta{{rows, (N + group - 1) / group}, DType::kFloat8E8M0}},
        true};
  }
  return One({rows, N}, out_dtype);
}

}  // namespace

Inferred InferMeta(const Node& n) {
  switch (n.kind()) {
    case OpKind::kGetItem: {
      NeedArgs(n, 2);
      const Node* t = n.node_arg(0);
      const int64_t i = Int(n, 1);
      if (t == nullptr || !t->is_tuple()) Fail(n, "argument 0 must be a tuple-valued node");
      if (i < 0 || i >= static_cast<int64_t>(t->outputs().size()))
        Fail(n, fmt::format("index {} out of range for '{}' with {} outputs", i, t->name(), t->outputs().size()));
      return {{t->outputs()[i]}, false};
    }
    case OpKind::kView:
      return View(n);
    case OpKind::kUnsqueeze: {
      NeedArgs(n, 2);
      const TensorMeta& x = Tensor(n, 0);
      Shape out = x.shape;
      int64_t dim = Int(n, 1);
      const auto r = static_cast<int64_t>(out.size()) + 1;
      if (dim < -r || dim >= r) Fail(n, fmt::format("dim {} out of range", dim));
      if (dim < 0) dim += r;
      out.insert(out.begin() + dim, 1);
      return One(out, x.dtype);
    }
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kBitwiseAnd:
      return Elementwise(n, false);
    case OpKind::kGeScalar:
    case OpKind::kLtScalar:
      return Elementwise(n, true);
    case OpKind::kEmbedding: {
      NeedArgs(n, 2);
      const TensorMeta& w = Tensor(n, 0);
      const TensorMeta& ids = Tensor(n, 1);
      NeedRank(n, w, 2, "weight");
      if (IsFloating(ids.dtype)) Fail(n, fmt::format("indices must be integers, got {}", MetaString(ids)));
      Shape out = ids.shape;
      out.push_back(w.shape[1]);
      return One(out, w.dtype);
    }
    case OpKind::kIndexSelect: {
      NeedArgs(n, 3);
      const TensorMeta& x = Tensor(n, 0);
      const int64_t dim = NormalizeDim(n, Int(n, 1), x.shape.size());
      const TensorMeta& index = Tensor(n, 2);
      if (index.shape.size() > 1 || IsFloating(index.dtype))
        Fail(n, fmt::format("index must be a 1-D integer tensor, got {}", MetaString(index)));
      Shape out = x.shape;
      out[dim] = index.numel();
      return One(out, x.dtype);
    }
    case OpKind::kMm: {
      NeedArgs(n, 2);
      const TensorMeta& a = Tensor(n, 0);
      const TensorMeta& b = Tensor(n, 1);
      NeedRank(n, a, 2, "mat1");
      NeedRank(n, b, 2, "mat2");
      if (a.shape[1] != b.shape[0]) Fail(n, fmt::format("cannot multiply {} by {}", MetaString(a), MetaString(b)));
      if (a.dtype != b.dtype) Fail(n, fmt::format("dtypes differ: {} vs {}", MetaString(a), MetaString(b)));
      return One({a.shape[0], b.shape[1]}, a.dtype);
    }
    case OpKind::kSplitWithSizes:
    case OpKind::kSplit: {
      NeedArgs(n, 3);
      const TensorMeta& x = Tensor(n, 0);
      const int64_t dim = NormalizeDim(n, Int(n, 2), x.shape.size());
      IntList sizes;
      if (n.kind() == OpKind::kSplitWithSizes) {
        sizes = Ints(n, 1);
      } else {
        const int64_t chunk = Int(n, 1);
        if (chunk <= 0) Fail(n, fmt::format("split size must be positive, got {}", chunk));
        for (int64_t left = x.shape[dim]; left > 0; left -= chunk) sizes.push_back(std::min(chunk, left));
      }
      int64_t total = 0;
      for (int64_t s : sizes) total += s;
      if (total != x.shape[dim])
        Fail(n, fmt::format("split sizes {} do not add up to dim {} of {}", ShapeString(sizes), dim, MetaString(x)));
      Inferred out{{}, true};
      for (int64_t s : sizes) {
        Shape piece = x.shape;
        piece[dim] = s;
        out.outputs.push_back({piece, x.dtype});
      }
      return out;
    }
    case OpKind::kAllReduce:
    case OpKind::kReduceScatter:
    case OpKind::kAllGather:
      return Comm(n);
    case OpKind::kRmsNorm:
      return Norm(n, 1, 3);
    case OpKind::kAddRmsNorm:
      return Norm(n, 2, 4);
    case OpKind::kAddRmsNorm2: {
      Inferred one = Norm(n, 2, 4);
      return {{one.outputs[0], one.outputs[0]}, true};
    }
    case OpKind::kApplyRope: {
      NeedArgs(n, 5);
      const TensorMeta& q = Tensor(n, 0);
      const TensorMeta& k = Tensor(n, 1);
      const TensorMeta& cos = Tensor(n, 2);
      const TensorMeta& sin = Tensor(n, 3);
      (void)Int(n, 4);
      NeedRank(n, q, 3, "q");
      NeedRank(n, k, 3, "k");
      NeedSameShape(n, cos, sin, "cos and sin");
      const Shape expect{q.shape[0], q.shape[2]};
      if (cos.shape != expect || k.shape[0] != q.shape[0] || k.shape[2] != q.shape[2])
        Fail(n, fmt::format("q {}, k {} and cos {} disagree on tokens or head_dim", MetaString(q), MetaString(k),
                            MetaString(cos)));
      return {{q, k}, true};
    }
    case OpKind::kReshapeAndCache: {
      NeedArgs(n, 4);
      const TensorMeta& k = Tensor(n, 0);
      const TensorMeta& v = Tensor(n, 1);
      const TensorMeta& cache = Tensor(n, 2);
      const TensorMeta& slots = Tensor(n, 3);
      NeedRank(n, k, 3, "key");
      NeedSameShape(n, k, v, "key and value");
      NeedRank(n, cache, 5, "kv cache ([2, blocks, block_size, heads, head_dim])");
      if (cache.shape[3] != k.shape[1] || cache.shape[4] != k.shape[2])
        Fail(n, fmt::format("kv cache {} does not hold keys {}", MetaString(cache), MetaString(k)));
      if (slots.shape != Shape{k.shape[0]})
        Fail(n, fmt::format("slot mapping {} does not match {} tokens", MetaString(slots), k.shape[0]));
      return {{}, false};
    }
    case OpKind::kAttention: {
      NeedArgs(n, 8);
      const TensorMeta& q = Tensor(n, 0);
      const TensorMeta& k = Tensor(n, 1);
      const TensorMeta& v = Tensor(n, 2);
      (void)OptionalTensor(n, 3);
      for (size_t i = 4; i < 8; ++i) (void)Tensor(n, i);
      NeedRank(n, q, 3, "q");
      NeedRank(n, k, 3, "k");
      NeedSameShape(n, k, v, "k and v");
      if (k.shape[0] != q.shape[0] || k.shape[2] != q.shape[2] || k.shape[1] == 0 || q.shape[1] % k.shape[1] != 0)
        Fail(n, fmt::format("q {} and k {} are not a grouped-query pair", MetaString(q), MetaString(k)));
      return One(q.shape, q.dtype);
    }
    case OpKind::kSwiglu: {
      NeedArgs(n, 2);
      const TensorMeta& gate = Tensor(n, 0);
      const TensorMeta& up = Tensor(n, 1);
      NeedSameShape(n, gate, up, "gate and up");
      return One(gate.shape, gate.dtype);
    }
    case OpKind::kDynamicQuantizeSymmetric: {
      NeedArgs(n, 4);
      const TensorMeta& x = Tensor(n, 0);
      Shape scale = x.shape;
      for (int64_t d : Ints(n, 1)) scale[NormalizeDim(n, d, x.shape.size())] = 1;
      return {{TensorMeta{x.shape, DTypeArg(n, 3)}, TensorMeta{scale, DTypeArg(n, 2)}}, true};
    }
    case OpKind::kDynamicQuantizeMxfp4: {
      NeedArgs(n, 2);
      const TensorMeta& x = Tensor(n, 0);
      const int64_t group = Int(n, 1);
      if (group <= 0) Fail(n, fmt::format("group_size must be positive, got {}", group));
      if (x.shape.empty()) Fail(n, "x must have at least one dim");
      Shape scale = x.shape;
      scale.back() = (scale.back() + group - 1) / group;
      return {{TensorMeta{x.shape, DType::kFloat4E2M1}, TensorMeta{scale, DType::kFloat8E8M0}}, true};
    }
    case OpKind::kStaticQuantLinear:
      return QuantLinear(n, 8, DType::kInt8, DType::kInt8);
    case OpKind::kStaticQuantLinearInt4:
      return QuantLinear(n, 8, DType::kInt8, DType::kInt4);
    case OpKind::kFp8Linear:
      return QuantLinear(n, 6, DType::kFloat8E4M3, DType::kFloat8E4M3);
    case OpKind::kMxfp4Linear:
      return QuantLinear(n, 6, DType::kFloat4E2M1, DType::kFloat4E2M1);
    case OpKind::kGroupedMatmul:
    case OpKind::kGroupedMatmulQuant:
    case OpKind::kGroupedMatmulQuantInt4:
    case OpKind::kGroupedMatmulFp8:
    case OpKind::kGroupedMatmulMxfp4:
    case OpKind::kGroupedMatmulSwiglu:
    case OpKind::kGroupedMatmulQuantSwiglu:
    case OpKind::kGroupedMatmulQuantInt4Swiglu:
    case OpKind::kGroupedMatmulFp8Swiglu:
    case OpKind::kGroupedMatmulMxfp4Swiglu:
    case OpKind::kGroupedMatmulMxfp4SwigluQuant:
      return GroupedMatmul(n);
    case OpKind::kMoeGatingTopKSoftmax: {
      NeedArgs(n, 2);
      const TensorMeta& logits = Tensor(n, 0);
      const int64_t k = Int(n, 1);
      NeedRank(n, logits, 2, "router logits");
      if (k <= 0 || k > logits.shape[1])
        Fail(n, fmt::format("top_k {} out of range for {} experts", k, logits.shape[1]));
      const Shape out{logits.shape[0], k};
      return {{TensorMeta{out, DType::kFloat32}, TensorMeta{out, DType::kInt32}}, true};
    }
    case OpKind::kInitRoutingV2: {
      NeedArgs(n, 2);
      const TensorMeta& x = Tensor(n, 0);
      const TensorMeta& idx = Tensor(n, 1);
      NeedRank(n, x, 2, "x");
      NeedRank(n, idx, 2, "top-k indices");
      if (idx.shape[0] != x.shape[0])
        Fail(n, fmt::format("x {} and indices {} disagree on tokens", MetaString(x), MetaString(idx)));
      return One({x.shape[0] * idx.shape[1], x.shape[1]}, x.dtype);
    }
    case OpKind::kUnpermuteTokens: {
      NeedArgs(n, 3);
      const TensorMeta& x = Tensor(n, 0);
      const TensorMeta& idx = Tensor(n, 1);
      const TensorMeta& weights = Tensor(n, 2);
      NeedRank(n, x, 2, "x");
      NeedRank(n, idx, 2, "top-k indices");
      NeedSameShape(n, idx, weights, "indices and weights");
      if (x.shape[0] != idx.numel())
        Fail(n, fmt::format("x {} does not hold {} routed rows", MetaString(x), idx.numel()));
      return One({idx.shape[0], x.shape[1]}, x.dtype);
    }
    case OpKind::kRegionBegin:
    case OpKind::kRegionEnd:
    case OpKind::kCopyRegion: {
      NeedArgs(n, 2);
      (void)Int(n, 1);
      return {{Tensor(n, 0)}, false};
    }
    case OpKind::kCopyRegionV2: {
      NeedArgs(n, 3);
      (void)Tensor(n, 0);
      (void)Int(n, 2);
      return {{Tensor(n, 1)}, false};  // the replay's output takes the template's meta
    }
    case OpKind::kPlaceholder:
    case OpKind::kGetAttr:
    case OpKind::kOutput:
    case OpKind::kUnknown:
      break;
  }
  Fail(n, "has no shape rule");
}

}  // namespace harness::compiler
