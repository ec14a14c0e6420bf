// perfcast monitor (issue 15): the replay of a recorded session through the same analysis as NVML sampling, the
// comparison with a prediction, the session file's format and its hostile variants, and the machine without a GPU.
// One session fixture is SYNTHETIC (its figures are known by construction); two are MEASURED on an H200 and are
// checked against independent readings of the same run, its job log and nvidia-smi (tests/data/monitor/README.md).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/monitor.h"
#include "cli_runner.h"
#include "core/error.h"
#include "core/output_file.h"
#include "import/gpu_sampler.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using namespace perfcast;

const fs::path kSession = fs::path(PERFCAST_SOURCE_DIR) / "tests" / "data" / "monitor" / "synthetic_h200_input_bound.csv";
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

MonitorSession replay(const fs::path& file, MonitorOptions o = {}) {
  auto sampler = open_session_replay(file);
  std::atomic<bool> stop{false};
  return run_monitor(*sampler, o, stop, nullptr);
}

class MonitorCli : public test::ScratchDirTest {
 protected:
  // A session file of `rows` after the header.
  fs::path session(const std::string& name, const std::string& rows) {
    const fs::path p = dir_ / name;
    test::write_text(p, session_csv_header() + rows);
    return p;
  }
};

// The fixture's README: 40 rounds a second apart; GPU 0 busy in rounds 3..36 (34 samples, 40/50% in turn), idle
// for 3 rounds on each side; GPU 1 idle throughout.
TEST(MonitorReplay, SyntheticSessionKeepsTheJobsSpan) {
  const MonitorSession s = replay(kSession);
  EXPECT_EQ(s.rounds, 40);
  EXPECT_DOUBLE_EQ(s.seconds, 39.0);
  ASSERT_EQ(s.gpus.size(), 2u);
  const GpuActivity& g = s.gpus[0];
  EXPECT_EQ(g.name, "NVIDIA H200");
  EXPECT_EQ(g.samples, 34);
  EXPECT_EQ(g.idle_edge_samples, 6);
  EXPECT_DOUBLE_EQ(g.util_gpu_pct.mean(), 45.0);
  EXPECT_DOUBLE_EQ(g.util_gpu_pct.min, 40.0);
  EXPECT_DOUBLE_EQ(g.power_w.mean(), 320.0);
  EXPECT_DOUBLE_EQ(g.mem_used_bytes.max / kGiB, 30.0);
  EXPECT_DOUBLE_EQ(g.sm_clock_mhz.mean(), 1980.0);
  EXPECT_DOUBLE_EQ(g.pcie_rx.mean(), 2e9);
  EXPECT_DOUBLE_EQ(g.power_limit_w, 700.0);
  EXPECT_TRUE(g.reasons.empty());  // the job's span holds no idle sample
  EXPECT_FALSE(s.gpus[1].ran_job());
  // --count and --duration bound a replay as they bound a live run.
  EXPECT_EQ(replay(kSession, {1, 0, 10}).rounds, 10);
  EXPECT_EQ(replay(kSession, {1, 5, 0}).rounds, 6);  // t = 0..5 s
}

// nvml.h's clocks-event reason bits: 0x1 GpuIdle, 0x4 SwPowerCap, 0x40 HwThermalSlowdown; 0x2 applications clocks
// and 0x10 sync boost do not lower a busy GPU's clocks.
TEST(MonitorReplay, ThrottleBitsReadAsNvmlDefinesThem) {
  EXPECT_EQ(throttle_reason_words(0x45), (std::vector<std::string>{"idle", "power cap", "thermal slowdown (hardware)"}));
  EXPECT_TRUE(throttle_slows_clocks(0x4));
  EXPECT_TRUE(throttle_slows_clocks(0x40));
  EXPECT_FALSE(throttle_slows_clocks(0x1 | 0x2 | 0x10));
  EXPECT_EQ(throttle_reason_words(0x10000), (std::vector<std::string>{"reason 0x10000"}));
}

