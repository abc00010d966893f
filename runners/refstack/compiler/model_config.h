// Model configs: HF config.json files kept under golden/models/<org>/<name>.json (the
// model id is the path). The file is the Hub's own format, so its version field is
// HF's `transformers_version`; only the fields the builders use are read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/util/error.h"
#include "harness/util/json_file.h"
#include "runners/refstack/compiler/dtype.h"

namespace harness::compiler {

struct ModelConfig {
  std::string origin;      // the file it was read from
  std::string model_type;  // qwen3 | qwen3_moe
  int64_t hidden_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;  // absent: hidden_size / num_attention_heads
  int64_t intermediate_size = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 0;
  DType dtype = DType::kBFloat16;  // torch_dtype
  // qwen3_moe
  int64_t num_experts = 0;
  int64_t num_experts_per_tok = 0;
  int64_t moe_intermediate_size = 0;
  int64_t decoder_sparse_step = 1;
  std::vector<int64_t> mlp_only_layers;

  bool IsMoeModel() const { return model_type == "qwen3_moe"; }
  // HF Qwen3-MoE: a layer is sparse unless listed in mlp_only_layers, and only every
  // decoder_sparse_step-th layer (1-based) is.
  bool IsMoeLayer(int64_t layer) const;
};

// The model types the builders know.
std::vector<std::string> KnownModelTypes();

harness::Result<ModelConfig> ParseModelConfig(const harness::Json& json, const std::string& origin);
harness::Result<ModelConfig> LoadModelConfig(const std::filesystem::path& path);
// "Qwen/Qwen3-32B" -> models_dir/Qwen/Qwen3-32B.json; an unknown id lists the known ones.
harness::Result<std::filesystem::path> ModelConfigPath(const std::filesystem::path& models_dir,
                                                       const std::string& model_id);
std::vector<std::string> KnownModels(const std::filesystem::path& models_dir);

}  // namespace harness::compiler
