// The GPU catalog against published ratios, user GPU files, and what each precision means per GPU/runtime.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "issue_ids.h"
#include "core/error.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "runtime/runtime_profile.h"
#include "test_paths.h"

namespace perfcast {
namespace {

namespace fs = std::filesystem;

const fs::path kGpuDir = fs::path(PERFCAST_SOURCE_DIR) / "data" / "gpus";

using test::CliResult;
using test::run_perfcast;
using test::slurp;
using test::write_text;

// The shipped gtx-1080-ti.toml with every line starting with `key` replaced by `replacement` ("" drops it).
std::string edited_1080ti(const std::string& key, const std::string& replacement) {
  std::stringstream in(slurp(kGpuDir / "gtx-1080-ti.toml"));
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.rfind(key + " ", 0) == 0 || line.rfind(key + "=", 0) == 0) {
      if (!replacement.empty()) out += replacement + "\n";
    } else {
      out += line + "\n";
    }
  }
  return out;
}

class ScratchDir : public test::ScratchDirTest {
 protected:
  ScratchDir() : ScratchDirTest("perfcast-catalog") {}
};

// ---------------------------------------------------------------- the shipped files

TEST(GpuCatalog, EveryFileLoadsAndIdMatchesFileName) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(kGpuDir)) {
    if (e.path().extension() != ".toml") continue;
    ++files;
    SCOPED_TRACE(e.path().string());
    DeviceSpec d;
    ASSERT_NO_THROW(d = load_device_file(e.path()));
    // data/gpus/README.md: id equals the file name stem.
    EXPECT_EQ(d.id, e.path().stem().string());
    EXPECT_GT(d.sm_count, 0);
    EXPECT_GT(d.peak(Pipe::kFp32), 0);
    EXPECT_GT(d.mem_bw_gbps, 0);
    EXPECT_GT(d.memory_gb, 0);
  }
  // data/gpus/README.md: 35 NVIDIA GPUs ship.
  EXPECT_EQ(files, 35);
  EXPECT_EQ(gpu_catalog().size(), 35u);
}

TEST(GpuCatalog, HoldsEveryIdOfTheIssue) {
  for (const auto& id : test::kIssueGpuIds) EXPECT_NO_THROW(find_gpu(id)) << id;
}

TEST(GpuCatalog, EveryNumericFieldHasASource) {
  std::vector<std::string> fields{"sm_count",        "cuda_cores",   "base_clock_mhz", "boost_clock_mhz",
                                  "memory_gb",       "memory_bus_bits", "mem_bw_gbps", "l2_bytes",
                                  "smem_per_sm_bytes", "tdp_w",      "pcie_gen",       "pcie_lanes",
                                  "nvlink_gbps",     "launch_price_usd"};
  for (int i = 0; i < kPipeCount; ++i) fields.emplace_back(pipe_peak_key(static_cast<Pipe>(i)));
  for (const auto& d : gpu_catalog())
    for (const auto& f : fields) EXPECT_FALSE(d.source_of(f).empty()) << d.id << " field " << f << " has no source";
}

// CUDA C Programming Guide, arithmetic instruction throughput table, compute capability 6.1: 128 FP32
// results/clock/SM, 2 FP16 (so FP16 = FP32/64); dp4a does 4 int8 multiply-adds per 32-bit lane (4x FP32).
TEST(GpuCatalog, Sm61RatiosMatchProgrammingGuide) {
  int n = 0;
  for (const auto& d : gpu_catalog()) {
    if (d.sm_version != 61) continue;
    ++n;
    const double fp32 = d.peak(Pipe::kFp32);
    EXPECT_NEAR(d.peak(Pipe::kFp16), fp32 / 64, fp32 / 64 * 0.02) << d.id << ": FP16 should be FP32/64 on sm_61";
    EXPECT_NEAR(d.peak(Pipe::kDp4a), fp32 * 4, fp32 * 4 * 0.02) << d.id << ": dp4a should be 4x FP32 on sm_61";
  }
  // titan-x-pascal, gtx-1080-ti, titan-xp, tesla-p40, quadro-p6000, p102-100, gtx-1080, tesla-p4.
  EXPECT_EQ(n, 8);
}

TEST(GpuCatalog, Sm60HasNoDp4a) {
  int n = 0;
  for (const auto& d : gpu_catalog()) {
    if (d.sm_version != 60) continue;
    ++n;
    EXPECT_EQ(d.peak(Pipe::kDp4a), 0) << d.id;
    // Programming Guide cc6.0: FP16 at twice the FP32 rate.
    EXPECT_NEAR(d.peak(Pipe::kFp16), 2 * d.peak(Pipe::kFp32), 2 * d.peak(Pipe::kFp32) * 0.02) << d.id;
  }
  EXPECT_EQ(n, 2);  // p100-pcie-16gb, p100-sxm2-16gb
}

