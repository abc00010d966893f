// GEMMs of the reference stack, all y = x · w with x [M, K] and w [K, N] (the layout
// grouped-matmul weights have, and the one whose B panels pack without a transpose),
// cache-blocked over packed panels (BLIS loop order) around the register-blocked
// microkernel in gemm_microkernel.h. Single-threaded.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "harness/util/error.h"
#include "runners/refstack/kernels/tensor.h"

namespace harness::kernels {

// fp32 GEMM: y[m, n] = sum_k x[m, k] w[k, n]; the reference the FP8 GEMM is measured
// against.
Result<FloatTensor> GemmF32(const FloatTensor& x, const FloatTensor& w);

// W8A8 block-scaled FP8 GEMM:
//   y[m, n] = sum_k e4m3(xq[m, k]) x_scale[m, k / 128] * e4m3(wq[k, n]) w_scale[k / 128, n / 128]
// xq [M, K], wq [K, N] with K and N multiples of 128; x_scale [M, K / 128] (per token
// and 128-column group) and w_scale [K / 128, N / 128] (per 128 x 128 block) are read
// THROUGH their strides, whatever the storage order, and must not overlap themselves
// (two scales in one storage slot is a broken layout, not a layout). Every shape or
// stride problem is an error naming the shapes and strides.
// This form decodes and packs all of W on every call; a weight used more than once
// belongs in an Fp8GemmWeight.
Result<FloatTensor> Fp8BlockScaledGemm(const ByteTensor& xq, const FloatTensor& x_scale, const ByteTensor& wq,
                                       const FloatTensor& w_scale);

// An FP8 weight (wq [K, N], w_scale [K / 128, N / 128], as above) with its GEMM packing
// cached beside it: the codes rearranged once, still one byte each, into the panel order
// the GEMM reads, and the scales copied row-major. The pack remembers the storage
// versions (Tensor::version()) of wq and w_scale it was made from; a GEMM that finds
// either changed -- a write through mutable_data_ptr() of the tensor or of any view of
// its storage -- packs again before it reads, so a changed weight is never served from
// a stale pack. Holds wq and w_scale by sharing their storage, as a view would.
class Fp8GemmWeight {
 public:
  // Checks shapes and scale strides with Fp8BlockScaledGemm's messages, then packs.
  static Result<Fp8GemmWeight> Make(ByteTensor wq, FloatTensor w_scale);

  int64_t k() const { return wq_.size(0); }
  int64_t n() const { return wq_.size(1); }
  // How many times the codes have been packed: 1, plus one per change seen.
  int64_t packs() const { return packs_; }
  // Bytes of the packed codes (K x N): what an M = 1 GEMM streams.
  int64_t packed_bytes() const { return static_cast<int64_t>(codes_.size()); }
  // Whether the GEMM decodes with gemm_microkernel.h's plain decode (no NaN code, every
  // scale below 2^8) or the general one; the two give the same bits.
  bool plain_decode() const { return plain_; }

 private:
  friend Result<FloatTensor> Fp8BlockScaledGemm(const ByteTensor&, const FloatTensor&, Fp8GemmWeight&);
  Fp8GemmWeight(ByteTensor wq, FloatTensor w_scale) : wq_(std::move(wq)), w_scale_(std::move(w_scale)) {}
  void PackIfChanged();

  ByteTensor wq_;
  FloatTensor w_scale_;
  uint64_t packed_wq_version_ = 0, packed_scale_version_ = 0;
  int64_t packs_ = 0;
  std::vector<uint8_t> codes_;  // gemm.cc's PackedCodeOffset order
  std::vector<float> scales_;   // [K / 128][N / 128] row-major
  bool plain_ = false;          // gemm_microkernel.h's plain decode applies
};

// The same product with a packed weight; bit-identical to the form above on the same
// CPU. M = 1 streams the packed codes through a decode-in-registers GEMV; larger M
// decodes them panel by panel into the blocked GEMM. Re-packs first if w has changed.
Result<FloatTensor> Fp8BlockScaledGemm(const ByteTensor& xq, const FloatTensor& x_scale, Fp8GemmWeight& w);

// Grouped matmul over experts (MoE): the rows of x [T, K] are grouped by expert in
// order, rows_per_expert[e] of them for expert e; y rows of expert e = x_e · w[e] with
// w [E, K, N]. The counts must sum to T.
Result<FloatTensor> GroupedMatmul(const FloatTensor& x, const std::vector<int64_t>& rows_per_expert,
                                  const FloatTensor& w);

}  // namespace harness::kernels
