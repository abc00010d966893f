#include "harness/store/bisect_evidence.h"

#include <gtest/gtest.h>

namespace harness {
namespace {

// What the bisector stores, key for key: a command's step that read a stored run (a value
// with its questions, and the exit-code series), and a session's header.
constexpr const char* kEvidence =
    R"({"case_results":[4,7],"exit_code":0,"observations":[{"questions":"10x-","series":0,"value":0.75},)"
    R"({"failed":true,"series":1}],"questions_evaluated":4,"skip":false})";
constexpr const char* kHeader =
    R"({"bad":"b","cases":["s/c_0"],"command":["sh","t.sh"],"command_timeout_s":0.0,"confidence":0.95,)"
    R"("flake_rate":0.01,"format_version":2,"full_evals":false,"good":"a","max_runs":60,"metric":"s",)"
    R"("noise_sigma":0.02,"repo":"/r","target":{"cases":["s/c_0"],"metric":"accuracy","questions":[["q1","q2"]],)"
    R"("specs":[{"higher_is_better":true,"noise_sigma":0.01},{"higher_is_better":true,"noise_sigma":0.0}],)"
    R"("status":false,"words":"accuracy of s/c_0"}})";

Json Parsed(const std::string& text) { return ParseJsonOrDiscarded(text); }

TEST(BisectEvidence, StoredEvidenceReadsBackAndWritesTheSameText) {
  auto e = StepEvidenceFromJson(Parsed(kEvidence), "t");
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_EQ(e->observations.size(), 2u);
  EXPECT_EQ(e->observations[0].questions, "10x-");
  EXPECT_DOUBLE_EQ(e->observations[0].value, 0.75);
  EXPECT_FALSE(e->observations[0].failed.has_value());
  EXPECT_EQ(e->observations[1].failed, std::optional<bool>(true));
  EXPECT_EQ(e->observations[1].series, 1);
  EXPECT_EQ(e->exit_code, std::optional<int64_t>(0));
  EXPECT_EQ(e->case_results, (std::vector<int64_t>{4, 7}));
  EXPECT_EQ(e->questions_evaluated, std::optional<int64_t>(4));
  EXPECT_EQ(ToJson(*e).dump(), kEvidence);
  // A step of the store alone: no exit code, no count; skip and observations always written.
  EXPECT_EQ(ToJson(StepEvidence{.skip = true}).dump(), R"({"observations":[],"skip":true})");
}

TEST(BisectEvidence, StoredHeaderReadsBackAndWritesTheSameText) {
  auto h = BisectSessionHeaderFromJson(Parsed(kHeader), "t");
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->max_runs, std::optional<int64_t>(60));
  EXPECT_FALSE(h->command_timeout_s.has_value()) << "0 is how a log says none";
  ASSERT_TRUE(h->target.has_value());
  EXPECT_EQ(h->target->questions, (std::vector<std::vector<std::string>>{{"q1", "q2"}}));
  EXPECT_EQ(h->target->specs.size(), 2u);
  EXPECT_EQ(ToJson(*h).dump(), kHeader);
}

// The watched paths are logged only when there are some: a header without them writes the
// same text as before they existed.
TEST(BisectEvidence, WatchedPathsAreLoggedWhenThereAreSome) {
  auto h = BisectSessionHeaderFromJson(Parsed(kHeader), "t");
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(h->watch.empty());
  h->watch = {"kernels/", "odd \"dir\""};
  const Json j = ToJson(*h);
  EXPECT_EQ(j["watch"], (Json{"kernels/", "odd \"dir\""}));
  auto back = BisectSessionHeaderFromJson(j, "t");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->watch, h->watch);
  auto bad = BisectSessionHeaderFromJson(Parsed(R"({"format_version":2,"watch":[7]})"), "f:1");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("f:1: watch"), std::string::npos) << bad.error().message;
}

