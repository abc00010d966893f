// A strided tensor over shared storage, the CPU analogue of a torch tensor's
// (storage, storage_offset, size, stride). Views (AsStrided) share storage and change
// only metadata, so a test can prove a repair is zero-copy by comparing storage
// identity. Every view is bounds-checked when it is made: a Tensor never describes an
// element outside its storage, which is what lets kernels read through any strides.
// The storage counts its writes (version(), torch's _version), so a cache derived from a
// tensor -- the packed GEMM weight in gemm.h -- can tell that the tensor has changed.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/util/error.h"

namespace harness::kernels {

using Shape = std::vector<int64_t>;

std::string FormatShape(const Shape& shape);      // "[64, 8]"
std::string FormatStrides(const Shape& strides);  // "(8, 1)"
int64_t NumElements(const Shape& shape);
Shape RowMajorStrides(const Shape& shape);

// True when two layouts of `shape` address the same elements: strides of dimensions of
// size 1 are never used, so they do not count (torch's contiguity rule). This is why a
// [1, G] scale looks the same row- or column-major.
bool SameLayout(const Shape& shape, const Shape& strides_a, const Shape& strides_b);

// A sufficient test that no two elements share a storage slot: dimensions of size > 1,
// ordered by stride, each step past the whole extent of the smaller ones.
bool IsNonOverlapping(const Shape& shape, const Shape& strides);

// Element offset (from the tensor's own offset) of the last element, or -1 when empty.
int64_t MaxElementOffset(const Shape& shape, const Shape& strides);

template <class T>
class Tensor {
 public:
  Tensor() : Tensor(Shape{0}) {}
  // A zero-filled row-major tensor. Negative sizes are a programming error.
  explicit Tensor(Shape shape)
      : shape_(std::move(shape)), strides_(RowMajorStrides(shape_)),
        storage_(std::make_shared<Storage>(Storage{std::vector<T>(CheckedCount(shape_)), 0})) {}

  // A row-major tensor over `data`; the sizes must agree.
  static Result<Tensor> FromData(Shape shape, std::vector<T> data) {
    for (int64_t s : shape)
      if (s < 0) return UsageError("tensor: negative size in shape " + FormatShape(shape));
    if (NumElements(shape) != static_cast<int64_t>(data.size()))
      return UsageError(fmt::format("tensor: shape {} needs {} elements, got {}", FormatShape(shape),
                                    NumElements(shape), data.size()));
    Tensor t;
    t.shape_ = std::move(shape);
    t.strides_ = RowMajorStrides(t.shape_);
    t.storage_ = std::make_shared<Storage>(Storage{std::move(data), 0});
    return t;
  }

  int dim() const { return static_cast<int>(shape_.size()); }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t size(int d) const { return shape_.at(d); }
  int64_t stride(int d) const { return strides_.at(d); }
  int64_t offset() const { return offset_; }
  int64_t numel() const { return NumElements(shape_); }
  int64_t storage_size() const { return static_cast<int64_t>(storage_->values.size()); }

  // The first element's address (torch's data_ptr()).
  const T* data_ptr() const { return storage_->values.data() + offset_; }
  // The only way to write a tensor: it counts as a write to the storage (every view's
  // version() moves), whether or not the caller then writes.
  T* mutable_data_ptr() {
    ++storage_->version;
    return storage_->values.data() + offset_;
  }
  // How many times mutable_data_ptr() has been called on any view of this storage. A
  // value derived from the tensor while version() was v is still valid while it is v,
  // as long as no pointer obtained earlier is written after the derivation (as in torch).
  // Not atomic: the kernels are single-threaded.
  uint64_t version() const { return storage_->version; }
  // Identity of the storage (its base address): equal for every view of one tensor.
  const void* storage_id() const { return storage_->values.data(); }
  bool SharesStorageWith(const Tensor& other) const { return storage_ == other.storage_; }

  bool IsContiguous() const { return SameLayout(shape_, strides_, RowMajorStrides(shape_)); }

