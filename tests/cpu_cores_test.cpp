// One CPU process on part of a part (--cores, the `cores` column): OMP_NUM_THREADS=1, a 4- or 8-vCPU cloud instance,
// torch.set_num_threads(N). Checked against the vendors' cache layouts, published single-thread memory bandwidth,
// and the command line's handling of the flag.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cstdint>
#include <string>
#include <utility>

#include "analysis/predict.h"
#include "analysis/validate.h"
#include "cli_runner.h"
#include "core/error.h"
#include "device/cpu_catalog.h"
#include "import/config_csv.h"
#include "test_paths.h"

namespace perfcast {
namespace {

PredictRequest infer_on(const std::string& cpu, const std::string& model, int cores) {
  PredictRequest r;
  r.gpu = cpu;
  r.model = model;
  r.mode = Mode::kInfer;
  r.batch = 1;
  r.cores = cores;
  return r;
}

// No --cores, or every core, is the part as catalogued: the same prediction to the last digit.
TEST(CpuCores, EveryCoreIsThePartItself) {
  for (const char* id : {"xeon-platinum-8380", "xeon-platinum-8275cl-2s", "epyc-7763", "core-i7-8700"}) {
    const CpuSpec* cpu = cpu_by_id(id);
    ASSERT_NE(cpu, nullptr) << id;
    const Prediction none = predict(infer_on(id, "resnet50", 0));
    const Prediction all = predict(infer_on(id, "resnet50", cpu->total_cores()));
    EXPECT_EQ(none.step_us, all.step_us) << id;
  }
}

// Where the cores sit: one socket while they fit (numactl -C 0-(N-1)), both sockets past that, and never more than
// the part has. A vCPU is a hyper-thread (AWS, 'CPU options': each vCPU is a thread of a core), so the error for
// too many cores says so.
TEST(CpuCores, SplitPacksTheCoresOntoTheSockets) {
  const CpuSpec* two = cpu_by_id("xeon-platinum-8275cl-2s");  // 2 x 24 cores
  ASSERT_NE(two, nullptr);
  const CpuInstanceSplit four = cpu_instance_split(*two, 1, 4);
  EXPECT_FALSE(four.whole_part);
  EXPECT_EQ(four.cores_per_instance, 4);
  EXPECT_EQ(four.sockets_per_instance, 1);
  const CpuSpec share = cpu_instance_share(*two, four);
  EXPECT_EQ(share.total_cores(), 4);
  EXPECT_EQ(share.sockets, 1);
  EXPECT_DOUBLE_EQ(share.mem_bw_gbps(), two->mem_bw_gbps() / 2);  // one socket's channels
  const CpuInstanceSplit thirty = cpu_instance_split(*two, 1, 30);
  EXPECT_EQ(thirty.sockets_per_instance, 2);
  EXPECT_EQ(cpu_instance_share(*two, thirty).total_cores(), 30);
  EXPECT_THROW(cpu_instance_split(*two, 1, 31), InputError);  // spans both sockets unevenly
  EXPECT_THROW(cpu_instance_split(*two, 1, 49), InputError);  // more than 48 cores
  EXPECT_THROW(cpu_instance_split(*two, 1, -1), InputError);
  // Several processes of N cores each: instances x N within the part, no process across the sockets.
  EXPECT_EQ(cpu_instance_split(*two, 4, 6).cores_per_instance, 6);
  EXPECT_THROW(cpu_instance_split(*two, 8, 7), InputError);   // 56 cores
  EXPECT_THROW(cpu_instance_split(*two, 2, 30), InputError);  // 30 on a 24-core socket
}

// The L3 a process reaches. Intel's Xeon L3 is one cache shared over the mesh: a 4-core process on an 8380 reaches
// all 60 MB (Intel ARK). AMD splits it by core complex: Milan's 8-core chiplets have 32 MB each, so an 8-core
// process packed onto one chiplet of an EPYC 7763 reaches 32 MB of its 256 MB; Rome's 4-core CCXs have 16 MB, so 4
// cores of an EPYC 7742 reach 16 MB and 6 cores two CCXs' 32 MB.
TEST(CpuCores, L3InReachFollowsTheCoreComplexes) {
  const auto l3_of = [](const char* id, int cores) {
    const CpuSpec* cpu = cpu_by_id(id);
    EXPECT_NE(cpu, nullptr) << id;
    return cpu_instance_share(*cpu, cpu_instance_split(*cpu, 1, cores)).l3_total_bytes() / 1048576.0;
  };
  EXPECT_DOUBLE_EQ(l3_of("xeon-platinum-8380", 4), 60.0);
  EXPECT_DOUBLE_EQ(l3_of("epyc-7763", 8), 32.0);
  EXPECT_DOUBLE_EQ(l3_of("epyc-7763", 9), 64.0);
  EXPECT_DOUBLE_EQ(l3_of("epyc-7742", 4), 16.0);
  EXPECT_DOUBLE_EQ(l3_of("epyc-7742", 6), 32.0);
  EXPECT_DOUBLE_EQ(l3_of("epyc-7742", 64), 256.0);
}

// One core cannot have the channels: single-thread STREAM on two-socket Xeons is about 10-20 GB/s (John McCalpin,
// Intel community 'single core bandwidth: haswell vs. broadwell vs. skylake': 19.9 GB/s Triad on a Xeon E5-2690 v3,
// and lower on Skylake-SP's mesh), against the 8380 socket's 204.8 GB/s. A batch-1 VGG-16 reads its 553 MB of FP32
// weights from DRAM every pass, so one process on one core streams them at no more than that, and on all 40 cores
// at more than one core's figure.
TEST(CpuCores, OneCoreStreamsWhatOneCoreCanHaveInFlight) {
  const auto weight_gbps = [](int cores) {
    const Prediction p = predict(infer_on("xeon-platinum-8380", "vgg16", cores));
    return static_cast<double>(p.params) * 4.0 / (p.step_us * 1e-6) / 1e9;
  };
  EXPECT_LE(weight_gbps(1), 19.9);
  EXPECT_GT(weight_gbps(40), 19.9);
}

// Compute scales with the cores: a ResNet-50 pass on 1 core of a 40-core part takes at most 40x (and, with the
// fork/join of a 40-thread team gone and the caches its own, more than a tenth of that: not free either).
TEST(CpuCores, FewerCoresAreSlowerButNotBeyondTheirCount) {
  const Prediction all = predict(infer_on("xeon-platinum-8380", "resnet50", 0));
  const Prediction one = predict(infer_on("xeon-platinum-8380", "resnet50", 1));
  const double slower = one.step_us / all.step_us;
  EXPECT_GT(slower, 4.0);
  EXPECT_LE(slower, 40.0 * 1.001);
}

// Hugging Face's Part 2, figure 4 (data/validation/cpu_cores.csv): batch-1 BERT-base in PyTorch 1.9 eager on 1, 4 and
// 16 cores of one Xeon Platinum 8380 socket. Read as the whole socket (no cores column) the file was 268% median
// error, 5 of 15 rows within 2x; with the column every row must be within 2x. Ratchet: 23.7% median when the file was
// added (nothing fitted to it), plus a margin; lower it as the model improves, never raise it quietly.
TEST(CpuCores, HuggingFacePartialSocketRowsWithinTheRatchet) {
  const std::string path = std::string(PERFCAST_SOURCE_DIR) + "/data/validation/cpu_cores.csv";
  const ValidationReport rep = validate_file(path);
  EXPECT_TRUE(rep.unpredicted.empty());
  std::vector<const ValidationRow*> all;
  for (const auto& r : rep.rows) all.push_back(&r);
  const ErrorStats s = error_stats(all);
  EXPECT_EQ(s.rows, 15);
  EXPECT_LE(s.median_ape, 25.0);
  EXPECT_GE(s.within_2x, 1.0 - 1e-9);
}

// Hugging Face's Part 2, figure 4 (huggingface/blog assets/35_bert_cpu_scaling_part_2/baselines/
// eager_mode_pytorch_baseline.svg, the bars as printed, the rows of the calibration file cpu_cores.csv read below):
// batch-1 BERT-base in PyTorch 1.9 eager on 1 and 4 cores of one Xeon Platinum 8380, 3.81x faster on 4 cores at
// sequence 20 and 4.18x at sequence 512 (more than the core count). The model's 1-to-4-core speedup of the same pass
// must be within a quarter of each published ratio: a ratio of two bars, so the part's clock and the library's efficiency cancel and what is checked
// is how the costs split between what the team shares out and what it does not.
TEST(CpuCores, OneToFourCoreSpeedupOfBatchOneBertIsHuggingFaces) {
  const auto latency = [](std::int64_t seq, int cores) {
    PredictRequest r = infer_on("xeon-platinum-8380", "bert_base_squad", cores);
    r.seq = seq;
    r.runtime_version = "1.9.0";
    return predict(r).step_us;
  };
  const auto measured = [](const std::string& seq, const std::string& cores) {
    for (const auto& r : read_config_csv(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/cpu_cores.csv", true))
      if (r.model == "bert_base_squad" && r.seq == seq && r.cores == cores && r.measured) return *r.measured;
    ADD_FAILURE() << "cpu_cores.csv has no row at sequence " << seq << " on " << cores << " cores";
    return 1.0;
  };
  for (const std::int64_t seq : {20, 512}) {
    const double published = measured(std::to_string(seq), "4") / measured(std::to_string(seq), "1");
    const double speedup = latency(seq, 1) / latency(seq, 4);
    EXPECT_GT(speedup, published * 0.75) << "sequence " << seq;
    EXPECT_LT(speedup, published * 1.25) << "sequence " << seq;
  }
}

class CpuCoresCli : public test::ScratchDirTest {};

TEST_F(CpuCoresCli, FlagAndColumnPredictOnePartialProcess) {
  const auto r = run("predict --device xeon-platinum-8480plus --model resnet50 --mode infer --batch 1 --cores 4 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("cpu_instances").at("cores_per_instance"), 4);
  const auto adv = run("advise --device xeon-platinum-8480plus --model resnet50 --mode infer --batch 1 --cores 8");
  EXPECT_EQ(adv.code, 0) << adv.err;
  const auto inst = run("predict --device xeon-platinum-8480plus --model resnet50 --mode infer --batch 1 --instances 7 "
                        "--cores 8 --json");
  ASSERT_EQ(inst.code, 0) << inst.err;
  EXPECT_EQ(nlohmann::json::parse(inst.out).at("cpu_instances").at("cores_per_instance"), 8);
  const auto column = dir_ / "rows.csv";
  test::write_text(column,
                   "gpu,model,mode,batch,cores\nxeon-platinum-8480plus,resnet50,infer,1,4\n"
                   "xeon-platinum-8480plus,resnet50,infer,1,\n");
  const auto csv = run("predict --configs " + column.string());
  ASSERT_EQ(csv.code, 0) << csv.err;
  const auto lines = test::lines_of(csv.out);
  ASSERT_GE(lines.size(), 3u) << csv.out;
  EXPECT_NE(lines[0].find("instances,cores,numa_pages"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1], lines[2]);
}

TEST_F(CpuCoresCli, BadCoresAreOneLineErrors) {
  const char* base = "predict --device xeon-platinum-8480plus --model resnet50 --mode infer --batch 1 ";
  for (const std::string bad : {"--cores 0", "--cores four", "--cores 57", "--instances 8 --cores 8",
                                "--cores -2"}) {
    const auto r = run(std::string(base) + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("cores"), std::string::npos) << bad << ": " << r.err;
  }
  const auto gpu = run("predict --gpu a100-sxm4-40gb --model resnet50 --mode infer --cores 4");
  EXPECT_EQ(gpu.code, 2);
  EXPECT_NE(gpu.err.find("not a CPU"), std::string::npos) << gpu.err;
  const auto odd = run("predict --device xeon-platinum-8380-2s --model resnet50 --mode infer --cores 41");
  EXPECT_EQ(odd.code, 2);
  EXPECT_NE(odd.err.find("even"), std::string::npos) << odd.err;
  const auto compare = run("compare --device gtx-1080-ti,t4 --model resnet50 --mode infer --cores 2");
  EXPECT_EQ(compare.code, 2);
}

}  // namespace
}  // namespace perfcast
