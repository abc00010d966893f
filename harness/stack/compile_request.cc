#include "harness/stack/compile_request.h"

#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace harness {
namespace {

// Far above any real model's sizes, far below int overflow in shape arithmetic.
constexpr int64_t kMaxDimension = 1 << 24;

}  // namespace

Result<CompileRequest> CompileRequestFromParams(const JsonObject& params) {
  CompileRequest r;
  auto model = params.String("model");
  if (!model) return model.error();
  r.model = *model;
  for (auto [key, field] : {std::pair{"tp_size", &r.tp_size},
                            {"query_len", &r.query_len},
                            {"num_queries", &r.num_queries},
                            {"num_layers_override", &r.num_layers_override}}) {
    auto v = params.Int(key, *field);
    if (!v) return v.error();
    const int64_t low = std::string_view(key) == "num_layers_override" ? 0 : 1;
    if (*v < low || *v > kMaxDimension)
      return params.FieldError(key, fmt::format("must be in [{}, {}], got {}", low, kMaxDimension, *v));
    *field = static_cast<int>(*v);
  }
  for (auto [key, field] : {std::pair{"disable_repetition", &r.disable_repetition},
                            {"enable_sequence_parallel", &r.enable_sequence_parallel}}) {
    auto v = params.Bool(key, *field);
    if (!v) return v.error();
    *field = *v;
  }
  for (auto [key, field] :
       {std::pair{"quant", &r.quant}, {"word_embedding_tp", &r.word_embedding_tp}, {"device", &r.device}}) {
    auto v = params.String(key, *field);
    if (!v) return v.error();
    *field = *v;
  }
  return r;
}

}  // namespace harness
