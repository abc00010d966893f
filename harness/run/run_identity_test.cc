// The run identity (run_identity.h): every input that changes a run's answers changes its
// hash, each on its own, and the inputs that change no answer do not.
#include "harness/run/run_identity.h"

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::WriteFile;

SuiteTable TableWithProfile(const std::string& profile) {
  SuiteTable t;
  t.suite = "gsm8k";
  t.tests["test_acc"] = {CaseParam{"gsm8k", "test_acc", 0, Json{{"sim_profile", profile}}, "gsm8k.json"}};
  return t;
}

// Stand-in profiles live under $HARNESS_ROOT/golden: a folder of the test's own.
class RunIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* root = std::getenv("HARNESS_ROOT")) saved_root_ = root;
    setenv("HARNESS_ROOT", dir_.path().c_str(), 1);
    WriteFile(dir_ / "golden/sim/a.json", R"({"accuracy": 0.92})");
    WriteFile(dir_ / "golden/sim/b.json", R"({"accuracy": 0.80})");
  }
  void TearDown() override {
    if (saved_root_) setenv("HARNESS_ROOT", saved_root_->c_str(), 1);
    else unsetenv("HARNESS_ROOT");
  }
  static std::string Hash(const StackConfig& c, const std::optional<EndpointTarget>& e, const std::string& profile) {
    auto id = MakeRunIdentity(c, e, {TableWithProfile(profile)});
    EXPECT_TRUE(id.ok()) << id.error().message;
    return id.ok() ? id->hash : "";
  }

  testing_util::TempDir dir_;
  std::optional<std::string> saved_root_;
  const StackConfig base_{};
  const EndpointTarget endpoint_{"http://127.0.0.1:30000", "m", false, ""};
};

TEST_F(RunIdentityTest, EachInputThatChangesWhatIsMeasuredChangesTheHash) {
  const std::string h = Hash(base_, endpoint_, "sim/a.json");
  EXPECT_EQ(Hash(base_, endpoint_, "sim/a.json"), h) << "the same inputs, the same identity";
  StackConfig batch = base_, device = base_;
  batch.batch = 64;
  device.device = "H100";
  EndpointTarget model = endpoint_, chat = endpoint_, served = endpoint_;
  model.model = "other";
  chat.chat = true;
  served.served_models = {"another-checkpoint"};
  const std::set<std::string> hashes = {h,
                                        Hash(batch, endpoint_, "sim/a.json"),
                                        Hash(device, endpoint_, "sim/a.json"),
                                        Hash(base_, model, "sim/a.json"),
                                        Hash(base_, chat, "sim/a.json"),
                                        Hash(base_, served, "sim/a.json"),
                                        Hash(base_, std::nullopt, "sim/a.json"),
                                        Hash(base_, endpoint_, "sim/b.json")};
  EXPECT_EQ(hashes.size(), 8u) << "batch, device, model, route, served model, no endpoint, profile: each its own";
  // The profile's content under the same name: an edited stand-in answers differently.
  WriteFile(dir_ / "golden/sim/a.json", R"({"accuracy": 0.95})");
  EXPECT_NE(Hash(base_, endpoint_, "sim/a.json"), h);
}

// A profile the identity cannot read is an error naming it, never an identity without it
// (which would pair runs of two different stand-ins): a missing file and a malformed one.
TEST_F(RunIdentityTest, AProfileThatCannotBeReadIsAnErrorNamingIt) {
  WriteFile(dir_ / "golden/sim/bad.json", R"({"accuracy": )");
  for (const std::string name : {"sim/missing.json", "sim/bad.json"}) {
    SCOPED_TRACE(name);
    auto id = MakeRunIdentity(base_, endpoint_, {TableWithProfile("sim/a.json"), TableWithProfile(name)});
    ASSERT_FALSE(id.ok());
    EXPECT_NE(id.error().message.find(name), std::string::npos) << id.error().message;
  }
}

// A server that does not list its models (no /v1/models: served_models empty) is keyed by
// the requested model alone, with no served_models key at all: the same identity as a run
// stored before the served models were recorded, so its nights keep pairing.
TEST_F(RunIdentityTest, AServerThatListsNoModelsIsKeyedByTheRequestedModelAlone) {
  const auto id = MakeRunIdentity(base_, endpoint_, {TableWithProfile("sim/a.json")});
  ASSERT_TRUE(id.ok());
  EXPECT_FALSE(id->json["endpoint"].contains("served_models")) << id->json.dump();
  EXPECT_EQ(id->json["endpoint"]["model"], "m");
  // The stored identities of every earlier nightly were hashed from these keys: a renamed
  // key would stop every new run pairing with them.
  EXPECT_EQ(id->json["endpoint"], (Json{{"model", "m"}, {"chat", false}})) << id->json.dump();
  EndpointTarget served = endpoint_;
  served.served_models = {"m"};
  const auto listed = MakeRunIdentity(base_, served, {TableWithProfile("sim/a.json")});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->json["endpoint"]["served_models"], Json::array({"m"})) << listed->json.dump();
}

