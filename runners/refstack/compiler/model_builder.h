// Builds the compiled-graph form of a Qwen3 / Qwen3-MoE model from its HF config: the
// graph as msmodeling's pipeline has it after pattern matching (rms_norm / add_rms_norm
// / add_rms_norm2, swiglu), the peephole view move (all_reduce on the 2-D projection
// output, the view after it), linear merging (one gate_up projection) and split sinking
// (per-expert linears as grouped matmuls). Decoder layers with the same structure are
// region-replayed unless repetition is disabled. Details in docs/compiler.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/util/error.h"
#include "runners/refstack/compiler/graph.h"
#include "runners/refstack/compiler/model_config.h"

namespace harness::compiler {

enum class QuantType { kNone, kW8A8, kW4A8, kFp8, kMxfp4 };
std::string_view QuantTypeName(QuantType quant);
// Case-insensitive; "bf16" means none. An unknown name lists the known ones.
harness::Result<QuantType> ParseQuantType(std::string_view name);

enum class WordEmbeddingTp { kRow, kCol };
harness::Result<WordEmbeddingTp> ParseWordEmbeddingTp(std::string_view name);

// _internal_copy_region (v1: output meta from the replay's input) or
// _internal_copy_region_v2 (output meta from the representative's end marker, which is
// then also kept as a formal graph output).
enum class RegionCopyVersion { kV1 = 1, kV2 = 2 };

// The MX block size of MXFP4 activation and weight scales.
inline constexpr int64_t kMxfp4GroupSize = 32;
// Tokens per paged-KV block.
inline constexpr int64_t kKvBlockSize = 128;

struct BuildOptions {
  int64_t tp_size = 1;
  int64_t rank = 0;  // which member of the TP group [0, tp) this graph is for
  int64_t query_len = 128;
  int64_t num_queries = 1;
  int64_t num_layers_override = 0;  // 0: the config's num_hidden_layers
  QuantType quant = QuantType::kNone;
  bool enable_repetition = true;
  RegionCopyVersion copy_version = RegionCopyVersion::kV2;
  WordEmbeddingTp word_embedding_tp = WordEmbeddingTp::kRow;
  DType act_dtype = DType::kBFloat16;
};

// An option the config cannot satisfy (tp not dividing the heads, ...) is a usage error
// naming the option, the config field and the file.
harness::Result<Graph> BuildModel(const ModelConfig& config, const BuildOptions& options);

}  // namespace harness::compiler
