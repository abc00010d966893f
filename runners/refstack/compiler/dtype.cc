#include "runners/refstack/compiler/dtype.h"

#include <array>

namespace harness::compiler {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::string_view short_name;
  int bits;
  bool floating;
};

constexpr std::array<DTypeInfo, 11> kDTypes = {{
    {DType::kBool, "bool", "b8", 8, false},
    {DType::kInt4, "int4", "i4", 4, false},
    {DType::kInt8, "int8", "i8", 8, false},
    {DType::kInt32, "int32", "i32", 32, false},
    {DType::kInt64, "int64", "i64", 64, false},
    {DType::kFloat4E2M1, "float4_e2m1fn", "f4e2m1", 4, true},
    {DType::kFloat8E4M3, "float8_e4m3fn", "f8e4m3", 8, true},
    {DType::kFloat8E8M0, "float8_e8m0fnu", "f8e8m0", 8, true},
    {DType::kBFloat16, "bfloat16", "bf16", 16, true},
    {DType::kFloat16, "float16", "f16", 16, true},
    {DType::kFloat32, "float32", "f32", 32, true},
}};

const DTypeInfo& InfoOf(DType dtype) { return kDTypes[static_cast<size_t>(dtype)]; }

}  // namespace

std::string_view DTypeName(DType dtype) { return InfoOf(dtype).name; }
std::string_view DTypeShortName(DType dtype) { return InfoOf(dtype).short_name; }
int DTypeBits(DType dtype) { return InfoOf(dtype).bits; }
bool IsFloating(DType dtype) { return InfoOf(dtype).floating; }

std::optional<DType> ParseDType(std::string_view name) {
  for (const auto& info : kDTypes)
    if (info.name == name) return info.dtype;
  return std::nullopt;
}

DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  const bool fa = IsFloating(a), fb = IsFloating(b);
  if (fa != fb) return fa ? a : b;
  if (DTypeBits(a) != DTypeBits(b)) return DTypeBits(a) > DTypeBits(b) ? a : b;
  // Same width, different formats (bf16 vs f16, or two 8-bit floats): torch goes to f32.
  return fa ? DType::kFloat32 : a;
}

}  // namespace harness::compiler