// A run with no server (the embedded stack) is keyed with "endpoint": null beside the other
// three keys: the identities of every earlier nightly of it were hashed from that object, so
// a key renamed or left out would stop every new run pairing with them.
TEST_F(RunIdentityTest, ARunWithoutAServerIsKeyedByANullEndpoint) {
  const auto id = MakeRunIdentity(base_, std::nullopt, {TableWithProfile("sim/a.json")});
  ASSERT_TRUE(id.ok());
  std::vector<std::string> keys;
  for (const auto& [key, value] : id->json.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"endpoint", "format_version", "sim_profiles", "stack_config"}))
      << id->json.dump();
  EXPECT_TRUE(id->json["endpoint"].is_null()) << id->json.dump();
}

// Where and how a run ran is its context, not what it measured (store/identity_rule.h): a
// server on another port, or a fault switched on (a stand-in for a code change), pairs.
TEST_F(RunIdentityTest, TheUrlAndTheFaultsAreContextNotMeasurement) {
  StackConfig fault = base_;
  fault.faults = {"fp8-scale-unrepaired"};
  EndpointTarget url = endpoint_;
  url.base_url = "http://127.0.0.1:8000";
  const std::string h = Hash(base_, endpoint_, "sim/a.json");
  EXPECT_EQ(Hash(fault, endpoint_, "sim/a.json"), h);
  EXPECT_EQ(Hash(base_, url, "sim/a.json"), h);
  const auto id = MakeRunIdentity(fault, url, {TableWithProfile("sim/a.json")});
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->context["endpoint"]["base_url"], "http://127.0.0.1:8000") << id->context.dump();
  EXPECT_EQ(id->context["stack_config"]["faults"], Json::array({"fp8-scale-unrepaired"})) << id->context.dump();
}

TEST_F(RunIdentityTest, TheKeysVariableAndTheOrderOfFaultsChangeNothing) {
  EndpointTarget keyed = endpoint_;
  keyed.api_key_env = "OPENAI_API_KEY";
  EXPECT_EQ(Hash(base_, keyed, "sim/a.json"), Hash(base_, endpoint_, "sim/a.json"));
  StackConfig ab = base_, ba = base_;
  ab.faults = {"a", "b"};
  ba.faults = {"b", "a", "b"};
  EXPECT_EQ(Hash(ab, endpoint_, "sim/a.json"), Hash(ba, endpoint_, "sim/a.json"));
  const auto id = MakeRunIdentity(base_, endpoint_, {TableWithProfile("sim/a.json")});
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->json.dump().find("OPENAI_API_KEY"), std::string::npos);
}

TEST_F(RunIdentityTest, DescribesTheLeavesThatDiffer) {
  const auto a = MakeRunIdentity(base_, endpoint_, {TableWithProfile("sim/a.json")}).value();
  EndpointTarget model = endpoint_;
  model.model = "other";
  const auto b = MakeRunIdentity(base_, model, {TableWithProfile("sim/a.json")}).value();
  EXPECT_EQ(DescribeIdentityDifference(a.json.dump(), b.json), R"(endpoint.model: "m" -> "other")");
  EXPECT_EQ(DescribeIdentityDifference(b.json.dump(), a.json), R"(endpoint.model: "other" -> "m")")
      << "a value that sorts before the stored one differs too";
  EXPECT_EQ(DescribeIdentityDifference(a.json.dump(), a.json), "no visible difference");
}

// A list is a leaf, shown whole on one line as the message prints it (a launch's arguments).
TEST_F(RunIdentityTest, AListThatDiffersIsShownWholeOnOneLine) {
  const Json before = {{"launch", {{"args", {"--tp", "2"}}, {"port", 30000}}}};
  const Json after = {{"launch", {{"args", {"--tp", "4", "--dp", "2"}}, {"port", 30000}}}};
  EXPECT_EQ(DescribeIdentityDifference(before.dump(), after),
            R"(launch.args: ["--tp","2"] -> ["--tp","4","--dp","2"])");
}

// The description names four differences and counts the rest: four are shown whole, a fifth
// turns the fourth's place into nothing but the rest's count ("N more"), absent leaves both ways.
TEST_F(RunIdentityTest, FourDifferencesAreAllNamedMoreAreCounted) {
  const Json before = {{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}, {"gone", "x"}};
  EXPECT_EQ(DescribeIdentityDifference(before.dump(), Json{{"a", 9}, {"b", 9}, {"c", 9}, {"gone", "x"}}),
            "a: 1 -> 9; b: 2 -> 9; c: 3 -> 9; d: 4 -> (absent)");
  EXPECT_EQ(DescribeIdentityDifference(before.dump(), Json{{"a", 9}, {"b", 9}, {"c", 9}, {"new", true}}),
            "a: 1 -> 9; b: 2 -> 9; c: 3 -> 9; new: (absent) -> true; 2 more");
  EXPECT_EQ(DescribeIdentityDifference(before.dump(), Json{{"a", 1}, {"z", 0}}),
            "z: (absent) -> 0; b: 2 -> (absent); c: 3 -> (absent); d: 4 -> (absent); 1 more");
}

}  // namespace
}  // namespace harness
