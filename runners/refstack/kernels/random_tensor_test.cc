#include "runners/refstack/kernels/random_tensor.h"

#include <gtest/gtest.h>

namespace harness::kernels {
namespace {

// Values drawn by the generator before its streams were cached (hex floats, exact): the
// same seed must give the same values whatever was drawn before it in the process.
void ExpectKnownWeights(const FloatTensor& w) {
  EXPECT_EQ(w.data_ptr()[0], -0x1.0cp-7f);
  EXPECT_EQ(w.data_ptr()[1], 0x1.7ap-7f);
  EXPECT_EQ(w.data_ptr()[255], 0x1.1ap-7f);
  EXPECT_EQ(w.data_ptr()[262143], 0x1.a2p-10f);
  EXPECT_EQ(w.data_ptr()[262144], -0x1.34p-10f);
  EXPECT_EQ(w.data_ptr()[1048575], 0x1.b6p-8f);
}

TEST(RandomTensor, ASeedGivesTheSameValuesWhateverWasDrawnBefore) {
  constexpr uint64_t kSeed = 20240533;
  // A prefix first, then the whole tensor (grown from the prefix), then the prefix again.
  const FloatTensor x = RandomBf16Normal({3, 5}, kSeed);
  EXPECT_EQ(x.data_ptr()[0], -0x1.0cp-1f);
  EXPECT_EQ(x.data_ptr()[14], 0x1.08p-3f);
  const FloatTensor w = RandomBf16Normal({4096, 256}, kSeed, 1.0f / 64);
  ExpectKnownWeights(w);
  EXPECT_EQ(RandomBf16Normal({3, 5}, kSeed).data_ptr()[14], 0x1.08p-3f);
  // Other seeds, enough values to push this one's stream out of the cache, then it again.
  for (uint64_t other = 1; other <= 5; ++other) (void)RandomBf16Normal({1024, 1024}, kSeed + other);
  ExpectKnownWeights(RandomBf16Normal({4096, 256}, kSeed, 1.0f / 64));
  // The log-normal gains of a seed come from the same normals.
  const FloatTensor g = RandomBf16LogNormal({8}, 5, 0.5f);
  EXPECT_EQ(g.data_ptr()[0], 0x1.02p+0f);
  EXPECT_EQ(g.data_ptr()[7], 0x1.26p+0f);
}

TEST(RandomTensor, ATensorOwnsItsValues) {
  FloatTensor first = RandomBf16Normal({4, 4}, 77);
  const float drawn = first.data_ptr()[5];
  first.mutable_data_ptr()[5] = 1234.0f;
  EXPECT_EQ(RandomBf16Normal({4, 4}, 77).data_ptr()[5], drawn);
  EXPECT_FALSE(RandomBf16Normal({4, 4}, 77).SharesStorageWith(first));
}

}  // namespace
}  // namespace harness::kernels
