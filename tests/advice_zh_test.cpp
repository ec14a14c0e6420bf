// `perfcast advise --lang zh` words every strategy that does not apply in Chinese, from the reason code and facts
// the library gives (core/error.h ReasonCode): INT8 training, BF16/TF32/FP8 without the tensor cores, channels-last
// without tensor-core convolutions, runtimes that already fuse, synthetic data, memory that does not fit, LLM weight
// types and runtimes, links a GPU does not have. The English sentence stays the library's own text, word for word,
// and the Chinese one names the same GPU, precision, architecture and numbers.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/advisor.h"
#include "cli_runner.h"
#include "device/catalog.h"
#include "report/advice_report.h"
#include "report/messages.h"
#include "schedule/collectives.h"

namespace perfcast {
namespace {

using test::CliResult;
using test::lines_of;

PredictRequest request(const std::string& model, const std::string& gpu, const std::string& mode = "train",
                       const std::string& precision = "fp32", std::int64_t batch = 64) {
  PredictRequest r;
  r.model = model;
  r.gpu = gpu;
  r.mode = parse_mode(mode);
  r.precision = precision;
  r.batch = batch;
  return r;
}

// True when `text` holds a CJK ideograph (U+4E00..U+9FFF, three UTF-8 bytes from 0xE4 to 0xE9).
bool has_cjk(std::string_view text) {
  for (std::size_t i = 0; i + 2 < text.size(); ++i) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    if (b0 < 0xE4 || b0 > 0xE9) continue;
    const unsigned cp = ((b0 & 0x0Fu) << 12) | ((static_cast<unsigned char>(text[i + 1]) & 0x3Fu) << 6) |
                        (static_cast<unsigned char>(text[i + 2]) & 0x3Fu);
    if (cp >= 0x4E00 && cp <= 0x9FFF) return true;
  }
  return false;
}

// An English sentence left in the text: four or more lowercase ASCII words in a row ("is not supported on").
// Ids such as q4_k_m, sm_61 or fp16 are not words: a word is letters only, bounded by neither letter, digit nor _.
bool has_english_run(const std::string& text) {
  static const std::regex run("(^|[^A-Za-z0-9_])[a-z]+( [a-z]+){3}([^A-Za-z0-9_]|$)");
  return std::regex_search(text, run);
}

// The tokens of an English reason that carry a digit (gtx-1080-ti, sm_61, 15.8, q4_0): ids and numbers, which
// the Chinese sentence must repeat as they are.
std::vector<std::string> ids_and_numbers(const std::string& english) {
  static const std::regex token("[A-Za-z0-9_.-]*[0-9][A-Za-z0-9_.-]*");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(english.begin(), english.end(), token); it != std::sregex_iterator(); ++it) {
    std::string t = it->str();
    while (!t.empty() && (t.back() == '.' || t.back() == '-')) t.pop_back();  // sentence punctuation
    if (!t.empty()) out.push_back(t);
  }
  return out;
}

// The {name} placeholders of a message template.
std::set<std::string> facts_named(std::string_view sentence) {
  static const std::regex named("\\{([a-z_]+)\\}");
  const std::string s(sentence);
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), named); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1].str());
  return out;
}

// The lines of the report's "not applicable" section, by strategy id.
std::map<std::string, std::string> not_applicable_lines(const std::string& report, Lang lang) {
  std::map<std::string, std::string> out;
  bool in_section = false;
  for (const auto& line : lines_of(report)) {
    if (line == msg("not_applicable", lang)) {
      in_section = true;
      continue;
    }
    if (!in_section) continue;
    if (line.empty()) break;
    const auto start = line.find_first_not_of(' ');
    const auto end = line.find(' ', start);
    out[line.substr(start, end - start)] = line;
  }
  return out;
}

// Scenarios that between them reach every reason an advice can give for a strategy that does not apply.
std::vector<PredictRequest> scenarios() {
  std::vector<PredictRequest> s;
  s.push_back(request("resnet50", "gtx-1080-ti"));                      // INT8 training, BF16/TF32 on sm_61, NHWC
  s.push_back(request("resnet50", "gtx-1080-ti", "train", "fp32", 0));  // the batch is already the largest
  s.push_back(request("resnet50", "p100-pcie-16gb", "infer"));          // INT8 without dp4a, checkpointing
  s.push_back(request("resnet50", "a100-sxm4-40gb", "train", "fp32"));
  s.back().runtime = "tensorflow-xla";  // already fuses; the layout pass keeps a TF32 graph NCHW
  s.push_back(request("resnet50", "a100-sxm4-40gb", "train", "amp"));
  s.back().runtime = "tensorflow-xla";                // already NHWC under mixed precision
  s.push_back(request("bert_large", "gtx-1080-ti"));  // does not fit
  s.push_back(request("nodule3d", "gtx-1080-ti", "train", "fp32", 4));
  s.back().data = "real-augmented";  // GPU decoding needs JPEG
  s.back().host = "cloud-8vcpu";
  s.push_back(request("llama-2-7b", "a100-sxm4-80gb", "decode", "fp16", 1));  // weight types, FP8 by runtime
  s.push_back(request("llama-2-7b", "tesla-p40", "prefill", "q4_k_m", 1));    // GGUF on llama.cpp only
  s.back().runtime = "llama.cpp";
  return s;
}

