// The common fields and the sections a stack table declares: which top-level keys a
// config may have, and whose environment values a stored config keeps.
#include "harness/stack/stack_config.h"

#include <gtest/gtest.h>

namespace harness::stack_config_test {

const std::vector<ConfigSection> kSections = {{"alpha", {"/alpha/env"}}, {"beta", {"/beta/launch/env"}}};

TEST(StackConfig, SectionKeysAreKnownAndOthersNamedWithTheNearest) {
  auto ok = ParseStackConfig(Json::parse(R"({"stack": "x", "alpha": {}, "beta": {"launch": {}}})"), "cfg.json", kSections);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  auto typo = ParseStackConfig(Json::parse(R"({"alhpa": {}})"), "cfg.json", kSections);
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().message, "cfg.json: alhpa: unknown field (did you mean 'alpha'?)");
  // A key no declared section owns is unknown, however a backend would read it.
  auto undeclared = ParseStackConfig(Json::parse(R"({"exec": {}})"), "cfg.json", kSections);
  ASSERT_FALSE(undeclared.ok());
  EXPECT_NE(undeclared.error().message.find("exec: unknown field"), std::string::npos) << undeclared.error().message;
}

TEST(StackConfig, EnvValuesOfDeclaredSectionsAreNotStored) {
  const Json j = Json::parse(R"({"alpha": {"env": {"TOKEN": "s3cr\"et<", "OMP_NUM_THREADS": "4"}},
                                 "beta": {"launch": {"env": {"KEY": "k"}}, "env": {"PLAIN": "v"}}})");
  auto c = ParseStackConfig(j, "cfg.json", kSections);
  ASSERT_TRUE(c.ok()) << c.error().message;
  const Json stored = c->ToJson();
  EXPECT_EQ(stored["alpha"]["env"]["TOKEN"], kEnvValueNotStored);
  EXPECT_EQ(stored["alpha"]["env"]["OMP_NUM_THREADS"], "4");
  EXPECT_EQ(stored["beta"]["launch"]["env"]["KEY"], kEnvValueNotStored);
  // Only where a section declares an environment: other objects named env are data.
  EXPECT_EQ(stored["beta"]["env"]["PLAIN"], "v");
  EXPECT_EQ(DumpJson(stored).find("s3cr"), std::string::npos);
}

}  // namespace harness::stack_config_test
