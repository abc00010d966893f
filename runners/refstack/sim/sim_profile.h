// A stand-in endpoint's profile (JSON under golden/sim/, docs/gsm8k.md): how good the
// simulated model is, how big the batch its requests share is, how slow it answers and
// how often the transport misbehaves. Everything random is drawn from `seed`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "harness/util/error.h"
#include "harness/util/json_file.h"

namespace harness::sim {

struct SimFaultRates {
  // Each is the probability that one attempt at one question meets the fault; together
  // at most 1.
  double http_5xx = 0;
  double http_429 = 0;
  double slow = 0;                  // answered only after slow_s (beyond the client timeout)
  double malformed_json = 0;        // 200 with a cut-off JSON body
  double dropped_connection = 0;    // headers sent, then the connection closes
  double retry_after_s = 1;         // the Retry-After a 429 carries
  double slow_s = 5;
};

struct SimProfile {
  std::string origin;               // the file it came from, for messages
  std::string model = "refstack-sim";
  uint64_t seed = 0;
  double base_accuracy = 0.925;
  int batch_rows = 64;              // M: rows that share the FP8 GEMM with the request
  int gemm_k = 512, gemm_n = 256;   // the stand-in's GEMM inner and output sizes
  double no_number_share = 0.1;     // share of wrong answers that hold no number at all
  // Share of questions whose margin a run perturbs (sim_model.h): 0 answers identically
  // on every run, above 0 reruns disagree the way a real server's do under dynamic batching.
  double rerun_flip_rate = 0;
  // How far a rerun moves a perturbed question's rank, one sd (sim_model.h's w): a wider
  // spread puts more questions near enough to the boundary to flip.
  double rerun_rank_sd = 0.02;
  double first_token_s = 0;         // latency = first_token_s + per_token_s * tokens
  double per_token_s = 0;
  SimFaultRates faults;
};


Result<SimProfile> LoadSimProfile(const std::filesystem::path& path);
Result<SimProfile> ParseSimProfile(const Json& j, const std::string& origin);

}  // namespace harness::sim
