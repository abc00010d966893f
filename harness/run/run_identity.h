// A run's identity: everything that changes its answers. Two runs with the same
// identity on the same commit are reruns of one another, so only they may be resumed
// into each other or paired as baselines; anything else would silently mix results.
//
// The run's identity covers the stack config (stack, device, precision, batch, faults and
// the stack's own keys; comments and format_version left out), the explicit endpoint
// (URL, model, chat or completion route) and the content of every stand-in profile a
// suite table names (sim_profile). Each case adds its own parameter row (sampling
// settings, sizes, gates), stored as params_json: a baseline must match both, and a
// resumed run must find its finished cases' rows unchanged. It never holds a secret: the
// API key's variable name is not part of it, the key itself never reaches it. Nor is the
// stand-in's noise seed (--seed, RunContext::noise_seed): it models what differs between
// reruns of one identity, so runs differing only in it must pair as baselines.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/run/suite_table.h"
#include "harness/stack/stack.h"
#include "harness/stack/stack_config.h"
#include "harness/util/json_file.h"

namespace harness {

struct RunIdentity {
  Json json;          // canonical: equal identities dump to equal text
  std::string hash;   // hex digest of json.dump()
};

Result<RunIdentity> MakeRunIdentity(const StackConfig& config, const std::optional<EndpointTarget>& endpoint,
                                    const std::vector<SuiteTable>& tables);

// "endpoint.model: \"a\" -> \"b\"; stack_config.faults: [] -> [\"x\"]": the leaves that
// differ between a stored identity (JSON text) and this one, for refusal messages.
std::string DescribeIdentityDifference(const std::string& stored_json, const Json& current);

}  // namespace harness