// ---------------------------------------------------------------- the report in Chinese

TEST(AdviceZh, NotApplicableReasonsOnGp102AreChinese) {
  // ResNet-50 training on a GTX 1080 Ti: INT8 is for inference, BF16 and TF32 need sm_80 tensor cores, sm_61 has
  // no tensor-core convolutions for channels-last, synthetic data has no input pipeline.
  const Advice a = advise(request("resnet50", "gtx-1080-ti"));
  const auto zh = not_applicable_lines(advice_text(a, Lang::kZh), Lang::kZh);
  const auto en = not_applicable_lines(advice_text(a, Lang::kEn), Lang::kEn);
  for (const std::string id : {"int8", "amp-bf16", "tf32", "channels-last", "data-loader-workers"}) {
    ASSERT_TRUE(zh.contains(id)) << id << " is not in the not-applicable section";
    const std::string& line = zh.at(id);
    EXPECT_TRUE(has_cjk(line.substr(line.find(id) + id.size()))) << line;
    EXPECT_FALSE(has_english_run(line)) << "an English sentence is left in: " << line;
    for (const auto& token : ids_and_numbers(en.at(id)))
      EXPECT_NE(line.find(token), std::string::npos) << "'" << token << "' of the English reason is lost: " << line;
  }
  EXPECT_NE(zh.at("int8").find("'int8'"), std::string::npos) << zh.at("int8");
  EXPECT_NE(zh.at("amp-bf16").find("gtx-1080-ti（sm_61）"), std::string::npos) << zh.at("amp-bf16");
  EXPECT_NE(zh.at("amp-bf16").find("BF16"), std::string::npos) << zh.at("amp-bf16");
  EXPECT_NE(zh.at("amp-bf16").find("sm_80"), std::string::npos) << zh.at("amp-bf16");
}

TEST(AdviceZh, EveryNotApplicableStrategyHasACodeAndBothSentences) {
  // Across scenarios that reach every kind of reason: each strategy that does not apply carries a code, its
  // English sentence is the library's text word for word, and its Chinese sentence has no English left in it.
  std::set<std::string> seen;
  for (const auto& r : scenarios()) {
    const Advice a = advise(r);
    for (const auto& st : a.strategies) {
      if (st.applicable) continue;
      const std::string where = r.model + " on " + r.gpu + " " + mode_string(r.mode) + ", " + st.id + ": " + st.reason;
      ASSERT_FALSE(st.reason_code.id.empty()) << "no reason code: " << where;
      seen.insert(st.reason_code.id);
      EXPECT_EQ(reason_text(st.reason_code, Lang::kEn), st.reason) << where;
      const std::string zh = reason_text(st.reason_code, Lang::kZh);
      EXPECT_TRUE(has_cjk(zh)) << zh << " <- " << where;
      EXPECT_FALSE(has_english_run(zh)) << zh << " <- " << where;
      for (const auto& token : ids_and_numbers(st.reason))
        EXPECT_NE(zh.find(token), std::string::npos) << "'" << token << "' lost: " << zh << " <- " << where;
    }
  }
  for (const char* code :
       {"precision.inference_only", "precision.needs_tensor_cores", "precision.needs_int8",
        "precision.unsupported_by_runtime", "memory.does_not_fit", "layout.no_convolutions", "batch.already_largest", "checkpointing.training_only", "fusion.already_fused",
        "layout.runtime_nhwc", "layout.runtime_picks_by_precision", "layout.no_tensor_cores", "input.synthetic", "input.not_jpeg"})
    EXPECT_TRUE(seen.contains(code)) << code << " is reached by none of the scenarios";
}

TEST(AdviceZh, EveryReasonCodeNamesTheSameFactsInBothLanguages) {
  const auto codes = reason_codes();
  ASSERT_GE(codes.size(), 20u);
  for (const auto& code : codes) {
    const std::string_view en = msg("reason." + code, Lang::kEn);
    const std::string_view zh = msg("reason." + code, Lang::kZh);
    EXPECT_EQ(facts_named(en), facts_named(zh)) << code;
    EXPECT_TRUE(has_cjk(zh)) << code << ": " << zh;
    EXPECT_FALSE(has_english_run(std::string(zh))) << code << ": " << zh;
  }
}

