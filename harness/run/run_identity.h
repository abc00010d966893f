// A run's identity: what was measured, and apart from it where and how it ran. Two runs
// with the same measured identity on the same commit are reruns of one another, so only
// they may be resumed into each other; across commits they pair as baselines and form one
// history series. Anything else would silently mix results.
//
// The whole identity covers the stack config (stack, device, precision, batch, faults and
// the stack's own keys; comments and format_version left out), the explicit endpoint
// (URL, model as requested and as the server names it, chat or completion route) and the
// content of every stand-in profile a suite table names (sim_profile);
// store/identity_rule.h moves the leaves that say where and how it ran (endpoint URL, exec
// cwd, env and timeout, fault switches) into the context. Each case adds its own parameter
// row (sampling settings, sizes, gates), stored as params_json: a baseline must match both,
// and a resumed run must find its finished cases' rows unchanged. It never holds a secret:
// the API key itself never reaches it. Nor is the stand-in's noise seed (--seed,
// RunContext::noise_seed): it models what differs between reruns of one identity.
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
  Json json;          // the measured identity, canonical: equal identities dump to equal text
  Json context;       // where and how it ran
  std::string hash;   // hex digest of json.dump()
};

Result<RunIdentity> MakeRunIdentity(const StackConfig& config, const std::optional<EndpointTarget>& endpoint,
                                    const std::vector<SuiteTable>& tables);

// "endpoint.model: \"a\" -> \"b\"; stack_config.faults: [] -> [\"x\"]": the leaves that
// differ between a stored identity (JSON text) and this one, for refusal messages.
std::string DescribeIdentityDifference(const std::string& stored_json, const Json& current);

}  // namespace harness