// The issue's example: a GPU busy 45% where the prediction (ResNet-50 training on synthetic data, which keeps an
// H200 busy nearly all the step) expects far more is waiting on its input pipeline or host.
TEST_F(MonitorCli, CompareNamesTheInputPipeline) {
  const auto r = run("monitor --replay '" + kSession.string() +
                     "' --compare --gpu h200-sxm-141gb --model resnet50 --precision amp --batch 128");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU 0 busy 45% where"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the input pipeline or the host"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU 1 (NVIDIA H200) ran no kernel"), std::string::npos) << r.out;
  // The same from a saved prediction.
  const auto saved = run("predict --gpu h200-sxm-141gb --model resnet50 --precision amp --batch 128 --json");
  ASSERT_EQ(saved.code, 0) << saved.err;
  test::write_text(dir_ / "p.json", saved.out);
  const auto j = run("monitor --replay '" + kSession.string() + "' --compare p.json --json");
  ASSERT_EQ(j.code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["compare"]["gpu"], "h200-sxm-141gb");
  bool busy_gap = false;
  for (const auto& f : doc["compare"]["findings"])
    if (f["measure"] == "gpu_busy" && f["gpu"] == 0) {
      busy_gap = !f["as_predicted"].get<bool>();
      EXPECT_DOUBLE_EQ(f["measured"].get<double>(), 45.0);
      EXPECT_GT(f["predicted"].get<double>(), 60.0);
    }
  EXPECT_TRUE(busy_gap) << j.out;
  EXPECT_DOUBLE_EQ(doc["gpus"][0]["util_gpu_pct"]["mean"].get<double>(), 45.0);
  // A prediction for another card is named as such.
  const auto other = run("monitor --replay '" + kSession.string() + "' --compare --gpu a100-sxm4-40gb --model resnet50");
  ASSERT_EQ(other.code, 0) << other.err;
  EXPECT_NE(other.out.find("but the prediction is for a100-sxm4-40gb"), std::string::npos) << other.out;
  // A prediction that does not fit cannot be compared; a file that is not a prediction is refused.
  EXPECT_EQ(run("monitor --replay '" + kSession.string() + "' --compare --gpu gtx-1080-ti --model vgg16 --batch 4096").code, 2);
  test::write_text(dir_ / "x.json", R"({"gpu": "h200-sxm-141gb"})");
  const auto bad = run("monitor --replay '" + kSession.string() + "' --compare x.json");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(test::lines_of(bad.err).size(), 1u) << bad.err;
}

// Clocks under the prediction with the power-cap bit set in most busy samples are put down to the cap.
// The recorded H200 sessions (tests/data/monitor/README.md): ResNet-50 AMP training at batch 128, fed from the GPU
// and then from the host. nvidia-smi sampled the same driver counters beside perfcast monitor; its means over the
// job (README table) are the expectations, to about a point of busy and a few percent of power (different
// sampling instants).
const fs::path kRecordedDir = fs::path(PERFCAST_SOURCE_DIR) / "tests" / "data" / "monitor";
TEST(MonitorReplay, RecordedH200SessionsReadAsNvidiaSmiDid) {
  struct Phase {
    const char* file;
    double smi_busy_pct, smi_power_w;
  };
  for (const Phase& p : {Phase{"h200-sxm-141gb_resnet50_amp_b128_gpu.csv", 94.3, 501.3},
                         Phase{"h200-sxm-141gb_resnet50_amp_b128_host.csv", 24.3, 214.5}}) {
    const MonitorSession s = replay(kRecordedDir / p.file);
    EXPECT_EQ(s.rounds, 32) << p.file;
    ASSERT_EQ(s.gpus.size(), 1u) << p.file;
    const GpuActivity& g = s.gpus[0];
    EXPECT_EQ(g.name, "NVIDIA H200");
    EXPECT_NEAR(g.util_gpu_pct.mean(), p.smi_busy_pct, 2.0) << p.file;
    EXPECT_NEAR(g.power_w.mean(), p.smi_power_w, 0.03 * p.smi_power_w) << p.file;
    EXPECT_DOUBLE_EQ(g.power_limit_w, 700.0);           // the H200 SXM's 700 W (nvidia-smi.txt of the session)
    EXPECT_DOUBLE_EQ(g.sm_clock_mhz.mean(), 1980.0);    // nvidia-smi read 1980 MHz throughout both jobs
    EXPECT_TRUE(g.reasons.empty()) << p.file;           // nvidia-smi's clocks_event_reasons were 0x0 while busy
  }
}

// The host-fed job does the same GPU work per step as the GPU-fed one, so the share of time the GPU is busy falls
// with its steps per second: busy(host) / busy(gpu) ~ (685.5 images/s) / (2802.1 images/s), from the job logs.
TEST(MonitorReplay, RecordedH200HostFedPhaseWaitsAsItsJobLogSays) {
  const double gpu = replay(kRecordedDir / "h200-sxm-141gb_resnet50_amp_b128_gpu.csv").gpus.at(0).util_gpu_pct.mean();
  const double host = replay(kRecordedDir / "h200-sxm-141gb_resnet50_amp_b128_host.csv").gpus.at(0).util_gpu_pct.mean();
  EXPECT_NEAR(host / gpu, 685.5 / 2802.1, 0.05);
}