  // A view with new metadata over the same storage (torch.as_strided). Fails, naming
  // the layout, when the view would reach outside the storage.
  Result<Tensor> AsStrided(Shape shape, Shape strides, std::optional<int64_t> offset = std::nullopt) const {
    const int64_t off = offset.value_or(offset_);
    std::string layout = fmt::format("shape {} strides {} offset {}", FormatShape(shape), FormatStrides(strides), off);
    if (shape.size() != strides.size())
      return UsageError("as_strided: " + layout + ": shape and strides differ in rank");
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] < 0 || strides[d] < 0) return UsageError("as_strided: " + layout + ": negative size or stride");
    if (off < 0) return UsageError("as_strided: " + layout + ": negative offset");
    const int64_t last = MaxElementOffset(shape, strides);
    if (last >= 0 && off + last >= storage_size())
      return UsageError(fmt::format("as_strided: {} reaches element {} of a storage of {} elements", layout,
                                    off + last, storage_size()));
    Tensor t = *this;
    t.shape_ = std::move(shape);
    t.strides_ = std::move(strides);
    t.offset_ = off;
    return t;
  }

  // Row-major copy into fresh storage.
  Tensor Clone() const {
    Tensor out(shape_);
    T* dst = out.mutable_data_ptr();
    ForEachOffset([&](int64_t i, int64_t src) { dst[i] = storage_->values[static_cast<size_t>(src)]; });
    return out;
  }
  // This tensor when it is already row-major (no copy, like torch), else a Clone().
  Tensor Contiguous() const { return IsContiguous() ? *this : Clone(); }

  // The element at a logical index, read through the strides. For tests and reports;
  // kernels use data_ptr() and strides.
  T At(const Shape& index) const {
    int64_t o = offset_;
    for (size_t d = 0; d < index.size(); ++d) o += index[d] * strides_[d];
    return storage_->values[static_cast<size_t>(o)];
  }
  T At(int64_t i, int64_t j) const {
    return storage_->values[static_cast<size_t>(offset_ + i * strides_[0] + j * strides_[1])];
  }

  // All elements in logical (row-major) order.
  std::vector<T> Values() const {
    std::vector<T> out(static_cast<size_t>(numel()));
    ForEachOffset([&](int64_t i, int64_t src) { out[static_cast<size_t>(i)] = storage_->values[static_cast<size_t>(src)]; });
    return out;
  }

  // "shape [64, 8] strides (8, 1) offset 0"
  std::string Describe() const {
    return fmt::format("shape {} strides {} offset {}", FormatShape(shape_), FormatStrides(strides_), offset_);
  }

  // Calls f(logical_index, storage_offset) for every element in row-major order.
  template <class F>
  void ForEachOffset(F&& f) const {
    const int64_t n = numel();
    if (n == 0) return;
    Shape index(shape_.size(), 0);
    int64_t o = offset_;
    for (int64_t i = 0; i < n; ++i) {
      f(i, o);
      for (int d = dim() - 1; d >= 0; --d) {
        if (++index[d] < shape_[d]) {
          o += strides_[d];
          break;
        }
        o -= (shape_[d] - 1) * strides_[d];
        index[d] = 0;
      }
    }
  }

 private:
  static size_t CheckedCount(const Shape& shape) {
    for (int64_t s : shape)
      if (s < 0) throw FatalError(ExitCode::kUsage, "tensor: negative size in shape " + FormatShape(shape));
    return static_cast<size_t>(NumElements(shape));
  }

  struct Storage {
    std::vector<T> values;
    uint64_t version;
  };

  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;
  std::shared_ptr<Storage> storage_;
};

using FloatTensor = Tensor<float>;
using ByteTensor = Tensor<uint8_t>;  // FP8 / FP4 / E8M0 codes

// Where two tensors of one shape first differ, bit for bit (so -0 != +0 and NaNs compare
// by payload), as "element [3, 1]: 0.25 vs 0.5"; nullopt when identical. A shape
// mismatch is reported as such.
template <class T>
std::optional<std::string> FirstDifference(const Tensor<T>& a, const Tensor<T>& b) {
  if (a.shape() != b.shape())
    return fmt::format("shapes differ: {} vs {}", FormatShape(a.shape()), FormatShape(b.shape()));
  const std::vector<T> va = a.Values(), vb = b.Values();
  for (size_t i = 0; i < va.size(); ++i) {
    if (std::memcmp(&va[i], &vb[i], sizeof(T)) == 0) continue;
    Shape index(a.shape().size());
    size_t rest = i;
    for (int d = a.dim() - 1; d >= 0; --d) {
      index[d] = static_cast<int64_t>(rest % static_cast<size_t>(a.shape()[d]));
      rest /= static_cast<size_t>(a.shape()[d]);
    }
    if constexpr (std::is_floating_point_v<T>)
      return fmt::format("element {}: {} vs {}", FormatShape(index), va[i], vb[i]);
    else
      return fmt::format("element {}: {} vs {}", FormatShape(index), +va[i], +vb[i]);
  }
  return std::nullopt;
}

}  // namespace harness::kernels