TEST(GpuCatalog, VoltaHasNoBf16OrTf32TensorCores) {
  int n = 0;
  for (const auto& d : gpu_catalog()) {
    if (d.architecture != "volta") continue;
    ++n;
    EXPECT_EQ(d.sm_version / 10, 7) << d.id;
    EXPECT_EQ(d.peak(Pipe::kTcBf16), 0) << d.id;
    EXPECT_EQ(d.peak(Pipe::kTcTf32), 0) << d.id;
    EXPECT_GT(d.peak(Pipe::kTcFp16Fp32Acc), 0) << d.id << ": Volta has FP16 tensor cores";
  }
  EXPECT_EQ(n, 5);  // the five V100 variants
}

TEST(GpuCatalog, OnlySm89AndNewerHaveFp8) {
  for (const auto& d : gpu_catalog()) {
    if (d.sm_version >= 89) EXPECT_GT(d.peak(Pipe::kTcFp8), 0) << d.id << " (sm_" << d.sm_version << ")";
    else EXPECT_EQ(d.peak(Pipe::kTcFp8), 0) << d.id << " (sm_" << d.sm_version << ")";
  }
}

// ---------------------------------------------------------------- user GPU files

TEST_F(ScratchDir, FindGpuLoadsAUserFileByPath) {
  const fs::path file = dir_ / "my-test-gpu.toml";
  std::string text = edited_1080ti("id", "id = \"my-test-gpu\"");
  text = [&] {
    std::stringstream in(text);
    std::string line, out;
    while (std::getline(in, line)) out += (line.rfind("name ", 0) == 0 ? "name = \"My Test GPU\"" : line) + "\n";
    return out;
  }();
  write_text(file, text);
  DeviceSpec d;
  ASSERT_NO_THROW(d = find_gpu(file.string()));
  EXPECT_EQ(d.id, "my-test-gpu");
  EXPECT_EQ(d.name, "My Test GPU");
  EXPECT_EQ(d.file, file.string());
  const DeviceSpec ref = find_gpu("gtx-1080-ti");
  EXPECT_EQ(d.sm_version, ref.sm_version);
  EXPECT_EQ(d.peak_tflops, ref.peak_tflops);
  EXPECT_EQ(d.mem_bw_gbps, ref.mem_bw_gbps);
}

TEST_F(ScratchDir, GpuPathFolderAddsAGpu) {
  // gpu_catalog() caches on first use, so PERFCAST_GPU_PATH is checked through a fresh perfcast process.
  const fs::path user = dir_ / "gpus";
  fs::create_directories(user);
  write_text(user / "my-test-gpu.toml", edited_1080ti("id", "id = \"my-test-gpu\""));
  const std::string env = "PERFCAST_GPU_PATH='" + user.string() + "'";
  CliResult r = run_perfcast(dir_, "gpus", env);
  ASSERT_NE(r.code, -1);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<std::string> listed = test::first_words(r.out);
  const std::set<std::string> ids(listed.begin(), listed.end());
  EXPECT_EQ(ids.count("my-test-gpu"), 1u);
  EXPECT_EQ(ids.count("gtx-1080-ti"), 1u) << "built-in GPUs stay listed";
  r = run_perfcast(dir_, "predict --gpu my-test-gpu --mode infer --batch 8", env);
  ASSERT_NE(r.code, -1);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST_F(ScratchDir, BrokenFileNamesFileAndMissingField) {
  const fs::path file = dir_ / "no-tdp.toml";
  write_text(file, edited_1080ti("tdp_w", ""));
  try {
    load_device_file(file);
    FAIL() << "a GPU file without tdp_w must not load";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("tdp_w"), std::string::npos) << msg;
    EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
  }
}

TEST_F(ScratchDir, BrokenFileNamesFileAndMistypedField) {
  const fs::path file = dir_ / "text-sm.toml";
  write_text(file, edited_1080ti("sm_count", "sm_count = \"twenty-eight\""));
  try {
    load_device_file(file);
    FAIL() << "a string sm_count must not load";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("sm_count"), std::string::npos) << msg;
    EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
  }
}