TEST(BisectEvidence, FieldsLeftOutAreAbsentAndFormatOneNamesOneCase) {
  auto h = BisectSessionHeaderFromJson(Parsed(R"({"format_version":1,"case":"s/c_1","command_timeout_s":30})"), "t");
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->cases, (std::vector<std::string>{"s/c_1"}));
  EXPECT_EQ(h->command_timeout_s, std::optional<double>(30));
  EXPECT_FALSE(h->max_runs || h->confidence || h->flake_rate || h->noise_sigma || h->target);
  auto e = StepEvidenceFromJson(Parsed("{}"), "t");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_TRUE(e->observations.empty());
  EXPECT_FALSE(e->skip || e->exit_code || e->questions_evaluated);
}

// Each malformed field is an input error (exit 2) naming its origin and its path.
TEST(BisectEvidence, AMalformedFieldIsRefusedNamingItsPlace) {
  const std::pair<const char*, const char*> evidence[] = {
      {R"({"observations":"x"})", "f:3: evidence.observations: expected a list of objects"},
      {R"({"observations":[5]})", "f:3: evidence.observations[0]: expected an object"},
      {R"({"observations":[{"series":"one","value":1}]})", "f:3: evidence.observations[0].series: expected an integer"},
      {R"({"observations":[{"series":-1,"value":1}]})", "evidence.observations[0].series"},
      {R"({"observations":[{"series":0,"failed":1}]})", "evidence.observations[0].failed: expected true or false"},
      {R"({"observations":[{"series":0,"value":"high"}]})", "evidence.observations[0].value: expected a number"},
      {R"({"observations":[{"series":0,"value":1,"questions":[1]}]})", "evidence.observations[0].questions"},
      {R"({"observations":[{"series":0,"valeu":1}]})", "evidence.observations[0].valeu: unknown field"},
      {R"({"skip":0})", "evidence.skip: expected true or false"},
      {R"({"skipp":true})", "evidence.skipp: unknown field"},
      {R"({"case_results":["a"]})", "evidence.case_results: expected a list of integers"},
      {R"({"exit_code":1.5})", "evidence.exit_code: expected an integer"},
      {R"({"questions_evaluated":"4"})", "evidence.questions_evaluated: expected an integer"},
      {R"([])", "f:3: evidence: expected an object"},
  };
  for (const auto& [text, message] : evidence) {
    auto e = StepEvidenceFromJson(Parsed(text), "f:3");
    ASSERT_FALSE(e.ok()) << text;
    EXPECT_EQ(e.error().code, ExitCode::kUsage) << text;
    EXPECT_NE(e.error().message.find(message), std::string::npos) << text << ": " << e.error().message;
  }
  const std::pair<const char*, const char*> header[] = {
      {R"({"format_version":3})", "f:1: format_version"},
      {R"({"good":"a"})", "f:1: format_version"},
      {R"({"format_version":2,"max_runs":"sixty"})", "f:1: max_runs: expected an integer"},
      {R"({"format_version":2,"cases":"s/c_0"})", "f:1: cases: expected a list of strings"},
      {R"({"format_version":2,"target":[]})", "f:1: target: expected an object"},
      {R"({"format_version":2,"target":{"specs":[true]}})", "f:1: target.specs[0]: expected an object"},
      {R"({"format_version":2,"target":{"specs":[{"noise_sigma":"x"}]}})", "f:1: target.specs[0].noise_sigma"},
      {R"({"format_version":2,"target":{"cases":["a"],"questions":[["q"],["r"]]}})", "f:1: target.questions"},
      {R"({"format_version":2,"target":{"status":"yes"}})", "f:1: target.status: expected true or false"},
  };
  for (const auto& [text, message] : header) {
    auto h = BisectSessionHeaderFromJson(Parsed(text), "f:1");
    ASSERT_FALSE(h.ok()) << text;
    EXPECT_EQ(h.error().code, ExitCode::kUsage) << text;
    EXPECT_NE(h.error().message.find(message), std::string::npos) << text << ": " << h.error().message;
  }
}

}  // namespace
}  // namespace harness
