// The request's mode as users type it and reports print it: the six names of `--mode` in README.md
// (train, infer, prefill|decode|generate, serve), each parsed to its own enum value and printed back unchanged.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/error.h"
#include "core/mode.h"

namespace perfcast {
namespace {

TEST(Mode, TheDocumentedNamesRoundTrip) {
  const char* documented[] = {"train", "infer", "prefill", "decode", "generate", "serve"};
  std::set<Mode> seen;
  for (const char* name : documented) {
    const Mode m = parse_mode(name);
    EXPECT_EQ(mode_name(m), name);
    seen.insert(m);
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(Mode::kCount)) << "every mode has a documented name";
}

// README: prefill, decode and generate are one language-model pass; serve is the request stream; train and
// infer are neither.
TEST(Mode, ServingGroups) {
  for (const char* name : {"prefill", "decode", "generate"}) {
    EXPECT_TRUE(is_llm_pass(parse_mode(name))) << name;
    EXPECT_TRUE(is_serving(parse_mode(name))) << name;
  }
  EXPECT_FALSE(is_llm_pass(Mode::kServe));
  EXPECT_TRUE(is_serving(Mode::kServe));
  for (const Mode m : {Mode::kTrain, Mode::kInfer}) {
    EXPECT_FALSE(is_llm_pass(m));
    EXPECT_FALSE(is_serving(m));
  }
}

// A typo is an InputError naming the nearest mode; names are case-sensitive, as on the command line.
TEST(Mode, TyposAreInputErrorsWithTheNearestName) {
  try {
    parse_mode("prefil");
    FAIL() << "prefil parsed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'prefill'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_mode("TRAIN"), InputError);
  EXPECT_THROW(parse_mode(""), InputError);
}

}  // namespace
}  // namespace perfcast