TEST_F(ScratchDir, NotTomlIsAnInputErrorNamingTheFile) {
  const fs::path file = dir_ / "garbage.toml";
  write_text(file, "[[[ this is not toml\n");
  try {
    load_device_file(file);
    FAIL() << "garbage must not load";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------- precision semantics

PrecisionPlan plan_for(const std::string& precision, const std::string& gpu, const std::string& runtime, bool training) {
  const DeviceSpec d = find_gpu(gpu);
  return resolve_precision(precision, d, architecture_of(d), find_runtime(runtime), "", training);
}

TEST(PrecisionPlan, AmpOnPascalComputesFp32OnHalfStorage) {
  const PrecisionPlan p = plan_for("amp", "gtx-1080-ti", "pytorch", true);
  EXPECT_EQ(p.conv_pipe, Pipe::kFp32);
  EXPECT_EQ(p.matmul_pipe, Pipe::kFp32);
  EXPECT_EQ(p.bytes.act, 2);
  EXPECT_TRUE(p.mixed);
  EXPECT_NE(p.note.find("no tensor cores"), std::string::npos) << p.note;
}

// cuDNN/cuBLAS compute FP16 tensors in FP32 on GP102 (pseudo-half); the 1/64-rate FP16 pipe is never used for
// convolutions or GEMMs. u39kun/deep-learning-benchmark measured PyTorch model.half() on a GTX 1080 Ti at
// 1.1-1.3x its FP32 throughput.
TEST(PrecisionPlan, Fp16OnPascalComputesInFp32OnHalfStorage) {
  const PrecisionPlan p = plan_for("fp16", "gtx-1080-ti", "pytorch", true);
  EXPECT_EQ(p.conv_pipe, Pipe::kFp32);
  EXPECT_EQ(p.matmul_pipe, Pipe::kFp32);
  EXPECT_EQ(p.bytes.act, 2);
}

TEST(PrecisionPlan, AmpOnVoltaUsesTensorCores) {
  const PrecisionPlan p = plan_for("amp", "v100-sxm2-16gb", "pytorch", true);
  EXPECT_TRUE(is_tensor_pipe(p.conv_pipe)) << pipe_name(p.conv_pipe);
  EXPECT_TRUE(is_tensor_pipe(p.matmul_pipe)) << pipe_name(p.matmul_pipe);
  EXPECT_TRUE(p.mixed);
}

// PyTorch docs, "TensorFloat-32 (TF32) on Ampere devices": torch.backends.cudnn.allow_tf32 defaults to True,
// torch.backends.cuda.matmul.allow_tf32 to False (since 1.12).
TEST(PrecisionPlan, Fp32PytorchOnAmpereRunsConvsAsTf32NotMatmuls) {
  const PrecisionPlan p = plan_for("fp32", "a100-sxm4-40gb", "pytorch", true);
  EXPECT_EQ(p.conv_pipe, Pipe::kTcTf32);
  EXPECT_EQ(p.matmul_pipe, Pipe::kFp32);
  EXPECT_EQ(p.bytes.act, 4);
}

TEST(PrecisionPlan, Fp32PytorchOnVoltaStaysFp32) {
  const PrecisionPlan p = plan_for("fp32", "v100-sxm2-16gb", "pytorch", true);
  EXPECT_EQ(p.conv_pipe, Pipe::kFp32);
  EXPECT_EQ(p.matmul_pipe, Pipe::kFp32);
}

TEST(PrecisionPlan, Int8OnTeslaP40UsesDp4a) {
  const PrecisionPlan p = plan_for("int8", "tesla-p40", "tensorrt", false);
  EXPECT_EQ(p.conv_pipe, Pipe::kDp4a);
  EXPECT_EQ(p.bytes.act, 1);
}

TEST(PrecisionPlan, Int8OnT4UsesInt8TensorCores) {
  const PrecisionPlan p = plan_for("int8", "t4", "tensorrt", false);
  EXPECT_EQ(p.conv_pipe, Pipe::kTcInt8);
  EXPECT_EQ(p.bytes.act, 1);
}

TEST(PrecisionPlan, UnsupportedCombinationsThrowUnsupportedError) {
  EXPECT_THROW(plan_for("bf16", "gtx-1080-ti", "pytorch", true), UnsupportedError);
  EXPECT_THROW(plan_for("tf32", "v100-sxm2-16gb", "pytorch", true), UnsupportedError);
  EXPECT_THROW(plan_for("fp8", "a100-sxm4-40gb", "tensorrt", false), UnsupportedError);
  EXPECT_THROW(plan_for("int8", "p100-pcie-16gb", "tensorrt", false), UnsupportedError);  // sm_60: no dp4a
  EXPECT_THROW(plan_for("int8", "t4", "pytorch", true), UnsupportedError);                // inference only
  EXPECT_THROW(plan_for("fp23", "t4", "pytorch", true), InputError);
}

}  // namespace
}  // namespace perfcast

namespace perfcast {
namespace {

// The first whole number after `marker` in README.md, or -1.
int readme_count_after(const std::string& marker) {
  const std::string readme = slurp(fs::path(PERFCAST_SOURCE_DIR) / "README.md");
  const auto at = readme.find(marker);
  if (at == std::string::npos) return -1;
  const auto digit = readme.find_first_of("0123456789", at + marker.size());
  return digit == std::string::npos ? -1 : std::stoi(readme.substr(digit));
}

std::size_t toml_files_in(const fs::path& folder) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(folder)) n += e.path().extension() == ".toml" ? 1 : 0;
  return n;
}

}  // namespace

// Session 39's walk-through: the README said "25 parts in data/cpus/" after session 38 had added three (Xeon W-2123,
// Gold 6334, EPYC 7V13). The counts a new user reads first are the shipped catalog's.
TEST(ReadmeCatalogCounts, MatchTheShippedFiles) {
  const fs::path data = fs::path(PERFCAST_SOURCE_DIR) / "data";
  EXPECT_EQ(readme_count_after("**Catalog of"), static_cast<int>(toml_files_in(data / "gpus")));
  EXPECT_EQ(readme_count_after("(`perfcast cpus`, `docs/cpus.md`):"), static_cast<int>(toml_files_in(data / "cpus")));
}

}  // namespace perfcast
