// Element types of the modelled tensors. Only what the modelled ops need: the float
// formats of the quant types (FP8 e4m3, MXFP4 e2m1 payload with e8m0 block scales),
// the integer types of indices and int8/int4 weights, and bool masks.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace harness::compiler {

enum class DType : uint8_t {
  kBool,
  kInt4,
  kInt8,
  kInt32,
  kInt64,
  kFloat4E2M1,
  kFloat8E4M3,
  kFloat8E8M0,
  kBFloat16,
  kFloat16,
  kFloat32,
};

// torch's spelling without "torch.": "bfloat16", "float8_e4m3fn", ...
std::string_view DTypeName(DType dtype);
// Short form for the printer: "bf16", "f8e4m3", ...
std::string_view DTypeShortName(DType dtype);
int DTypeBits(DType dtype);
bool IsFloating(DType dtype);
// Parses DTypeName spellings (as in an HF config's torch_dtype).
std::optional<DType> ParseDType(std::string_view name);
// The result type of an elementwise op on a and b (bool < integers < floats; wider wins;
// bf16 with f16 gives f32, as torch does).
DType PromoteTypes(DType a, DType b);

}  // namespace harness::compiler
