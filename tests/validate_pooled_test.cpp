// `perfcast validate FILE FILE...` (or a folder): several measurement files pooled into one report. The pooled
// figures are checked against what the single-file runs report for the same rows (a pool is the union of its
// files' rows), never against the pooled code's own output.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/validate.h"
#include "cli_runner.h"
#include "report/validation_report.h"
#include "test_paths.h"

namespace perfcast {
namespace {

const std::string kValidation = std::string(PERFCAST_SOURCE_DIR) + "/data/validation/";

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

class ValidatePooled : public test::ScratchDirTest {
 protected:
  ValidatePooled() : ScratchDirTest("perfcast-validate-pooled") {}
};

TEST_F(ValidatePooled, PooledStatisticsAreThoseOfTheUnionOfTheFilesRows) {
  const std::vector<std::string> paths{kValidation + "check_pascal.csv", kValidation + "check_pytorch.csv"};
  std::vector<ValidationReport> single;
  std::vector<double> apes;
  double ape_sum = 0;
  int rows = 0, within = 0, with_interval = 0, inside = 0;
  for (const auto& p : paths) {
    single.push_back(validate_file(p));
    for (const auto& r : single.back().rows) {
      apes.push_back(r.ape);
      ape_sum += r.ape;
      within += r.ratio >= 0.5 && r.ratio <= 2.0;
      if (r.inside) {
        ++with_interval;
        inside += *r.inside;
      }
    }
    rows += single.back().overall.rows;
  }
  const ValidationReport pool = validate_files(paths);
  EXPECT_EQ(pool.file, "2 files");
  EXPECT_EQ(pool.overall.rows, rows);
  EXPECT_EQ(pool.rows.size(), static_cast<std::size_t>(rows));
  EXPECT_DOUBLE_EQ(pool.overall.median_ape, median_of(apes));
  EXPECT_NEAR(pool.overall.mean_ape, ape_sum / rows, 1e-9);
  EXPECT_NEAR(pool.overall.within_2x, static_cast<double>(within) / rows, 1e-12);
  EXPECT_EQ(pool.overall.with_interval, with_interval);
  ASSERT_GT(with_interval, 0);
  EXPECT_NEAR(pool.overall.coverage, static_cast<double>(inside) / with_interval, 1e-12);
  // The table by file repeats each file's own figures; each row keeps its file and line.
  ASSERT_EQ(pool.files.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(pool.files[i].path, paths[i]);
    EXPECT_EQ(pool.files[i].overall.rows, single[i].overall.rows);
    EXPECT_DOUBLE_EQ(pool.files[i].overall.median_ape, single[i].overall.median_ape);
    EXPECT_DOUBLE_EQ(pool.files[i].overall.mean_ape, single[i].overall.mean_ape);
  }
  EXPECT_EQ(pool.rows.front().file, 0);
  EXPECT_EQ(pool.rows.front().result.row.line, single[0].rows.front().result.row.line);
  EXPECT_EQ(pool.rows.back().file, 1);
  EXPECT_EQ(pool.rows.back().result.row.line, single[1].rows.back().result.row.line);
  // Each GPU's group holds its rows of both files (a GPU in both is pooled, not listed twice).
  int shared = 0;
  for (const auto& [gpu, stats] : pool.by_gpu) {
    int n = 0;
    for (const auto& s : single) n += s.by_gpu.count(gpu) ? s.by_gpu.at(gpu).rows : 0;
    shared += single[0].by_gpu.count(gpu) && single[1].by_gpu.count(gpu);
    EXPECT_EQ(stats.rows, n) << gpu;
  }
  EXPECT_GT(shared, 0) << "the two files share a GPU";
  // Precision pairs: exactly the files' own, none formed across them.
  EXPECT_EQ(pool.precision_pairs.size(), single[0].precision_pairs.size() + single[1].precision_pairs.size());
  const auto json = validation_json(pool);
  EXPECT_EQ(json["files"].size(), 2u);
  EXPECT_EQ(json["rows"].front()["file"], paths[0]);
  EXPECT_EQ(json["rows"].back()["file"], paths[1]);
  const std::string md = validation_markdown(pool);
  EXPECT_NE(md.find("## Validation: 2 files pooled"), std::string::npos);
  EXPECT_NE(md.find("| file:line | gpu |"), std::string::npos);
  // Rows are named by the file's name, as the what-if pairs and `perfcast validate --pairs` name theirs.
  EXPECT_NE(md.find("| " + std::filesystem::path(paths[1]).filename().string() + ":" +
                    std::to_string(single[1].rows.back().result.row.line) + " |"),
            std::string::npos);
  EXPECT_NE(validation_summary_text(pool).find("validated " + std::to_string(rows) + " rows of 2 files"),
            std::string::npos);
}

// The same setup at fp32 in one file and at fp16 in another is no pair: pairs are formed within each file, as
// `perfcast validate --pairs` forms them. Put in one file, the two rows are one pair.
TEST_F(ValidatePooled, PrecisionPairsNeverCrossFiles) {
  const std::string header =
      "gpu,model,runtime,mode,precision,batch,seq,n_gpus,data,optimizer_step,metric,value,host,runtime_version,"
      "conv_algo\n";
  const std::string fp32 =
      "gtx-1080-ti,resnet152,pytorch,train,fp32,16,,1,synthetic,no,samples_per_s,77.52,desktop-6c,0.3,autotune\n";
  const std::string fp16 =
      "gtx-1080-ti,resnet152,pytorch,train,fp16,16,,1,synthetic,no,samples_per_s,82.69,desktop-6c,0.3,autotune\n";
  const auto a = dir_ / "a.csv", b = dir_ / "b.csv", both = dir_ / "both.csv";
  test::write_text(a, header + fp32);
  test::write_text(b, header + fp16);
  test::write_text(both, header + fp32 + fp16);
  EXPECT_EQ(validate_file(both.string()).precision_pairs.size(), 1u);
  const ValidationReport pool = validate_files({a.string(), b.string()});
  EXPECT_EQ(pool.overall.rows, 2);
  EXPECT_TRUE(pool.precision_pairs.empty());
  EXPECT_TRUE(pool.precision_target.empty());
}

// A row that cannot be predicted (a GPU id no catalog holds) keeps its file in a pooled report, and the listing names
// it by file and line.
TEST_F(ValidatePooled, UnpredictedRowsKeepTheirFile) {
  const std::string header =
      "gpu,model,runtime,mode,precision,batch,seq,n_gpus,data,optimizer_step,metric,value,host,runtime_version,"
      "conv_algo\n";
  const auto a = dir_ / "a.csv", b = dir_ / "b.csv";
  test::write_text(a, header +
      "gtx-1080-ti,resnet152,pytorch,train,fp32,16,,1,synthetic,no,samples_per_s,77.52,desktop-6c,0.3,autotune\n");
  test::write_text(b, header +
      "gtx-1080-ti,resnet152,pytorch,train,fp32,16,,1,synthetic,no,samples_per_s,77.52,desktop-6c,0.3,autotune\n"
      "no-such-gpu-9000,resnet152,pytorch,train,fp32,16,,1,synthetic,no,samples_per_s,77.52,desktop-6c,0.3,autotune\n");
  const ValidationReport pool = validate_files({a.string(), b.string()});
  ASSERT_EQ(pool.unpredicted.size(), 1u);
  EXPECT_EQ(pool.unpredicted[0].file, 1);
  EXPECT_NE(validation_markdown(pool).find("- b.csv:3: "), std::string::npos);
}

// data/interval_setup.toml fresh_calibration_files set the interval width: the pooled summary counts their rows and
// gives the coverage without them. As in validation_test's FreshCalibrationFileCoverageIsMarkedInSample, only the
// name decides: a calibration file's rows are copied under a listed name (eval_gpu_fresh.csv, whose own rows stay
// unread).
TEST_F(ValidatePooled, CoverageIsGivenWithAndWithoutTheFilesThatCalibrateTheIntervalWidth) {
  const auto listed = dir_ / "eval_gpu_fresh.csv";
  std::filesystem::copy_file(kValidation + "check_pytorch.csv", listed);
  const ValidationReport in_sample = validate_file(listed.string());
  const ValidationReport other = validate_file(kValidation + "check_pascal.csv");
  ASSERT_TRUE(in_sample.interval_in_sample);
  ASSERT_FALSE(other.interval_in_sample);
  const ValidationReport pool = validate_files({listed.string(), kValidation + "check_pascal.csv"});
  EXPECT_FALSE(pool.interval_in_sample);
  EXPECT_EQ(pool.in_sample_rows, in_sample.overall.rows);
  EXPECT_EQ(pool.out_of_sample.rows, other.overall.rows);
  EXPECT_EQ(pool.out_of_sample.with_interval, other.overall.with_interval);
  EXPECT_DOUBLE_EQ(pool.out_of_sample.coverage, other.overall.coverage);
  const std::string text = validation_summary_text(pool);
  EXPECT_NE(text.find(std::to_string(in_sample.overall.rows) +
                      " rows come from 1 of data/interval_setup.toml fresh_calibration_files"),
            std::string::npos)
      << text;
  EXPECT_EQ(validation_json(pool)["interval_in_sample_rows"], in_sample.overall.rows);
}

// A folder stands for its calibration files, exactly as --pairs reads it; a pool of one file has that file's
// figures.
TEST_F(ValidatePooled, AFolderPoolsItsCalibrationFiles) {
  std::filesystem::create_directories(dir_ / "v");
  std::filesystem::copy_file(kValidation + "cpu.csv", dir_ / "v" / "cpu.csv");
  test::write_text(dir_ / "v" / "eval_gpu_s99.csv", "not read: evaluation files stay out of a folder\n");
  const ValidationReport one = validate_file(kValidation + "cpu.csv");
  const auto r = run("validate v --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["files"].size(), 1u);
  EXPECT_EQ(j["files"][0]["file"], "v/cpu.csv");
  EXPECT_EQ(j["overall"]["rows"], one.overall.rows);
  EXPECT_DOUBLE_EQ(j["overall"]["median_ape_pct"].get<double>(), one.overall.median_ape);
}

// One file reads as it always did: no pooled table, no file column, no `file` field.
TEST_F(ValidatePooled, OneFileReportHasNoPooledParts) {
  const ValidationReport rep = validate_file(kValidation + "published.csv");
  EXPECT_TRUE(rep.files.empty());
  const auto json = validation_json(rep);
  EXPECT_FALSE(json.contains("files"));
  EXPECT_FALSE(json["rows"].front().contains("file"));
  const std::string md = validation_markdown(rep);
  EXPECT_EQ(md.rfind("## Validation: `" + kValidation + "published.csv`\n", 0), 0u);
  EXPECT_EQ(md.find("file:line"), std::string::npos);
  EXPECT_EQ(md.find("### file"), std::string::npos);
  const std::string text = validation_summary_text(rep);
  EXPECT_EQ(
      text.rfind("validated " + std::to_string(rep.overall.rows) + " rows of " + kValidation + "published.csv:", 0),
      0u);
}

TEST_F(ValidatePooled, NoRowsLeavesTheListingsOut) {
  const auto r = run("validate '" + kValidation + "cpu.csv' '" + kValidation + "check_llm.csv' --markdown full.md");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto s =
      run("validate '" + kValidation + "cpu.csv' '" + kValidation + "check_llm.csv' --markdown short.md --no-rows");
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_EQ(r.out, s.out);
  const std::string full = test::slurp(dir_ / "full.md"), brief = test::slurp(dir_ / "short.md");
  EXPECT_NE(full.find("### Every row"), std::string::npos);
  EXPECT_EQ(brief.find("### Every row"), std::string::npos);
  EXPECT_EQ(brief.find("file:line"), std::string::npos);
  const std::string head = brief.substr(0, brief.find("\n### ", brief.find("### input data")));
  EXPECT_EQ(full.rfind(head, 0), 0u) << "the statistics are the full report's";
  const auto e = run("validate '" + kValidation + "cpu.csv' --no-rows");
  EXPECT_EQ(e.code, 2);
}

// Bad input in a pooled call: one line, exit 2, naming the file.
TEST_F(ValidatePooled, BadFilesInAPooledCallAreOneLineErrors) {
  const auto expect_error = [&](const std::string& args, const std::string& piece) {
    SCOPED_TRACE(args);
    const auto r = run("validate " + args);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(piece), std::string::npos) << r.err;
  };
  const std::string cpu = "'" + kValidation + "cpu.csv'";
  expect_error(cpu + " '" + kValidation + "llm_serving.csv'", "llm_serving.csv' holds serving benchmarks");
  expect_error(cpu + " no-such-file.csv", "no-such-file.csv");
  std::filesystem::create_directories(dir_ / "empty");
  expect_error(cpu + " empty", "no calibration files");
  expect_error(cpu + " " + cpu, "is given twice");
}

}  // namespace
}  // namespace perfcast