TEST(AdviceZh, LibraryErrorsCarryTheirCode) {
  // Links a GPU does not have, from the scale-out model: the code renders back to the exception's own text.
  struct Case {
    const char* gpu;
    const char* link;
    const char* code;
  };
  for (const Case& c :
       {Case{"gtx-1080-ti", "nvlink", "interconnect.no_nvlink"}, Case{"gtx-1080-ti", "pcie4", "interconnect.pcie_gen"},
        Case{"rtx-3090", "nvswitch", "interconnect.needs_sxm"},
        Case{"v100-sxm2-16gb", "nvlink-bridge", "interconnect.bridge_on_sxm"},
        Case{"v100-sxm2-16gb", "nvswitch", "interconnect.no_nvswitch"}}) {
    try {
      check_interconnect(find_gpu(c.gpu), c.link);
      ADD_FAILURE() << c.gpu << " accepted --interconnect " << c.link;
    } catch (const InputError& e) {
      EXPECT_EQ(e.reason().id, c.code) << e.what();
      EXPECT_EQ(reason_text(e.reason(), Lang::kEn), e.what());
      const std::string zh = reason_text(e.reason(), Lang::kZh);
      EXPECT_TRUE(has_cjk(zh)) << zh;
      EXPECT_NE(zh.find(c.gpu), std::string::npos) << zh;
    }
  }
}

TEST(AdviceZh, AMessageWithoutACodeKeepsItsEnglish) {
  // Free text from deep in the library has no sentence to word it in; so has a code whose facts are missing.
  EXPECT_EQ(reason_text(ReasonCode{}, Lang::kZh), "");
  EXPECT_EQ(reason_text(ReasonCode{"no.such_code", {}}, Lang::kZh), "");
  EXPECT_EQ(reason_text(ReasonCode{"memory.does_not_fit", {{"needs_gib", "3.0"}}}, Lang::kZh), "");
  StrategyResult st;
  st.id = "fusion";
  st.reason = "some message the advisor has no code for";
  Advice a = advise(request("resnet50", "gtx-1080-ti"));
  a.strategies.push_back(st);
  const auto zh = not_applicable_lines(advice_text(a, Lang::kZh), Lang::kZh);
  EXPECT_NE(zh.at("fusion").find("不适用：some message the advisor has no code for"), std::string::npos);
}

// ---------------------------------------------------------------- the command line

class AdviceZhCliTest : public test::ScratchDirTest {
 protected:
  AdviceZhCliTest() : ScratchDirTest("perfcast-advice-zh") {}
};

TEST_F(AdviceZhCliTest, Gp102ReportIsChineseAndEnglishIsUnchanged) {
  const CliResult zh = run("advise --model resnet50 --gpu gtx-1080-ti --lang zh");
  const CliResult en = run("advise --model resnet50 --gpu gtx-1080-ti --lang en");
  ASSERT_EQ(zh.code, 0) << zh.err;
  ASSERT_EQ(en.code, 0) << en.err;
  const auto zh_lines = not_applicable_lines(zh.out, Lang::kZh);
  const auto en_lines = not_applicable_lines(en.out, Lang::kEn);
  ASSERT_TRUE(zh_lines.contains("int8")) << zh.out;
  ASSERT_TRUE(zh_lines.contains("amp-bf16")) << zh.out;
  for (const auto& [id, line] : zh_lines) {
    EXPECT_TRUE(has_cjk(line.substr(line.find(id) + id.size()))) << line;
    EXPECT_FALSE(has_english_run(line)) << line;
  }
  // The English report still says it in the library's words.
  EXPECT_NE(en_lines.at("int8").find("precision 'int8' is for inference only; training needs fp32, tf32, amp, "
                                     "amp-bf16, fp16 or bf16"),
            std::string::npos);
  EXPECT_NE(en_lines.at("amp-bf16")
                .find("precision 'amp-bf16' is not supported on gtx-1080-ti (sm_61): it needs "
                      "BF16 tensor cores (sm_80 or newer)"),
            std::string::npos);
}

TEST_F(AdviceZhCliTest, JsonCarriesTheReasonCode) {
  const CliResult r = run("advise --model resnet50 --gpu gtx-1080-ti --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& s : j["strategies"]) {
    ASSERT_TRUE(s.contains("reason_code")) << s.dump();
    ASSERT_TRUE(s.contains("reason_args")) << s.dump();
    if (s["id"] == "amp-bf16") {
      found = true;
      EXPECT_EQ(s["reason_code"], "precision.needs_tensor_cores");
      EXPECT_EQ(s["reason_args"]["gpu"], "gtx-1080-ti");
      EXPECT_EQ(s["reason_args"]["sm"], "61");
      EXPECT_EQ(s["reason_args"]["min_sm"], "80");
    }
    if (s["applicable"] == true) {
      EXPECT_TRUE(s["reason_code"].is_null()) << s.dump();
    }
  }
  EXPECT_TRUE(found) << r.out;
}

}  // namespace
}  // namespace perfcast
