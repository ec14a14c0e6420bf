// One vocabulary in every command's --json (docs/json.md): a fact has one key name across predict, compare, plan
// (with and without --layouts), predict --mode serve and validate, and a key renamed to that name keeps its old
// name beside it, with the same value, for one release. The expectations come from outside the code under test:
// two commands asked about the same setup must report the same figure under the same name; the flags say how many
// GPUs a layout uses; docs/json.md lists every alias.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "report/json_vocabulary.h"
#include "test_paths.h"

namespace perfcast {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::CliResult;

class JsonVocabularyTest : public test::ScratchDirTest {
 protected:
  JsonVocabularyTest() : ScratchDirTest("perfcast-json-vocabulary") {}

  json run_json(const std::string& args) const {
    const CliResult r = run(args + " --json");
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
    return r.code == 0 ? json::parse(r.out) : json();
  }
};

// Every object of `j`, however deep.
void each_object(const json& j, const std::function<void(const json&)>& f) {
  if (j.is_object()) {
    f(j);
    for (const auto& [k, v] : j.items()) each_object(v, f);
  } else if (j.is_array()) {
    for (const auto& v : j) each_object(v, f);
  }
}

// The commands of the README's examples and the brief's walk-through, one setup each.
const std::vector<std::string>& commands() {
  static const std::vector<std::string> c = {
      "predict --gpu h100-sxm5-80gb --model resnet50 --mode train --precision amp --batch 128",
      "compare --gpu h100-sxm5-80gb,a100-sxm4-80gb:8 --model resnet50 --mode train --precision amp --batch 128",
      "compare --gpu l4,h100-sxm5-80gb --model llama-3-8b --mode decode --precision fp16 --batch 1 --seq 128",
      "predict --gpu h100-sxm5-80gb --gpus 8 --model llama-3-8b --precision amp-bf16 --zero 2 --micro-batch 2 "
      "--train-tokens 1e10",
      "plan --layouts --gpu h100-sxm5-80gb --gpus 8 --model llama-3-8b --train-tokens 1e10 --top 1",
      "plan --layouts --gpu h100-sxm5-80gb --gpus 8 --model llama-3-8b --train-tokens 1e10 --top 1 --deadline 30d "
      "--budget 1e6",
      "predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --tp 2 --engine vllm --input-len 256 "
      "--output-len 64 --num-requests 50 --request-rate 4",
      "compare --device xeon-platinum-8380,a100-sxm4-40gb --model resnet50 --mode infer --batch 1",
  };
  return c;
}

TEST_F(JsonVocabularyTest, EveryDeprecatedAliasHoldsItsNewKeysValue) {
  std::set<std::string> seen;
  const auto check = [&](const json& out, const std::string& what) {
    each_object(out, [&](const json& o) {
      for (const DeprecatedKey& d : deprecated_keys()) {
        const std::string old_key(d.old_key), key(d.key);
        if (!o.contains(old_key)) continue;
        seen.insert(old_key);
        ASSERT_TRUE(o.contains(key)) << what << ": '" << old_key << "' without '" << key << "'";
        // A figure that does not exist is null under the new name; the old name keeps what it wrote before the
        // rename ("" or 0) so that its readers do not break (docs/json.md).
        if (o[key].is_null())
          EXPECT_TRUE(o[old_key].is_null() || o[old_key] == "" || o[old_key] == 0) << what << ": " << old_key;
        else
          EXPECT_EQ(o[old_key], o[key]) << what << ": " << old_key;
      }
    });
  };
  for (const auto& c : commands()) check(run_json(c), c);
  // validate: one row of a measurement file, written here (a published ResNet-50 figure's shape, not its value).
  test::write_text(dir_ / "one.csv",
                   "gpu,model,runtime,mode,precision,batch,metric,value,source\n"
                   "v100-sxm2-16gb,resnet50,pytorch,train,amp,64,samples_per_s,1000,test\n");
  check(run_json("validate one.csv"), "validate");
  for (const DeprecatedKey& d : deprecated_keys())
    EXPECT_TRUE(seen.count(std::string(d.old_key))) << "no output above writes the alias '" << d.old_key << "'";
}

TEST_F(JsonVocabularyTest, DocsListEveryAlias) {
  const std::string doc = test::slurp(fs::path(PERFCAST_SOURCE_DIR) / "docs" / "json.md");
  ASSERT_FALSE(doc.empty());
  for (const DeprecatedKey& d : deprecated_keys()) {
    const std::string row = "| `" + std::string(d.old_key) + "` | `" + std::string(d.key) + "` |";
    EXPECT_NE(doc.find(row), std::string::npos) << "docs/json.md has no row " << row;
  }
}

TEST_F(JsonVocabularyTest, PredictAndCompareNameTheSameStepsPowerAlike) {
  // The same model, GPU, precision and batch: compare's row is predict's prediction, so every shared fact is equal.
  const std::string setup = "--model resnet50 --mode train --precision amp --batch 128";
  const json p = run_json("predict --gpu h100-sxm5-80gb " + setup);
  const json c = run_json("compare --gpu h100-sxm5-80gb " + setup);
  ASSERT_TRUE(p["power"].is_object());
  ASSERT_EQ(c.size(), 1u);
  const json& row = c[0];
  EXPECT_EQ(row["avg_power_w"], p["power"]["avg_power_w"]);
  EXPECT_EQ(row["samples_per_joule"], p["power"]["samples_per_joule"]);
  EXPECT_EQ(row["samples_per_s"], p["throughput"]["samples_per_s"]);
  EXPECT_EQ(row["step_ms"], p["step_ms"]);
  // A GPU's board power lies between nothing and the H100 SXM's 700 W limit (NVIDIA datasheet).
  EXPECT_GT(row["avg_power_w"].get<double>(), 0);
  EXPECT_LE(row["avg_power_w"].get<double>(), 700.0);
}

// A CPU has no board power: predict writes `power: null`, and compare's row for it says the same with `avg_power_w`
// null (the package's TDP is `package_power_w`), not 0 W.
TEST_F(JsonVocabularyTest, ACpuHasNoBoardPowerInPredictOrCompare) {
  const std::string setup = "--model resnet50 --mode infer --batch 1";
  const json p = run_json("predict --device xeon-platinum-8380 " + setup);
  const json c = run_json("compare --device xeon-platinum-8380 " + setup);
  EXPECT_TRUE(p["power"].is_null());
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(c[0]["avg_power_w"].is_null());
}

TEST_F(JsonVocabularyTest, DecodeTimePerOutputTokenIsOneKey) {
  const std::string setup = "--model llama-3-8b --mode decode --precision fp16 --batch 1 --seq 128";
  const json p = run_json("predict --gpu l4 " + setup);
  const json c = run_json("compare --gpu l4 " + setup);
  ASSERT_TRUE(p["llm"].is_object());
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0]["time_per_output_token_ms"], p["llm"]["time_per_output_token_ms"]);
  EXPECT_EQ(c[0]["tokens_per_s"], p["throughput"]["tokens_per_s"]);
}

