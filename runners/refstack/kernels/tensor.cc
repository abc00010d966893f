#include "runners/refstack/kernels/tensor.h"

#include <algorithm>
#include <numeric>

#include <fmt/ranges.h>

namespace harness::kernels {

std::string FormatShape(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }
std::string FormatStrides(const Shape& strides) { return fmt::format("({})", fmt::join(strides, ", ")); }

int64_t NumElements(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

Shape RowMajorStrides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * std::max<int64_t>(shape[d + 1], 1);
  return strides;
}

bool SameLayout(const Shape& shape, const Shape& strides_a, const Shape& strides_b) {
  if (strides_a.size() != shape.size() || strides_b.size() != shape.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] > 1 && strides_a[d] != strides_b[d]) return false;
  return true;
}

bool IsNonOverlapping(const Shape& shape, const Shape& strides) {
  if (NumElements(shape) == 0) return true;
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of dims with size > 1
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] > 1) dims.emplace_back(strides[d], shape[d]);
  std::sort(dims.begin(), dims.end());
  int64_t extent = 1;  // elements spanned by the dims so far
  for (const auto& [stride, size] : dims) {
    if (stride < extent) return false;
    extent = stride * size;
  }
  return true;
}

int64_t MaxElementOffset(const Shape& shape, const Shape& strides) {
  int64_t last = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return -1;
    last += (shape[d] - 1) * strides[d];
  }
  return last;
}

}  // namespace harness::kernels
