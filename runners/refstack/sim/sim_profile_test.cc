#include "runners/refstack/sim/sim_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/util/paths.h"

namespace harness::sim {
namespace {

using ::testing::HasSubstr;

Json Minimal() { return Json{{"format_version", 1}, {"seed", 7}}; }

TEST(SimProfile, ShippedProfilesLoad) {
  for (const char* name : {"default.json", "faults.json", "demo.json", "noisy.json", "flaky.json"}) {
    auto p = LoadSimProfile(GoldenDir() / "sim" / name);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_DOUBLE_EQ(p->base_accuracy, 0.925) << name;
  }
  // Only noisy.json and flaky.json have rerun noise: the suite's default answers identically
  // on every run; flaky.json spreads it three times as wide.
  EXPECT_DOUBLE_EQ(ValueOrThrow(LoadSimProfile(GoldenDir() / "sim" / "default.json")).rerun_flip_rate, 0);
  const SimProfile noisy = ValueOrThrow(LoadSimProfile(GoldenDir() / "sim" / "noisy.json"));
  const SimProfile flaky = ValueOrThrow(LoadSimProfile(GoldenDir() / "sim" / "flaky.json"));
  EXPECT_DOUBLE_EQ(noisy.rerun_flip_rate, 0.65);
  EXPECT_DOUBLE_EQ(noisy.rerun_rank_sd, 0.02);
  EXPECT_DOUBLE_EQ(flaky.rerun_flip_rate, 0.65);
  EXPECT_DOUBLE_EQ(flaky.rerun_rank_sd, 0.06);
  auto faults = LoadSimProfile(GoldenDir() / "sim" / "faults.json");
  ASSERT_TRUE(faults);
  EXPECT_DOUBLE_EQ(faults->faults.http_5xx, 0.05);
  EXPECT_DOUBLE_EQ(faults->faults.slow, 0.02);
  EXPECT_DOUBLE_EQ(faults->faults.malformed_json, 0.01);
}

TEST(SimProfile, DefaultsAndOverrides) {
  Json j = Minimal();
  j["batch_rows"] = 1;
  j["latency"] = {{"per_token_s", 0.01}};
  j["faults"] = {{"http_429", 0.1}, {"retry_after_s", 2}};
  auto p = ParseSimProfile(j, "p.json");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->seed, 7u);
  EXPECT_EQ(p->batch_rows, 1);
  EXPECT_EQ(p->gemm_k, 512);
  EXPECT_DOUBLE_EQ(p->per_token_s, 0.01);
  EXPECT_DOUBLE_EQ(p->faults.http_429, 0.1);
  EXPECT_DOUBLE_EQ(p->faults.retry_after_s, 2);
  EXPECT_EQ(p->model, "refstack-sim");
  EXPECT_DOUBLE_EQ(p->rerun_flip_rate, 0);   // no rerun noise unless a profile asks for it
  EXPECT_DOUBLE_EQ(p->rerun_rank_sd, 0.02);
}

TEST(SimProfile, ErrorsNameFileAndField) {
  auto expect_error = [](Json j, const std::string& what) {
    auto p = ParseSimProfile(j, "p.json");
    ASSERT_FALSE(p) << j.dump();
    EXPECT_THAT(p.error().message, HasSubstr(what));
    EXPECT_EQ(p.error().code, ExitCode::kUsage);
  };
  Json j = Minimal();
  j["format_version"] = 2;
  expect_error(j, "p.json: format_version: unsupported version 2");
  j = Minimal();
  j.erase("seed");
  expect_error(j, "p.json: seed: missing field");
  j = Minimal();
  j["base_accuracy"] = 1.5;
  expect_error(j, "p.json: base_accuracy: must be in [0, 1], got 1.5");
  j = Minimal();
  j["faults"] = {{"http_5xx", 0.6}, {"slow", 0.6}};
  expect_error(j, "p.json: faults: the rates add up to more than 1");
  j = Minimal();
  j["faults"] = {{"http_503", 0.1}};
  expect_error(j, "p.json: faults.http_503: unknown field");
  j = Minimal();
  j["batch_rowz"] = 3;
  expect_error(j, "p.json: batch_rowz: unknown field");
  j = Minimal();
  j["rerun_flip_rate"] = -0.1;
  expect_error(j, "p.json: rerun_flip_rate: must be in [0, 1], got -0.1");
  j["rerun_flip_rate"] = 1.5;
  expect_error(j, "p.json: rerun_flip_rate: must be in [0, 1], got 1.5");
  j = Minimal();
  j["rerun_rank_sd"] = 0.7;
  expect_error(j, "p.json: rerun_rank_sd: must be in [0, 0.5], got 0.7");
  j = Minimal();
  j["gemm"] = {{"k", "big"}};
  expect_error(j, "p.json: gemm.k: expected an integer");
}

}  // namespace
}  // namespace harness::sim
