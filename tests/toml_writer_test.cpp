// toml_text (src/core/toml_writer.h): floats in their shortest round-trip form, everything else as toml++ writes it.
#include "core/toml_writer.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

using namespace perfcast;

namespace {

toml::table read_back(const std::string& text) { return toml::parse(text); }

}  // namespace

TEST(TomlText, FloatsReadBackToTheSameDoubleInTheirShortestForm) {
  toml::table t;
  t.insert_or_assign("fp64_tflops", 9.7);
  t.insert_or_assign("sum", 0.1 + 0.2);  // no shorter decimal reads back to this double
  t.insert_or_assign("whole", 2.0);
  t.insert_or_assign("huge", 1.5e300);
  t.insert_or_assign("tiny", -3.25e-9);
  t.insert_or_assign("count", 80);
  t.insert_or_assign("note", "9.6999999999999993, kept as written");
  t.insert_or_assign("list", toml::array{0.7, 1.1, 3});
  toml::table sub;
  sub.insert_or_assign("dram_efficiency", 0.8);
  t.insert_or_assign("measured", sub);
  const std::string text = toml_text(t);
  EXPECT_NE(text.find("fp64_tflops = 9.7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("sum = 0.30000000000000004\n"), std::string::npos) << text;
  EXPECT_NE(text.find("whole = 2.0\n"), std::string::npos) << text;  // still a float, not the integer 2
  EXPECT_NE(text.find("dram_efficiency = 0.8\n"), std::string::npos) << text;
  EXPECT_NE(text.find("9.6999999999999993, kept as written"), std::string::npos) << text;  // strings untouched
  const toml::table back = read_back(text);
  EXPECT_EQ(back["fp64_tflops"].value<double>(), 9.7);
  EXPECT_EQ(back["sum"].value<double>(), 0.1 + 0.2);
  EXPECT_TRUE(back["whole"].is_floating_point());
  EXPECT_EQ(back["huge"].value<double>(), 1.5e300);
  EXPECT_EQ(back["tiny"].value<double>(), -3.25e-9);
  EXPECT_TRUE(back["count"].is_integer());
  EXPECT_EQ(back["list"][0].value<double>(), 0.7);
  EXPECT_EQ(back["list"][1].value<double>(), 1.1);
  EXPECT_TRUE(back["list"][2].is_integer());
  EXPECT_EQ(back["measured"]["dram_efficiency"].value<double>(), 0.8);
}