// What the monitor tells the user of each recorded phase against perfcast's prediction of the GPU-fed job.
TEST_F(MonitorCli, RecordedH200CompareTellsTheTwoPhasesApart) {
  const std::string predict = "' --compare --gpu h200-sxm-141gb --model resnet50_v1_5 --mode train --precision amp --batch 128";
  const auto fed = run("monitor --replay '" + (kRecordedDir / "h200-sxm-141gb_resnet50_amp_b128_gpu.csv").string() + predict);
  ASSERT_EQ(fed.code, 0) << fed.err;
  EXPECT_EQ(fed.out.find("the input pipeline or the host"), std::string::npos) << fed.out;
  const auto starved = run("monitor --replay '" + (kRecordedDir / "h200-sxm-141gb_resnet50_amp_b128_host.csv").string() + predict);
  ASSERT_EQ(starved.code, 0) << starved.err;
  EXPECT_NE(starved.out.find("GPU 0 busy 24% where"), std::string::npos) << starved.out;
  EXPECT_NE(starved.out.find("the input pipeline or the host"), std::string::npos) << starved.out;
}

TEST_F(MonitorCli, ClocksHeldDownByThePowerCap) {
  std::string rows;
  for (int t = 0; t < 10; ++t)
    rows += session_csv_row({.time_s = double(t), .gpu = 0, .name = "NVIDIA H200", .util_gpu_pct = 100,
                             .util_mem_pct = 50, .mem_used_bytes = 40 * kGiB, .mem_total_bytes = 140 * kGiB,
                             .power_w = 700, .power_limit_w = 700, .sm_clock_mhz = 1500, .sm_clock_max_mhz = 1980,
                             .throttle_mask = t < 8 ? 0x4u : 0u});
  const MonitorSession s = replay(session("capped.csv", rows));
  MonitorExpectation e;
  e.gpu_id = "h200-sxm-141gb";
  e.gpu_name = "NVIDIA H200 SXM 141GB";
  e.busy_pct = 98;
  e.power_w = 690;
  e.sm_clock_mhz = 1980;
  e.memory_bytes = 38 * kGiB;
  bool found = false;
  for (const auto& f : compare_with_prediction(s, e)) {
    if (f.measure == "sm_clock") {
      found = true;
      EXPECT_FALSE(f.as_predicted);
      EXPECT_NE(f.text.find("held down by power cap in 80% of the busy samples"), std::string::npos) << f.text;
    } else {
      EXPECT_TRUE(f.as_predicted) << f.text;
    }
  }
  EXPECT_TRUE(found);
}

// --csv writes the session format --replay reads: a replay of the copy gives the same session.
TEST_F(MonitorCli, CsvOfAReplayReplaysTheSame) {
  const auto r = run("monitor --replay '" + kSession.string() + "' --csv copy.csv --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const MonitorSession a = replay(kSession), b = replay(dir_ / "copy.csv");
  ASSERT_EQ(a.gpus.size(), b.gpus.size());
  EXPECT_EQ(a.rounds, b.rounds);
  EXPECT_DOUBLE_EQ(a.gpus[0].util_gpu_pct.mean(), b.gpus[0].util_gpu_pct.mean());
  EXPECT_DOUBLE_EQ(a.gpus[0].power_w.mean(), b.gpus[0].power_w.mean());
  EXPECT_DOUBLE_EQ(a.gpus[0].mem_used_bytes.max, b.gpus[0].mem_used_bytes.max);
  // An output path that cannot be written is refused before anything is read.
  fs::create_directory(dir_ / "adir");
  EXPECT_EQ(run("monitor --replay '" + kSession.string() + "' --csv adir").code, 2);
}

// Hostile or broken session files: one line, exit 2, never a crash.
TEST_F(MonitorCli, BrokenSessionFilesAreOneLineErrors) {
  const std::string ok = "0,0,NVIDIA H200,50,10,1000,143771,300,700,1980,1980,3201,1,1,40,0x0,\n";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"backwards.csv", ok + "5,0,NVIDIA H200,50,10,1000,143771,300,700,1980,1980,3201,1,1,40,0x0,\n" +
                            "4,0,NVIDIA H200,50,10,1000,143771,300,700,1980,1980,3201,1,1,40,0x0,\n"},
      {"pct.csv", "0,0,NVIDIA H200,150,10,1000,143771,300,700,1980,1980,3201,1,1,40,0x0,\n"},
      {"twice.csv", ok + ok},
      {"fields.csv", "0,0,NVIDIA H200,50\n"},
      {"nan.csv", "0,0,NVIDIA H200,nan,10,1000,143771,300,700,1980,1980,3201,1,1,40,0x0,\n"},
      {"gpu.csv", "0,99999999,NVIDIA H200,50,10,1000,143771,300,700,1980,1980,3201,1,1,40,0x0,\n"},
      {"used.csv", "0,0,NVIDIA H200,50,10,200000,143771,300,700,1980,1980,3201,1,1,40,0x0,\n"},
      {"mask.csv", "0,0,NVIDIA H200,50,10,1000,143771,300,700,1980,1980,3201,1,1,40,0xZZ,\n"},
      {"long.csv", std::string(100000, 'x') + "\n"},
  };
  for (const auto& [name, rows] : cases) {
    session(name, rows);
    const auto r = run("monitor --replay " + name);
    EXPECT_EQ(r.code, 2) << name << ": " << r.err;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << name << ": " << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
  }
  test::write_text(dir_ / "header.csv", "time,gpu\n");
  EXPECT_EQ(run("monitor --replay header.csv").code, 2);
  test::write_text(dir_ / "empty.csv", "");
  EXPECT_EQ(run("monitor --replay empty.csv").code, 2);
  EXPECT_EQ(run("monitor --replay missing.csv").code, 2);
  EXPECT_EQ(run("monitor --replay '" + kSession.string() + "' --interval 0s").code, 2);
  EXPECT_EQ(run("monitor --replay '" + kSession.string() + "' --duration soon").code, 2);
}

