#include "runners/refstack/compiler/model_config.h"

#include <fmt/format.h>

#include <algorithm>

namespace harness::compiler {

using harness::JsonObject;
using harness::Result;

bool ModelConfig::IsMoeLayer(int64_t layer) const {
  if (!IsMoeModel() || num_experts == 0) return false;
  if (std::find(mlp_only_layers.begin(), mlp_only_layers.end(), layer) != mlp_only_layers.end()) return false;
  return (layer + 1) % decoder_sparse_step == 0;
}

std::vector<std::string> KnownModelTypes() { return {"qwen3", "qwen3_moe"}; }

namespace {

// Reads a required positive integer field into *out.
harness::Status PositiveInt(const JsonObject& o, const std::string& key, int64_t* out) {
  auto v = o.Int(key);
  if (!v) return v.error();
  if (*v <= 0) return o.FieldError(key, fmt::format("must be positive, got {}", *v));
  *out = *v;
  return harness::OkStatus();
}

// The weights' dtype (torch_dtype, default bfloat16): one the reference stack computes in.
Result<DType> ReadDType(const JsonObject& o) {
  auto dtype_name = o.String("torch_dtype", "bfloat16");
  if (!dtype_name) return dtype_name.error();
  auto dtype = ParseDType(*dtype_name);
  if (!dtype || (*dtype != DType::kBFloat16 && *dtype != DType::kFloat16 && *dtype != DType::kFloat32))
    return o.FieldError("torch_dtype",
                        fmt::format("unsupported dtype '{}' (known: bfloat16, float16, float32)", *dtype_name));
  return *dtype;
}

// The experts of a mixture-of-experts model and which layers have them.
harness::Status ReadMoeFields(const JsonObject& o, ModelConfig& c) {
  for (auto [key, field] : {std::pair{"num_experts", &c.num_experts},
                            {"num_experts_per_tok", &c.num_experts_per_tok},
                            {"moe_intermediate_size", &c.moe_intermediate_size}}) {
    if (auto s = PositiveInt(o, key, field); !s) return s.error();
  }
  if (c.num_experts_per_tok > c.num_experts) return o.FieldError("num_experts_per_tok", "is larger than num_experts");
  if (o.Has("decoder_sparse_step")) {
    if (auto s = PositiveInt(o, "decoder_sparse_step", &c.decoder_sparse_step); !s) return s.error();
  }
  if (o.Has("mlp_only_layers")) {
    auto layers = o.IntList("mlp_only_layers");
    if (!layers) return layers.error();
    c.mlp_only_layers = *layers;
  }
  return harness::OkStatus();
}

}  // namespace

Result<ModelConfig> ParseModelConfig(const harness::Json& json, const std::string& origin) {
  if (!json.is_object()) return harness::UsageError(origin + ": a model config is a JSON object");
  JsonObject o(json, origin);
  ModelConfig c;
  c.origin = origin;
  if (auto version = o.String("transformers_version"); !version) return version.error();
  auto model_type = o.String("model_type");
  if (!model_type) return model_type.error();
  const auto known = KnownModelTypes();
  if (std::find(known.begin(), known.end(), *model_type) == known.end())
    return o.FieldError("model_type",
                        fmt::format("unknown model type '{}' (known: {})", *model_type, fmt::join(known, ", ")));
  c.model_type = *model_type;
  for (auto [key, field] : {std::pair{"hidden_size", &c.hidden_size},
                            {"num_hidden_layers", &c.num_hidden_layers},
                            {"num_attention_heads", &c.num_attention_heads},
                            {"num_key_value_heads", &c.num_key_value_heads},
                            {"intermediate_size", &c.intermediate_size},
                            {"vocab_size", &c.vocab_size},
                            {"max_position_embeddings", &c.max_position_embeddings}}) {
    if (auto s = PositiveInt(o, key, field); !s) return s.error();
  }
  if (o.Has("head_dim")) {
    if (auto s = PositiveInt(o, "head_dim", &c.head_dim); !s) return s.error();
  } else {
    if (c.hidden_size % c.num_attention_heads != 0)
      return o.FieldError("head_dim", "missing, and hidden_size does not divide by num_attention_heads");
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    return o.FieldError("num_key_value_heads", fmt::format("{} does not divide num_attention_heads {}",
                                                           c.num_key_value_heads, c.num_attention_heads));
  auto eps = o.Number("rms_norm_eps");
  if (!eps) return eps.error();
  if (*eps <= 0) return o.FieldError("rms_norm_eps", "must be positive");
  c.rms_norm_eps = *eps;
  auto dtype = ReadDType(o);
  if (!dtype) return dtype.error();
  c.dtype = *dtype;
  if (c.IsMoeModel())
    if (auto s = ReadMoeFields(o, c); !s) return s.error();
  return c;
}

Result<ModelConfig> LoadModelConfig(const std::filesystem::path& path) {
  auto json = harness::ReadJsonFile(path);
  if (!json) return json.error();
  return ParseModelConfig(*json, path.string());
}

std::vector<std::string> KnownModels(const std::filesystem::path& models_dir) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(models_dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().extension() != ".json") continue;
    auto rel = std::filesystem::relative(it->path(), models_dir, ec);
    rel.replace_extension();
    ids.push_back(rel.generic_string());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Result<std::filesystem::path> ModelConfigPath(const std::filesystem::path& models_dir, const std::string& model_id) {
  const bool plain = !model_id.empty() && model_id.find("..") == std::string::npos && model_id.front() != '/';
  auto path = models_dir / (model_id + ".json");
  std::error_code ec;
  if (plain && std::filesystem::is_regular_file(path, ec)) return path;
  return harness::UsageError(fmt::format("unknown model '{}' (known: {}; configs live in {})", model_id,
                                         fmt::join(KnownModels(models_dir), ", "), models_dir.string()));
}

}  // namespace harness::compiler