TEST_F(JsonVocabularyTest, PlanAndCompareNameOneRentedRunAlike) {
  // One instance of one GPU: plan's only option and compare's row rent the same instance for the same epoch, so
  // the instance, hours, dollars, energy and per-GPU power are one fact each, named alike.
  test::write_text(dir_ / "one.toml", R"([[instance]]
id = "one-box"
provider = "lambda"
gpu = "gtx-1080-ti"
gpus = 1
interconnect = "pcie3"
on_demand_usd_per_hour = 1.0
on_demand_date = "2024-01"
on_demand_source = "test"
)");
  const std::string setup = "--model resnet50 --mode train --precision amp --batch 64 --prices one.toml";
  const json plan = run_json("plan --deadline 1000h --max-gpus 1 " + setup);
  const json cmp = run_json("compare --gpu gtx-1080-ti " + setup);
  const json p = run_json("predict --gpu gtx-1080-ti --model resnet50 --mode train --precision amp --batch 64");
  ASSERT_EQ(plan["options"].size(), 1u) << plan.dump();
  ASSERT_EQ(cmp.size(), 1u);
  const json& o = plan["options"][0];
  const json& run = cmp[0]["run"];
  EXPECT_EQ(o["instance"], "one-box");
  EXPECT_EQ(run["instance"], o["instance"]);
  for (const char* key : {"hours", "billed_hours", "usd_on_demand", "energy_kwh", "server_energy_kwh", "pue",
                          "facility_energy_kwh", "host_power_w", "host_rule"}) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(run.contains(key) && o.contains(key));
    if (run[key].is_number())
      EXPECT_NEAR(run[key].get<double>(), o[key].get<double>(), 1e-9 * std::abs(o[key].get<double>()));
    else
      EXPECT_EQ(run[key], o[key]);
  }
  EXPECT_NEAR(o["avg_power_w"].get<double>(), p["power"]["avg_power_w"].get<double>(),
              1e-9 * p["power"]["avg_power_w"].get<double>());
  EXPECT_NEAR(cmp[0]["avg_power_w"].get<double>(), p["power"]["avg_power_w"].get<double>(),
              1e-9 * p["power"]["avg_power_w"].get<double>());
  EXPECT_EQ(o["gpus_total"], 1);
  EXPECT_EQ(cmp[0]["gpus_total"], 1);
}