// A session header edited by hand or by a spreadsheet names the column that differs (monitor --csv writes the 17
// columns of docs/monitor.md), with the expected name as the suggestion; --count 0 is no count of samples.
TEST_F(MonitorCli, SessionHeaderCountAndCpuCompareErrorsNameTheProblem) {
  const std::string header = session_csv_header();
  const std::string row = "0,0,NVIDIA H200,50,10,1000,143771,300,700,1980,1980,3201,1,1,40,0x0,\n";
  std::string typo = header;
  typo.replace(typo.find("util_gpu_pct"), 12, "util_gpu_pc");
  test::write_text(dir_ / "typo.csv", typo + row);
  auto r = run("monitor --replay typo.csv");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("'util_gpu_pc'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'util_gpu_pct'"), std::string::npos) << r.err;
  std::string dropped = header;
  dropped.erase(dropped.find("power_w,"), 8);
  test::write_text(dir_ / "dropped.csv", dropped + row);
  r = run("monitor --replay dropped.csv");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("lacks column 'power_w'"), std::string::npos) << r.err;
  // A CPU prediction has no GPU busy share or SM clock to compare (monitor --help: "watch this machine's GPUs"),
  // given as flags or as a saved prediction.
  r = run("monitor --replay '" + kSession.string() + "' --compare --device xeon-platinum-8380");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("is a CPU"), std::string::npos) << r.err;
  // A replay has its recording's sample times: --interval is refused rather than ignored (and written into --csv).
  r = run("monitor --replay '" + kSession.string() + "' --interval 5s --csv copy.csv");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--interval"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "copy.csv"));
  r = run("monitor --replay '" + kSession.string() + "' --count 0");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--count"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'0'"), std::string::npos) << r.err;
}

// On a machine without the NVIDIA driver (this one) monitor says so in one line and exits 2.
TEST_F(MonitorCli, NoDriverIsOneLineAndExitTwo) {
  if (void* h = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(h);
    GTEST_SKIP() << "this machine has the NVIDIA driver";
  }
  const auto r = run("monitor --count 1");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("no NVIDIA driver"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // --csv names a file that must not appear.
  EXPECT_EQ(run("monitor --csv s.csv").code, 2);
  EXPECT_FALSE(fs::exists(dir_ / "s.csv"));
}

// An output written piece by piece appears whole at commit, and not at all without it.
TEST_F(MonitorCli, OutputFileWriterIsAllOrNothing) {
  {
    OutputFileWriter w(dir_ / "out.txt");
    w.write("abc");
    w.write(std::string(200000, 'x'));
  }
  EXPECT_FALSE(fs::exists(dir_ / "out.txt"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 0);
  {
    OutputFileWriter w(dir_ / "out.txt");
    w.write("abc");
    w.write(std::string(200000, 'x'));
    w.write("def");
    w.commit();
  }
  EXPECT_EQ(fs::file_size(dir_ / "out.txt"), 200006u);
}

// predict --configs: a file that turns out malformed after some rows (a line past the CSV reader's length limit)
// leaves an existing --out untouched and prints nothing on standard output.
TEST_F(MonitorCli, ConfigsErrorMidFileWritesNothing) {
  std::string csv = "gpu,model,batch\n";
  for (int i = 0; i < 300; ++i) csv += "gtx-1080-ti,resnet18,16\n";
  csv += "gtx-1080-ti," + std::string(20 << 20, 'a') + ",16\n";
  test::write_text(dir_ / "c.csv", csv);
  test::write_text(dir_ / "o.csv", "before\n");
  const auto r = run("predict --configs c.csv --out o.csv");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(test::slurp(dir_ / "o.csv"), "before\n");
  const auto s = run("predict --configs c.csv");
  EXPECT_EQ(s.code, 2) << s.err;
  EXPECT_TRUE(s.out.empty()) << s.out.substr(0, 200);
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) entries += e.path().filename().string().starts_with(".o.csv") ? 1 : 0;
  EXPECT_EQ(entries, 0u);
}

}  // namespace