TEST_F(JsonVocabularyTest, LayoutsAndPredictNameOneLayoutsRunAlike) {
  const json plan = run_json("plan --layouts --gpu h100-sxm5-80gb --gpus 8 --model llama-3-8b --train-tokens 1e10 --top 1");
  ASSERT_FALSE(plan["layouts"].empty());
  const json& l = plan["layouts"][0];
  // --gpus 8 on one node: eight GPUs in all (the flags, not the code, say so).
  EXPECT_EQ(plan["gpus_total"], 8);
  EXPECT_EQ(l["gpus_total"], 8);
  std::string flags = " --gpus 8 --tp " + std::to_string(l["tp"].get<int>()) + " --pp " +
                      std::to_string(l["pp"].get<int>()) + " --zero " + std::to_string(l["zero"].get<int>()) +
                      " --micro-batch " + std::to_string(l["micro_batch"].get<std::int64_t>()) + " --global-batch " +
                      std::to_string(l["global_batch"].get<std::int64_t>()) + " --recompute " +
                      l["recompute"].get<std::string>();
  if (l["layout"].get<std::string>().find("overlap") != std::string::npos) flags += " --overlap-grad-reduce";
  const json p = run_json("predict --gpu h100-sxm5-80gb --model llama-3-8b --mode train --precision amp-bf16 "
                          "--train-tokens 1e10" + flags);
  ASSERT_TRUE(p["parallel_training"].is_object());
  const json& pt = p["parallel_training"];
  for (const char* key : {"instance", "hours", "usd_on_demand", "gpus_total", "usd_per_gpu_hour"}) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(pt.contains(key) && l.contains(key));
    EXPECT_EQ(pt[key], l[key]);
  }
  EXPECT_EQ(p["power"]["avg_power_w"], l["avg_power_w"]);
  EXPECT_EQ(p["power"]["energy_per_step_j"], l["energy_per_step_j"]);
}

TEST_F(JsonVocabularyTest, ServeAndValidateNameTheirPartsAsPredictDoes) {
  // --tp 2 --pp 1: two GPUs (the flags).
  const json s = run_json("predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --tp 2 --engine vllm "
                          "--input-len 256 --output-len 64 --num-requests 50 --request-rate 4");
  EXPECT_EQ(s["tp"], 2);
  EXPECT_EQ(s["pp"], 1);
  EXPECT_EQ(s["gpus_total"], 2);
  // validate's row is predict's prediction for the setup the row names (its host and runtime version printed beside).
  test::write_text(dir_ / "one.csv",
                   "gpu,model,runtime,mode,precision,batch,metric,value,source\n"
                   "v100-sxm2-16gb,resnet50,pytorch,train,amp,64,samples_per_s,1000,test\n");
  const json v = run_json("validate one.csv");
  ASSERT_EQ(v["rows"].size(), 1u);
  const json& row = v["rows"][0];
  const json p = run_json("predict --gpu v100-sxm2-16gb --model resnet50 --runtime pytorch --mode train --precision amp "
                          "--batch 64 --host " + row["host"].get<std::string>() + " --runtime-version " +
                          row["runtime_version"].get<std::string>());
  EXPECT_EQ(row["gpu_busy_ms"], p["gpu_busy_ms"]);
  EXPECT_EQ(row["host_dispatch_ms"], p["host_dispatch_ms"]);
  EXPECT_EQ(row["predicted"], p["throughput"]["samples_per_s"]);
}

TEST_F(JsonVocabularyTest, LayoutsAndServeReadInChinese) {
  // --lang zh: the headings, legend and units of plan --layouts and predict --mode serve come from the message
  // table; the English words of the old texts do not appear.
  const CliResult l = run("plan --layouts --gpu h100-sxm5-80gb --gpus 8 --model llama-3-8b --train-tokens 1e10 --top 1 "
                          "--deadline 30d --lang zh");
  ASSERT_EQ(l.code, 0) << l.err;
  for (const char* english : {"Training layouts", "fastest first", "Fastest layout per node count", "priced on",
                              "MFU = tokens/s/GPU", "meets the deadline", "GPU-h"})
    EXPECT_EQ(l.out.find(english), std::string::npos) << english << "\n" << l.out;
  EXPECT_NE(l.out.find("训练布局"), std::string::npos) << l.out;
  const CliResult s = run("predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --tp 2 --engine vllm "
                          "--input-len 256 --output-len 64 --num-requests 50 --request-rate 4 --lang zh");
  ASSERT_EQ(s.code, 0) << s.err;
  for (const char* english : {"perfcast serving", "workload:", "memory per GPU", "decode step", "throughput",
                              "end to end", "legend:", "not predicted"})
    EXPECT_EQ(s.out.find(english), std::string::npos) << english << "\n" << s.out;
  // The JSON does not change with the language (README, "Every command that reports").
  EXPECT_EQ(run("predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --tp 2 --engine vllm --input-len 256 "
                "--output-len 64 --num-requests 50 --request-rate 4 --json --lang zh").out,
            run("predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --tp 2 --engine vllm --input-len 256 "
                "--output-len 64 --num-requests 50 --request-rate 4 --json").out);
}

}  // namespace
}  // namespace perfcast
