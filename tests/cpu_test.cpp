// CPUs as devices: the catalog against datasheet figures, the CPU cost path on published measurements, and the
// command line (perfcast cpus, --device, compare across GPUs and CPUs).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/cpu_single_op.h"
#include "analysis/predict.h"
#include "analysis/validate.h"
#include "cli_runner.h"
#include "core/error.h"
#include "cost/cpu_cost.h"
#include "device/catalog.h"
#include "device/cpu_catalog.h"
#include "runtime/cpu_runtime.h"
#include "test_paths.h"
#include "validation_file_stats.h"

namespace perfcast {
namespace {

const CpuSpec& cpu(const char* id) {
  const CpuSpec* c = cpu_by_id(id);
  EXPECT_NE(c, nullptr) << id;
  return *c;
}

TEST(CpuCatalog, PeaksMatchPublishedFigures) {
  // oneDNN issue #1115: one Xeon Platinum 8180 core peaks at 160 GFLOPS FP32 at its 2.5 GHz nominal clock.
  EXPECT_DOUBLE_EQ(cpu("xeon-platinum-8180").fp32_flops_per_clk() * 2.5, 160.0);
  // Intel community FLOPS thread: Gold 6000 parts have two AVX-512 FMA units, 64 FP32 FLOPs per cycle.
  EXPECT_DOUBLE_EQ(cpu("xeon-gold-6148").fp32_flops_per_clk(), 64.0);
  // Haswell/Broadwell and Zen 2/3: two 256-bit FMA units, 32 FP32 FLOPs per cycle.
  EXPECT_DOUBLE_EQ(cpu("xeon-e5-2690-v4").fp32_flops_per_clk(), 32.0);
  EXPECT_DOUBLE_EQ(cpu("epyc-7742").fp32_flops_per_clk(), 32.0);
  // Intel AMX: 1024 BF16 FLOPs and 2048 INT8 ops per cycle per core, 16x the AVX-512 FP32 rate for BF16.
  const CpuSpec& spr = cpu("xeon-platinum-8480plus");
  EXPECT_DOUBLE_EQ(spr.amx_bf16_flops_per_clk / spr.fp32_flops_per_clk(), 16.0);
  EXPECT_EQ(spr.math_unit("bf16"), "amx");
  EXPECT_EQ(cpu("xeon-platinum-8380").math_unit("int8"), "vnni");
  EXPECT_EQ(cpu("xeon-platinum-8380").math_unit("bf16"), "");  // Ice Lake has neither AMX nor AVX512_BF16
  EXPECT_EQ(cpu("epyc-9654").math_unit("bf16"), "avx512_bf16");
}

TEST(CpuCatalog, MemoryBandwidthIsChannelsTimesSpeed) {
  // Intel ARK: E5-2690 v4 max memory bandwidth 76.8 GB/s (4 x DDR4-2400); Ice Lake 8 x DDR4-3200 = 204.8 GB/s.
  EXPECT_NEAR(cpu("xeon-e5-2690-v4").mem_bw_gbps(), 76.8, 0.05);
  EXPECT_NEAR(cpu("xeon-platinum-8380").mem_bw_gbps(), 204.8, 0.05);
  // AMD: Genoa 12 channels of DDR5-4800 = 460.8 GB/s per socket; a two-socket entry doubles it.
  EXPECT_NEAR(cpu("epyc-9654").mem_bw_gbps(), 460.8, 0.05);
  EXPECT_NEAR(cpu("epyc-9654-2s").mem_bw_gbps(), 921.6, 0.1);
  EXPECT_EQ(cpu("xeon-platinum-8180-2s").total_cores(), 56);
  EXPECT_EQ(cpu_by_id("core-i7-6700k-2s"), nullptr);  // desktop parts have no two-socket entry
}

// The clock a power-limited desktop sustains with every core on FP32 FMAs, read off OpenVINO 2024.3's published CPU
// throughput (openvinotoolkit/openvino docs/sphinx_setup/_static/benchmarks_files/OV-2024.3-benchmark-data.csv,
// column Throughput-FP32, rows resnet-50 and bert-base-cased). The Core i3-8100 (4 Coffee Lake cores, a fixed
// 3.6 GHz: no Turbo Boost, Intel ARK) is the reference; the same runtime, model and core type elsewhere scale with
// cores x clock, so clock = (FPS / FPS of the i3-8100) x 4 x 3.6 / cores.
TEST(CpuCatalog, DesktopSustainedClocksMatchOpenVinoThroughput) {
  const auto clock = [](double fps, double fps_i3, int cores) { return fps / fps_i3 * 4 * 3.6 / cores; };
  // Core i5-8500: six cores, the same Coffee Lake die and 65 W PL1 as the i7-8700 (ResNet-50 75.85 and BERT-base
  // 22.8 FPS against 49.85 and 15.07): 3.65 and 3.63 GHz, between its 3.0 GHz base and 3.9 GHz six-core turbo.
  const double coffee_lake_65w = (clock(75.85, 49.85, 6) + clock(22.8, 15.07, 6)) / 2;
  EXPECT_NEAR(cpu("core-i7-8700").avx2_allcore_ghz, coffee_lake_65w, 0.15);
  // Xeon W-1290P: ten Comet Lake cores at 125 W, the i9-10900K's die and power limit (121.76 and 35.77 FPS):
  // 3.52 and 3.42 GHz; the catalog's base-clock rule gives the i9-10900K 3.7 GHz, within 8% of that.
  const double comet_lake_125w = (clock(121.76, 49.85, 10) + clock(35.77, 15.07, 10)) / 2;
  EXPECT_NEAR(cpu("core-i9-10900k").avx2_allcore_ghz / comet_lake_125w, 1.0, 0.08);
}

TEST(CpuCatalog, SessionTwelvePartsMatchVendorFigures) {
  // Intel ARK: two memory channels of DDR4-2400 (i7-7700K), DDR4-2666 (i9-9900K), DDR4-2933 (i9-10900K). ARK's
  // "Max Memory Bandwidth" for these parts (37.5, 41.6, 45.8 GB/s) is channels x speed x 8 bytes over 1.024.
  EXPECT_NEAR(cpu("core-i7-7700k").mem_bw_gbps() / 1.024, 37.5, 0.05);
  EXPECT_NEAR(cpu("core-i9-9900k").mem_bw_gbps() / 1.024, 41.6, 0.1);  // ARK truncates 41.66
  EXPECT_NEAR(cpu("core-i9-10900k").mem_bw_gbps() / 1.024, 45.8, 0.05);
  EXPECT_EQ(cpu("core-i9-10900k").memory_channels, 2);
  EXPECT_EQ(cpu("core-i7-7700k").total_cores(), 4);
  EXPECT_EQ(cpu("core-i9-9900k").threads, 16);
  EXPECT_EQ(cpu("core-i9-10900k").total_cores(), 10);
  EXPECT_EQ(cpu_by_id("core-i9-9900k-2s"), nullptr);  // desktop parts: one socket
  // AMD product pages: EPYC 7302 16 cores, EPYC 7402 24 cores, both 8 channels of DDR4-3200 (204.8 GB/s per socket)
  // and 128 MB of L3; two-socket servers (the 2P parts) double cores and bandwidth.
  EXPECT_EQ(cpu("epyc-7302").total_cores(), 16);
  EXPECT_EQ(cpu("epyc-7402").total_cores(), 24);
  EXPECT_EQ(cpu("epyc-7402-2s").total_cores(), 48);
  EXPECT_EQ(cpu("epyc-7302").memory_channels, 8);
  EXPECT_NEAR(cpu("epyc-7302").mem_bw_gbps(), 204.8, 0.05);
  EXPECT_NEAR(cpu("epyc-7402-2s").mem_bw_gbps(), 409.6, 0.1);
  EXPECT_DOUBLE_EQ(cpu("epyc-7402").l3_bytes, 128.0 * 1024 * 1024);
  // Zen 2 and Skylake-client cores: two 256-bit FMA units, 32 FP32 FLOPs per cycle (WikiChip, Intel's manual).
  EXPECT_DOUBLE_EQ(cpu("epyc-7302").fp32_flops_per_clk(), 32.0);
  EXPECT_DOUBLE_EQ(cpu("core-i9-9900k").fp32_flops_per_clk(), 32.0);
  // Intel ARK, i9-10900X: 10 cores, 4 channels of DDR4-2933 ("94 GB/s"), "# of AVX-512 FMA Units: 2" (64 FP32 FLOPs
  // per cycle), Intel Deep Learning Boost (VNNI for INT8).
  const CpuSpec& clx = cpu("core-i9-10900x");
  EXPECT_EQ(clx.total_cores(), 10);
  EXPECT_EQ(clx.memory_channels, 4);
  EXPECT_NEAR(clx.mem_bw_gbps(), 94.0, 0.2);
  EXPECT_DOUBLE_EQ(clx.fp32_flops_per_clk(), 64.0);
  EXPECT_EQ(clx.math_unit("int8"), "vnni");
}

TEST(CpuCatalog, SocketLinksAreLinksTimesTransferRate) {
  // Intel ARK: Platinum 8180 has 3 UPI links at 10.4 GT/s, E5-2690 v4 2 QPI links at 9.6 GT/s; 2 bytes per transfer
  // each way (a 6.4 GT/s QPI link: 25.6 GB/s both ways together).
  EXPECT_NEAR(cpu("xeon-platinum-8180").socket_link_gbps, 3 * 10.4 * 2, 0.05);
  EXPECT_NEAR(cpu("xeon-e5-2690-v4").socket_link_gbps, 2 * 9.6 * 2, 0.05);
  EXPECT_EQ(cpu("core-i7-8700").socket_link_gbps, 0);  // one-socket parts have no link
}

TEST(CpuCatalog, AwsIceLakeAndSapphireRapidsPartsMatchInstanceFigures) {
  // AWS-only parts (session 27). Platinum 8375C (c6i/m6i): lscpu of a 128-vCPU instance printed in PyTorch's
  // torch/utils/collect_env.py: 2 sockets x 32 cores x 2 threads, L2 80 MiB over 64 cores, L3 108 MiB over 2.
  const CpuSpec& icx = cpu("xeon-platinum-8375c");
  EXPECT_EQ(icx.total_cores(), 32);
  EXPECT_EQ(icx.threads, 64);
  EXPECT_EQ(cpu("xeon-platinum-8375c-2s").total_cores(), 64);  // c6i.32xlarge / c6i.metal: 128 vCPUs
  EXPECT_DOUBLE_EQ(icx.l2_bytes_per_core * 64, 80.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(icx.l3_bytes * 2, 108.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(icx.base_clock_ghz, 2.9);  // 'CPU @ 2.90GHz'
  // Ice Lake-SP platform (Intel ARK for the public Platinum 83xx parts): 8 x DDR4-3200, 3 UPI links at 11.2 GT/s.
  EXPECT_NEAR(icx.mem_bw_gbps(), 204.8, 0.05);
  EXPECT_NEAR(icx.socket_link_gbps, 3 * 11.2 * 2, 0.05);
  EXPECT_EQ(icx.math_unit("int8"), "vnni");  // lscpu: avx512_vnni
  EXPECT_EQ(icx.math_unit("bf16"), "");      // no avx512_bf16, no amx flags
  // AWS: all-core turbo 3.5 GHz; the licence clocks are derived below it (AVX-512 under AVX2 under the all-core).
  EXPECT_LT(icx.avx512_allcore_ghz, icx.avx2_allcore_ghz);
  EXPECT_LE(icx.avx2_allcore_ghz, 3.5);
  // Platinum 8488C (c7i/m7i): 48 cores at 2400 MHz on a one-socket c7i.metal-24xl (php-src benchmark report),
  // 192 vCPUs on c7i.48xlarge; lscpu of an m7i: L2 2 MiB, L3 105 MiB, DDR5 at 4800 MT/s; AMX flags.
  const CpuSpec& spr = cpu("xeon-platinum-8488c");
  EXPECT_EQ(spr.total_cores(), 48);
  // Threads per socket from AWS's figure: c7i.48xlarge's 192 vCPUs over its two sockets (the c7i.metal-24xl, half
  // of that host, is one socket in the php-src report).
  constexpr int kC7i48xlargeVcpus = 192, kC7i48xlargeSockets = 2;
  EXPECT_EQ(spr.threads, kC7i48xlargeVcpus / kC7i48xlargeSockets);
  EXPECT_EQ(cpu("xeon-platinum-8488c-2s").total_cores(), 96);
  EXPECT_DOUBLE_EQ(spr.l2_bytes_per_core, 2.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(spr.l3_bytes, 105.0 * 1024 * 1024);
  EXPECT_NEAR(spr.mem_bw_gbps(), 307.2, 0.05);  // 8 x DDR5-4800
  EXPECT_NEAR(spr.socket_link_gbps, 4 * 16.0 * 2, 0.05);
  EXPECT_EQ(spr.math_unit("bf16"), "amx");
  EXPECT_EQ(spr.math_unit("int8"), "amx");
  EXPECT_DOUBLE_EQ(spr.amx_bf16_flops_per_clk / spr.fp32_flops_per_clk(), 16.0);
  EXPECT_LE(spr.avx2_allcore_ghz, 3.2);  // AWS: 3.2 GHz all-core turbo
  EXPECT_LT(spr.amx_allcore_ghz, spr.avx512_allcore_ghz);
}

TEST(CpuCatalog, GoldRefreshPartMatchesItsSystemDescription) {
  // Session 29: Xeon Gold 6240R, as MLPerf Inference v3.1/v4.1 Krai's 7920t system descriptions give it (lscpu:
  // 24 cores, L2 24 MiB over 24 instances, L3 35.75 MiB; 6 x 16 GB DDR4-2933) and Intel ARK (2 UPI links, 10.4 GT/s).
  const CpuSpec& g = cpu("xeon-gold-6240r");
  EXPECT_EQ(g.total_cores(), 24);
  EXPECT_EQ(g.threads, 48);
  EXPECT_EQ(cpu("xeon-gold-6240r-2s").total_cores(), 48);
  EXPECT_DOUBLE_EQ(g.l2_bytes_per_core * 24, 24.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(g.l3_bytes, 35.75 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(g.base_clock_ghz, 2.4);  // 'CPU @ 2.40GHz'
  EXPECT_NEAR(g.mem_bw_gbps(), 6 * 2933 * 8 / 1000.0, 0.05);
  EXPECT_NEAR(g.socket_link_gbps, 2 * 10.4 * 2, 0.05);
  EXPECT_EQ(g.math_unit("int8"), "vnni");
  EXPECT_EQ(g.math_unit("bf16"), "");
  // Derived licence clocks (docs/cpus.md, session 29): AVX-512 under base, AVX2 under the 4.0 GHz turbo.
  EXPECT_LT(g.avx512_allcore_ghz, g.base_clock_ghz);
  EXPECT_LT(g.avx2_allcore_ghz, 4.0);
}

TEST(CpuCatalog, SessionThirtyEightPartsMatchTheirPublishedFigures) {
  // Xeon W-2123 (The Tech Report's Xeon W table): 4 cores / 8 threads, 3.6 GHz base, 8.25 MB L3, single socket;
  // every Xeon W: four channels of DDR4-2666 and two AVX-512 FMA units per core.
  const CpuSpec& w = cpu("xeon-w-2123");
  EXPECT_EQ(w.total_cores(), 4);
  EXPECT_EQ(w.threads, 8);
  EXPECT_DOUBLE_EQ(w.base_clock_ghz, 3.6);
  EXPECT_DOUBLE_EQ(w.l3_bytes, 8.25 * 1024 * 1024);
  EXPECT_NEAR(w.mem_bw_gbps(), 4 * 2666 * 8 / 1000.0, 0.05);
  EXPECT_DOUBLE_EQ(w.fp32_flops_per_clk(), 64.0);
  EXPECT_EQ(cpu_by_id("xeon-w-2123-2s"), nullptr);  // a workstation part: one socket
  EXPECT_EQ(w.math_unit("int8"), "");                // Skylake server core: no VNNI
  // The AVX2 / AVX-512 all-core clocks of these three parts are derived from same-core siblings, not published
  // (data/cpus, their sources): no published figure to test them against, so they are not asserted here.
  // Xeon Gold 6334 ('8C/16T 3.60GHz 18M 165W'; two-socket Dell R650 nodes), Ice Lake-SP platform: 8 x DDR4-3200,
  // 3 UPI links at 11.2 GT/s, VNNI without BF16.
  const CpuSpec& g = cpu("xeon-gold-6334");
  EXPECT_EQ(g.total_cores(), 8);
  EXPECT_EQ(g.threads, 16);
  EXPECT_EQ(cpu("xeon-gold-6334-2s").total_cores(), 16);
  EXPECT_DOUBLE_EQ(g.l3_bytes, 18.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(g.tdp_w, 165);
  EXPECT_NEAR(g.mem_bw_gbps(), 204.8, 0.05);
  EXPECT_NEAR(g.socket_link_gbps, 3 * 11.2 * 2, 0.05);
  EXPECT_EQ(g.math_unit("int8"), "vnni");
  EXPECT_EQ(g.math_unit("bf16"), "");
  // EPYC 7V13 (Azure's 'AMD EPYC 7V13 64-Core Processor', 2.44-2.45 GHz): Milan, 8 chiplets of 8 cores sharing a
  // 32 MB L3 each, 8 x DDR4-3200, two-socket hosts.
  const CpuSpec& m = cpu("epyc-7v13");
  EXPECT_EQ(m.total_cores(), 64);
  EXPECT_EQ(cpu("epyc-7v13-2s").total_cores(), 128);
  EXPECT_NEAR(m.base_clock_ghz, 2.44, 0.011);
  EXPECT_DOUBLE_EQ(m.l3_bytes, 256.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(m.l3_reach_bytes(8), 32.0 * 1024 * 1024);
  EXPECT_NEAR(m.mem_bw_gbps(), 204.8, 0.05);
  EXPECT_DOUBLE_EQ(m.fp32_flops_per_clk(), 32.0);
}

TEST(CpuCatalog, DeviceLookupSpansBothCatalogsAndSuggestsAcrossThem) {
  EXPECT_EQ(find_device("xeon-platinum-8380").kind, DeviceKind::kCpu);
  EXPECT_EQ(find_device("gtx-1080-ti").kind, DeviceKind::kGpu);
  try {
    find_device("xeon-platinum-838");
    FAIL() << "a typo must be an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("xeon-platinum-8380"), std::string::npos) << e.what();
  }
  EXPECT_THROW(find_gpu("epyc-7742"), InputError);  // GPU-only commands refuse CPUs
}

PredictRequest cpu_request(const std::string& device, const std::string& model, std::int64_t batch) {
  PredictRequest r;
  r.gpu = device;
  r.model = model;
  r.batch = batch;
  return r;
}

TEST(CpuPredict, TrainsOnTheCoresWithoutGpuKernels) {
  const Prediction p = predict(cpu_request("xeon-platinum-8380-2s", "resnet50", 64));
  EXPECT_EQ(p.device.kind, DeviceKind::kCpu);
  EXPECT_GT(p.samples_per_s, 0);
  // Dispatch adds to the compute on a CPU (the same threads run both).
  EXPECT_NEAR(p.step.step_us, p.step.gpu_us + p.step.host_us, 1e-6 * p.step.step_us);
  // No tensor-core or CUDA-core bound leaks into a CPU prediction.
  EXPECT_EQ(p.bound_us[static_cast<int>(Bound::kTensorCompute)], 0);
  EXPECT_EQ(p.bound_us[static_cast<int>(Bound::kCudaCompute)], 0);
  EXPECT_GT(p.bound_us[static_cast<int>(Bound::kCpuVector)], 0);
}

// Hugging Face, 'Scaling up BERT-like model Inference on modern CPU - Part 1' (section 6, c5.metal with two Xeon
// Platinum 8275CL): at batch 1, small and medium problems run fastest on one socket; large ones gain from both
// sockets, whose compute covers the cross-socket cost. Per-op thread fork/join over the team and the weights read
// from DRAM each pass make the small problems overhead-bound.
TEST(CpuPredict, BatchOneBertPrefersOneSocketUntilTheSequenceIsLong) {
  const auto latency = [](const char* device, int seq) {
    PredictRequest r = cpu_request(device, "bert_base_squad", 1);
    r.mode = Mode::kInfer;
    r.seq = seq;
    return predict(r).step.step_us;
  };
  EXPECT_LT(latency("xeon-platinum-8275cl", 128), latency("xeon-platinum-8275cl-2s", 128));
  EXPECT_GT(latency("xeon-platinum-8275cl", 512), latency("xeon-platinum-8275cl-2s", 512));
}

// ONNX Runtime's PyTorch_Bert-Squad_OnnxRuntime_CPU.ipynb (Core i7-8700, BERT-base SQuAD, batch 1, sequence 128):
// PyTorch 1.4 eager 164.97 ms, ONNX Runtime 1.2 on the fused model 74.68 ms, 2.2x apart. PyTorch's linear layers pack
// their weights inside every MKL call and run every op as its own call; ONNX Runtime packs once and fuses.
TEST(CpuPredict, OnnxRuntimeBeatsPyTorchEagerOnBatchOneBert) {
  PredictRequest r = cpu_request("core-i7-8700", "bert_base_squad", 1);
  r.mode = Mode::kInfer;
  r.seq = 128;
  const double pytorch = predict(r).step.step_us;
  r.runtime = "onnxruntime";
  const double ort = predict(r).step.step_us;
  const double measured = 164.97 / 74.68;
  EXPECT_GT(pytorch / ort, measured / 2);
  EXPECT_LT(pytorch / ort, measured * 2);
}

// microsoft/onnxruntime#5183 ('MLAS: add sgemm weight prepacking', release 1.5.0): pre-packing MatMul and Attention
// weights at load time took 'a BERT with batch size 1 + sequence length 128' from 73 to 53 ms (1.38x; the machine is
// not named). Releases before 1.5 pack every call; --runtime-version picks the behaviour. Checked on a server socket
// and a desktop part, within a band around the published ratio (the machine's compute-to-DRAM balance moves it).
TEST(CpuPredict, OnnxRuntimeBeforeWeightPrepackingIsSlowerOnBatchOneBertAsPublished) {
  for (const char* device : {"xeon-platinum-8180", "core-i9-9900k"}) {
    PredictRequest r = cpu_request(device, "bert_base_squad", 1);
    r.mode = Mode::kInfer;
    r.seq = 128;
    r.runtime = "onnxruntime";
    r.runtime_version = "1.4";
    const double before = predict(r).step.step_us;
    r.runtime_version = "1.5";
    const double after = predict(r).step.step_us;
    EXPECT_GT(before / after, 1.15) << device;  // published: 73 / 53 = 1.38
    EXPECT_LT(before / after, 1.6) << device;
  }
  PredictRequest bad = cpu_request("core-i7-8700", "bert_base_squad", 1);
  bad.mode = Mode::kInfer;
  bad.runtime = "onnxruntime";
  bad.runtime_version = "1.x";
  EXPECT_THROW(predict(bad), InputError);
}

// PyTorch picks oneDNN for an FP32 convolution only when it is grouped, its kernel is wider than 3 in both
// dimensions, the batch exceeds one, or its input holds more than 20480 elements (aten/src/ATen/native/Convolution.cpp
// ConvParams::use_mkldnn, 'for some case, native is faster'); the rest run ATen's native unfold + GEMM. At batch 1:
// MobileNet v2's 160 x 7 x 7 expansion (7840 elements) is native; its depthwise convolutions (grouped), its 960 x 7 x 7
// projection (47040) and ResNet-18's 512 x 7 x 7 layer4 convolutions (25088) take oneDNN; at batch 2 all take oneDNN.
TEST(CpuPredict, PyTorchRunsSmallBatchOneConvolutionsOutsideOneDnnAsAtenChooses) {
  const auto algorithm = [](const char* model, std::int64_t batch, const std::string& op) {
    PredictRequest r = cpu_request("core-i9-10900x", model, batch);
    r.mode = Mode::kInfer;
    for (const auto& e : predict(r).step.entries)
      if (e.name == op) return std::string(e.cost.algorithm);
    ADD_FAILURE() << model << " has no op " << op;
    return std::string();
  };
  EXPECT_EQ(algorithm("mobilenet_v2", 1, "features.16.expand"), "aten_native_gemm");
  EXPECT_NE(algorithm("mobilenet_v2", 1, "features.16.dw"), "aten_native_gemm");
  EXPECT_NE(algorithm("mobilenet_v2", 1, "features.17.project"), "aten_native_gemm");
  EXPECT_NE(algorithm("resnet18", 1, "layer4.0.conv2"), "aten_native_gemm");
  EXPECT_NE(algorithm("mobilenet_v2", 2, "features.16.expand"), "aten_native_gemm");
}

// ONNX Runtime at ORT_ENABLE_ALL rewrites FP32 convolutions to MLAS's NCHWc kernels where the channel counts fit its
// blocks (onnxruntime/core/optimizer/nchwc_transformer.cc TransformConv; the block is one vector of floats, 16 with
// AVX-512F and 8 with AVX2, MlasNchwcGetBlockSize): ungrouped convolutions need input channels in whole blocks or
// fewer than one block, depthwise ones output channels in whole blocks. MobileNet v2's stem (3 input channels), its
// 144-channel depthwise and its 144 -> 24 projection qualify on AVX-512; its 24 -> 144 expansion does not (24 is not a
// multiple of 16) and runs MlasConv's unfold + SGEMM, but does qualify on an AVX2 part (24 = 3 blocks of 8).
TEST(CpuPredict, OnnxRuntimeRunsConvolutionsOnNchwcKernelsWhereTheChannelsFitTheBlocks) {
  const auto algorithm = [](const char* device, const std::string& op) {
    PredictRequest r = cpu_request(device, "mobilenet_v2", 1);
    r.mode = Mode::kInfer;
    r.runtime = "onnxruntime";
    for (const auto& e : predict(r).step.entries)
      if (e.name == op) return std::string(e.cost.algorithm);
    ADD_FAILURE() << device << " mobilenet_v2 has no op " << op;
    return std::string();
  };
  EXPECT_EQ(algorithm("core-i9-10900x", "features.0.conv"), "nchwc_conv");
  EXPECT_EQ(algorithm("core-i9-10900x", "features.3.dw"), "nchwc_depthwise");
  EXPECT_EQ(algorithm("core-i9-10900x", "features.2.project"), "nchwc_conv");
  EXPECT_EQ(algorithm("core-i9-10900x", "features.3.expand"), "gemm");
  EXPECT_EQ(algorithm("core-i7-8700", "features.3.expand"), "nchwc_conv");
}

// The depthwise half of the same rule: a depthwise convolution qualifies when its channels fill whole blocks.
// MobileNet v3 large's 72-channel depthwise (72 = 4.5 blocks of 16, 9 of 8) stays off the NCHWc kernels on AVX-512 and
// takes them on AVX2; its 240-channel one (15 blocks of 16) takes them on both.
TEST(CpuPredict, OnnxRuntimeDepthwiseNeedsWholeNchwcBlocks) {
  const auto algorithm = [](const char* device, const std::string& op) {
    PredictRequest r = cpu_request(device, "mobilenet_v3_large", 1);
    r.mode = Mode::kInfer;
    r.runtime = "onnxruntime";
    for (const auto& e : predict(r).step.entries)
      if (e.name == op) return std::string(e.cost.algorithm);
    ADD_FAILURE() << device << " mobilenet_v3_large has no op " << op;
    return std::string();
  };
  EXPECT_EQ(algorithm("core-i9-10900x", "features.3.block.1.0"), "depthwise");  // 72 channels
  EXPECT_EQ(algorithm("core-i7-8700", "features.3.block.1.0"), "nchwc_depthwise");
  EXPECT_EQ(algorithm("core-i9-10900x", "features.7.block.1.0"), "nchwc_depthwise");  // 240 channels
  EXPECT_EQ(algorithm("core-i7-8700", "features.7.block.1.0"), "nchwc_depthwise");
}

// MLAS deals an NCHWc convolution over its threads as batch x groups x output rows x sets of 4 channel blocks
// (onnxruntime/core/mlas/lib/snchwc.cpp: FilterSetSize = 4, TotalWork = BatchCount x GroupCount x FilterSetCount x
// OutputHeight, MlasPartitionWork). ResNet-50's layer4 3x3 convolution at batch 1 (512 channels, 7 x 7 output) on
// one 40-core Xeon Platinum 8380 (AVX-512, blocks of 16): 512 / 64 = 8 sets x 7 rows = 56 items, two rounds over 40
// threads, so 56 / 80 = 0.70 of the cores work; its reduction depth 512 x 9 = 4608 keeps the K ramp at
// 4608 / (4608 + 32).
TEST(CpuPredict, OnnxRuntimeNchwcConvolutionKeepsAsManyCoresBusyAsMlasDealsRows) {
  PredictRequest r = cpu_request("xeon-platinum-8380", "resnet50", 1);
  r.mode = Mode::kInfer;
  r.runtime = "onnxruntime";
  for (const auto& e : predict(r).step.entries) {
    if (e.name != "layer4.1.conv2") continue;
    EXPECT_EQ(std::string(e.cost.algorithm), "nchwc_conv");
    const double k_half = cpu_cost_constants().gemm_k_half;  // the K ramp's constant (data/cpu_cost.toml)
    EXPECT_NEAR(e.cost.shape_efficiency, 56.0 / 80.0 * 4608.0 / (4608.0 + k_half), 1e-3);
    return;
  }
  ADD_FAILURE() << "resnet50 has no op layer4.1.conv2";
}

TEST(CpuPredict, PrecisionsNeedTheirUnits) {
  PredictRequest r = cpu_request("xeon-e5-2690-v4", "resnet50", 32);
  r.precision = "bf16";
  EXPECT_THROW(predict(r), UnsupportedError);  // Broadwell: no AMX, no AVX512_BF16
  r.gpu = "xeon-platinum-8480plus";
  const Prediction amx = predict(r);
  r.precision = "fp32";
  const Prediction fp32 = predict(r);
  EXPECT_GT(amx.samples_per_s, fp32.samples_per_s);  // AMX tiles beat AVX-512 FMAs
  r.precision = "fp16";
  EXPECT_THROW(predict(r), UnsupportedError);
  r.precision = "fp32";
  r.runtime = "tensorrt";
  EXPECT_THROW(predict(r), UnsupportedError);  // a GPU-only runtime
}

TEST(CpuPredict, GpuOverCpuMatchesTheMeasuredRatioWithinTwofold) {
  // jcjohnson/cnn-benchmarks: ResNet-152 forward + backward at batch 16 takes 328.90 ms on a GTX 1080 (Torch7,
  // cuDNN 5) and 16872.78 ms on dual Xeon E5-2630 v3 (Torch7 CPU): the GPU is 51x faster, not thousands.
  PredictRequest gpu = cpu_request("gtx-1080", "resnet152", 16);
  gpu.runtime = "torch7";
  gpu.optimizer_step = false;
  PredictRequest host = gpu;
  host.gpu = "xeon-e5-2630-v3-2s";
  const double ratio = predict(gpu).samples_per_s / predict(host).samples_per_s;
  const double measured = 16872.78 / 328.90;
  EXPECT_GT(ratio, measured / 2);
  EXPECT_LT(ratio, measured * 2);
}

TEST(CpuValidation, PublishedCpuMeasurementsMeetTheTarget) {
  const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/cpu.csv");
  std::vector<const ValidationRow*> all;
  for (const auto& r : rep.rows) all.push_back(&r);
  const ErrorStats s = error_stats(all);
  EXPECT_GE(s.rows, 16);
  // Issue 15 target: median <= 20%. Ratchet: 7.4% when the file was added (in sample: it is calibration,
  // data/validation/README.md), plus a margin; lower it as the model improves, never raise it quietly. Session 12
  // (operands over the socket link): 7.6%. Session 13 (attention products one per thread, docs/calibration.md): 6.6%.
  EXPECT_LE(s.median_ape, 7.0);
  // Lowered from every row within 2x when session 10 added Hugging Face's batch-1 BERT rows (2 x Xeon 8275CL);
  // session 12: sequence 512 stayed 2.1x too fast; session 13: every row within 2x again.
  EXPECT_GE(s.within_2x, 1.0 - 1e-9);
}

// Hugging Face's 'Scaling up BERT-like model Inference on modern CPU - Part 2', figure 4 (PyTorch 1.9 eager,
// bert-base at batch 1 on two Xeon Platinum 8380): one socket's 40 cores take 11 ms at sequence 20, both sockets'
// 80 cores 14 ms; at sequence 512 80 cores take 77 ms against 83 ms on 40, a gain of only 1.08x.
TEST(CpuPredict, BatchOneBertOnIceLakeGainsLittleFromTheSecondSocket) {
  const auto latency = [](const char* device, int seq) {
    PredictRequest r = cpu_request(device, "bert_base_squad", 1);
    r.mode = Mode::kInfer;
    r.seq = seq;
    return predict(r).step.step_us;
  };
  EXPECT_LT(latency("xeon-platinum-8380", 20), latency("xeon-platinum-8380-2s", 20));
  const double gain = latency("xeon-platinum-8380", 512) / latency("xeon-platinum-8380-2s", 512);
  EXPECT_GT(gain, 1.0);
  EXPECT_LT(gain, 1.5);
}

// CPU transformer inference (issue 15: at most 20% median error), data/validation/cpu_transformer.csv: batch-1
// BERT-base in PyTorch 1.9 eager on one and two Xeon Platinum 8380 sockets, sequence 20-512 (Hugging Face's Part 2).
// Every row of one CPU calibration file, predicted: its error figures (no row may go unpredicted).
ErrorStats cpu_file_stats(const std::string& file) {
  return test::validation_file_stats(file);
}

TEST(CpuValidation, TransformerInferenceMeetsTheTarget) {
  const ErrorStats s = cpu_file_stats("cpu_transformer.csv");
  EXPECT_GE(s.rows, 10);
  // Issue 15 target: median <= 20%. Ratchet: 7.1% when the file was added (in sample: head_gemm_peak_fraction was
  // fitted with it, data/validation/README.md), plus a margin; lower it as the model improves, never raise it.
  EXPECT_LE(s.median_ape, 8.0);
  EXPECT_GE(s.within_2x, 1.0 - 1e-9);
}

// Session 13's CNN inference file (calibration, data/validation/README.md): Paddle 0.11 MKL-DNN at batch 1-16 on
// two Xeon Gold 6148. Issue 15 target: median <= 20%. Ratchet: 15.5% when the file was added, 12.3% once its rows say
// their pages were balanced over the nodes (session 28, `numa_pages`), plus a margin.
TEST(CpuValidation, CnnInferenceRowsMeetTheTarget) {
  const ErrorStats s = cpu_file_stats("cpu_inference.csv");
  EXPECT_GE(s.rows, 15);
  EXPECT_LE(s.median_ape, 14.0);
  EXPECT_GE(s.within_2x, 1.0 - 1e-9);
}

// apache/mxnet docs/tutorials/mkldnn/MKLDNN_README.md (MKLDNN_VERBOSE=1 over one 3x3 convolution): the reorder
// nchw -> nChw16c of a 32x32x256x256 fp32 tensor took 6.47681 ms, nChw16c -> nchw 20.4819 ms, and the two
// 32x32x3x3 weight reorders 0.0429688 and 0.0510254 ms. The [onednn_reorder] constants must give those back.
TEST(CpuCost, OnednnReorderConstantsGiveBackTheVerboseTimings) {
  const auto& r = cpu_cost_constants().onednn_reorder;
  const double bytes = 32.0 * 32 * 256 * 256 * 4;
  EXPECT_NEAR(bytes / (r.plain_to_blocked_gbps * 1e6), 6.47681, 6.47681 * 0.01);
  EXPECT_NEAR(bytes / (r.blocked_to_plain_gbps * 1e6), 20.4819, 20.4819 * 0.01);
  EXPECT_GE(r.call_us, 42.9);
  EXPECT_LE(r.call_us, 51.1);
  EXPECT_EQ(r.host_cores, 40.0);  // the README's MKL_VERBOSE line: NThr:40 at 2.40 GHz
  EXPECT_EQ(r.host_ghz, 2.4);
}

// mingfeima/convnet-benchmark-py README (PyTorch 1.2, ResNeXt-101 32x8d at batch 1 on one 28-core Xeon Platinum 8180
// socket): 92.52 ms in the native layout, 32.35 ms with input, output and weights kept in the mkldnn layout (a
// TorchScript module), so the 104 convolutions' 312 per-call reorders (source, weight, destination) cost at most
// 60.17 ms, 193 us each on average. A
// small reorder there must cost at least what MKL-DNN's verbose log measured for one on a 40-thread host (43-51 us,
// apache/mxnet MKLDNN_README), not less for the smaller team, and at most that all-in average.
TEST(CpuCost, SmallReorderOnA28CoreSocketCostsNoLessThanOnTheFortyThreadHost) {
  bool rule = false;
  const CpuRuntimeProfile pytorch_1_2 = cpu_runtime_at_version(find_cpu_runtime("pytorch"), "1.2", rule);
  ASSERT_TRUE(rule);
  const CpuCostModel m(cpu("xeon-platinum-8180"), pytorch_1_2, cpu_cost_constants(), "fp32");
  MatmulGeometry g;
  g.m = 56 * 56;
  g.n = 64;
  g.k = 64;
  const double us = m.onednn_reorder_us(64.0 * 64 * 4, true, g);
  EXPECT_GE(us, 42.9);
  EXPECT_LE(us, (92.52 - 32.35) * 1000 / 312);
}

// PyTorch's elementwise loops (TensorIterator's for_each over at::parallel_for with at::internal::GRAIN_SIZE = 32768,
// aten/src/ATen/Parallel.h) split as ATen's source says: aten/src/ATen/Parallel-inl.h runs the loop inline, on the
// calling thread and without a parallel region, unless numiter > grain_size; above the grain
// aten/src/ATen/ParallelOpenMP.h invoke_parallel opens `#pragma omp parallel` without a num_threads clause ("can't use
// num_threads clause due to bugs in GOMP's thread pool", #32008; so in every revision read, 1.x to 2.x), which forks the
// whole intra-op team, and hands work to min(team, divup(numiter, grain_size)) of its threads. So on a ten-core part
// a 512 x 7 x 7 map (25088 elements, ResNet's last stage at batch 1) runs on one thread with no region, exactly 32768
// elements still inline, 32769 on two threads, a 64 x 56 x 56 map (200704) on divup(200704, 32768) = 7, and a
// 64 x 112 x 112 one (802816) on all ten; every region costs the whole team's fork and join.
TEST(CpuCost, ElementwiseLoopsSplitAsAtenParallelForDoes) {
  EXPECT_EQ(cpu_cost_constants().parallel_grain_elements, 32768.0);
  const CpuSpec& part = cpu("core-i9-10900x");
  ASSERT_EQ(part.total_cores(), 10);
  const CpuCostModel m(part, find_cpu_runtime("pytorch"), cpu_cost_constants(), "fp32");
  EXPECT_EQ(m.streaming_threads(512.0 * 7 * 7), 1.0);
  EXPECT_EQ(m.streaming_threads(32768.0), 1.0);
  EXPECT_EQ(m.streaming_threads(32769.0), 2.0);
  EXPECT_EQ(m.streaming_threads(64.0 * 56 * 56), 7.0);
  EXPECT_EQ(m.streaming_threads(64.0 * 112 * 112), 10.0);
  EXPECT_DOUBLE_EQ(m.fork_join_us(), cpu_cost_constants().omp_fork_join_us_per_thread * 10.0);
}

// Published single-thread FP32 GEMM timings on a Sapphire Rapids core (oneDNN 2.6 brgemm:avx512_core inner products
// under TensorFlow 2.9, M = 200 rows, one thread; the verbose logs of uxlfoundation/oneDNN#1393 and
// tensorflow/tensorflow#56350, data/published_kernels/cpu_gemm.csv): the deep product (K = 15680, N = 512) ran at
// 98.2-111.9 GFLOPS in the three logs, and the shallow one (K = 128, N = 64) at 0.52-0.80 of the K = 512, N = 128
// product's rate in the same log. One core of the catalogued Xeon Platinum 8480+ must give the deep product within
// 15% of every log's rate, and the shallow-to-deeper ratio inside the logs' range (the K ramp, gemm_k_half).
TEST(CpuCost, GemmRateOnOneCoreMatchesPublishedOneDnnKernels) {
  const CpuSpec& part = cpu("xeon-platinum-8480plus");
  const CpuSpec one = cpu_instance_share(part, cpu_instance_split(part, 1, 1));
  ASSERT_EQ(one.total_cores(), 1);
  const CpuRuntimeProfile& rt = find_cpu_runtime("pytorch");
  const CpuCostModel model(one, rt, cpu_cost_constants(), "fp32");
  const auto gflops = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    MatmulGeometry g;
    g.m = m;
    g.n = n;
    g.k = k;
    const double flops = 2.0 * m * n * k;
    const double bytes = 4.0 * (m * k + k * n + m * n);
    return flops / model.gemm(g, flops, bytes, rt.matmul_efficiency).time_us / 1e3;
  };
  for (const double published : {101.6, 98.2, 111.9}) EXPECT_NEAR(gflops(200, 512, 15680) / published, 1.0, 0.15);
  const double ratio = gflops(200, 64, 128) / gflops(200, 128, 512);
  EXPECT_GE(ratio, 0.52);
  EXPECT_LE(ratio, 0.80);
}

// `perfcast op` on a CPU id costs one GEMM by the same path (tools/fit_cpu_gemm.py reads it there): one core of a
// Sapphire Rapids part runs the deep inner product of uxlfoundation/oneDNN#1393 and tensorflow/tensorflow#56350
// (M = 200, N = 512, K = 15680; oneDNN 2.6 brgemm:avx512_core, FP32) at 98.2-111.9 GFLOPS in the three published
// logs; the catalogued 8480+ core must land within 15% of each, and the K = 128 / K = 512 rate ratio inside the logs'
// 0.52-0.80, as through CpuCostModel::gemm above.
TEST(CpuOp, OneCoreMatmulMatchesPublishedOneDnnKernels) {
  const auto gflops = [](std::int64_t m, std::int64_t n, std::int64_t k) {
    OpSpec s;
    s.op = "matmul";
    s.m = m;
    s.n = n;
    s.k = k;
    const CpuOpPrediction p = predict_cpu_op(s, "xeon-platinum-8480plus", "pytorch", "fp32", 1);
    EXPECT_EQ(p.cpu.total_cores(), 1);
    return 2.0 * m * n * k / p.time_us() / 1e3;
  };
  for (const double published : {101.6, 98.2, 111.9}) EXPECT_NEAR(gflops(200, 512, 15680) / published, 1.0, 0.15);
  const double ratio = gflops(200, 64, 128) / gflops(200, 128, 512);
  EXPECT_GE(ratio, 0.52);
  EXPECT_LE(ratio, 0.80);
  OpSpec bad;
  bad.op = "linear";
  bad.m = 20;
  bad.n = 768;
  bad.k = 768;
  bad.direction = "bwd_data";
  EXPECT_THROW(predict_cpu_op(bad, "xeon-platinum-8380", "pytorch", "fp32"), UnsupportedError);
  bad.direction = "fwd";
  EXPECT_THROW(predict_cpu_op(bad, "xeon-platinum-8380", "pytorch", "fp32", 41), InputError);  // one socket: 40 cores
}

// oneDNN's primitive cache (PyTorch 1.8 on, oneDNN 1.8.1: pytorch/pytorch#51184) turns a per-call reorder's creation
// into a lookup of 'about 1-2us' (intel/ideep#158). A later verbose log of PyTorch 2.4 on a Windows desktop
// (pytorch/pytorch#131958; the part is not named) times the 64x64x1x1 weight reorder (16 KB) at 9 us per call. On a
// ten-core desktop part such a reorder must cost at least the lookup and no more than twice that log's figure, and
// PyTorch 1.2's (MKL-DNN 0.x, no cache) at least MKL-DNN 0.x's own 43-51 us from the MXNet README at 2.4 GHz.
TEST(CpuCost, CachedReorderPrimitivesCostALookupAndTheirParallelRegion) {
  MatmulGeometry g;
  g.m = 56 * 56;
  g.n = 64;
  g.k = 64;
  const double bytes = 64.0 * 64 * 4;
  const CpuCostModel now(cpu("core-i9-10900x"), find_cpu_runtime("pytorch"), cpu_cost_constants(), "fp32");
  EXPECT_GE(now.onednn_reorder_us(bytes, true, g), 1.0);
  EXPECT_LE(now.onednn_reorder_us(bytes, true, g), 18.0);
  bool rule = false;
  const CpuRuntimeProfile old = cpu_runtime_at_version(find_cpu_runtime("pytorch"), "1.2", rule);
  EXPECT_TRUE(rule);
  const CpuCostModel before(cpu("core-i9-10900x"), old, cpu_cost_constants(), "fp32");
  // MKL-DNN 0.x's call, timed at 2.4 GHz, runs faster in proportion to the clock.
  EXPECT_GE(before.onednn_reorder_us(bytes, true, g), 42.9 * 2.4 / cpu("core-i9-10900x").vector_clock_ghz());
  // The version boundary is the oneDNN 1.8.1 upgrade: 1.8 caches, 1.7 does not.
  EXPECT_TRUE(cpu_runtime_at_version(find_cpu_runtime("pytorch"), "1.8", rule).reorder_primitives_cached);
  EXPECT_FALSE(cpu_runtime_at_version(find_cpu_runtime("pytorch"), "1.7.1", rule).reorder_primitives_cached);
}

// glibc's malloc maps a block at or above M_MMAP_THRESHOLD freshly and unmaps it on free; the dynamic threshold rises
// to at most DEFAULT_MMAP_THRESHOLD_MAX = 4 * 1024 * 1024 * sizeof(long) on 64-bit systems (mallopt(3)), so a
// PyTorch CPU tensor of 32 MiB may be reused from the heap and one of 32 MiB plus a page is faulted in every time.
// The page allocator's rate is will-it-scale page_fault1 at full load on a two-socket Skylake-SP (Aaron Lu,
// linux-mm 2018-03-05): 7,971,818 pages of 4 KiB per second, a fault and a munmap each, of which the free path takes
// 35% of the cycles (the same author, 2018-03-20): the team faults in at 7,971,818 x 4096 B / 0.65 per second over
// both sockets. The free is one thread's munmap: 320 GiB in about 18 s on an idle machine (Yang Shi, LKML 2018-08-15),
// whatever the sockets or the processes beside it. One of two processes sharing a socket faults in at a quarter of
// the two-socket rate. ONNX Runtime's CPU arena keeps its blocks: no fresh pages.
TEST(CpuCost, TensorsAboveGlibcsMmapThresholdFaultInFreshPagesAndOneThreadUnmapsThem) {
  const double threshold = 4.0 * 1024 * 1024 * sizeof(long);
  ASSERT_EQ(threshold, 32.0 * 1024 * 1024);
  const CpuSpec& two = cpu("xeon-platinum-8275cl-2s");
  const CpuCostModel m(two, find_cpu_runtime("pytorch"), cpu_cost_constants(), "fp32");
  EXPECT_EQ(m.fresh_pages_us(threshold), 0.0);
  EXPECT_GT(m.fresh_pages_us(threshold + 4096), 0.0);
  const double gib = 1024.0 * 1024 * 1024;
  const double fault_us = gib / (7971818.0 * 4096 / (1.0 - 0.35)) * 1e6;
  const double unmap_us = 18.0 / 320.0 * 1e6;
  EXPECT_NEAR(m.fresh_pages_us(gib) / (fault_us + unmap_us), 1.0, 0.01);
  EXPECT_NEAR(m.fresh_pages_us(gib, 3) / (fault_us + unmap_us), 3.0, 0.03);
  const CpuSpec quarter = cpu_instance_share(two, cpu_instance_split(two, 4));
  const CpuCostModel one_of_two(quarter, find_cpu_runtime("pytorch"), cpu_cost_constants(), "fp32");
  EXPECT_NEAR(one_of_two.fresh_pages_us(gib) / (4.0 * fault_us + unmap_us), 1.0, 0.01);
  // A process over both sockets faults in twice as fast as one alone on a socket, but frees no faster: the munmap
  // runs on the framework's one thread.
  const CpuSpec half = cpu_instance_share(two, cpu_instance_split(two, 2));
  const CpuCostModel one_socket(half, find_cpu_runtime("pytorch"), cpu_cost_constants(), "fp32");
  EXPECT_NEAR(one_socket.fresh_pages_us(gib) - m.fresh_pages_us(gib), fault_us, 0.01 * fault_us);
  const CpuCostModel arena(two, find_cpu_runtime("onnxruntime"), cpu_cost_constants(), "fp32");
  EXPECT_EQ(arena.fresh_pages_us(gib), 0.0);
}

// oneDNN's depthwise kernel (src/cpu/x64/jit_uni_dw_conv_kernel_f32.cpp apply_filter_unrolled, blocked layout) loads
// one weight vector per filter tap and then, per output pixel of its ur_w register block, one input vector for one
// FMA; jit_uni_dw_conv_kernel_utils.cpp init_conf sets ur_w = 6 on avx512_core and 4 on avx2. With two load ports
// feeding two FMA pipes a core is load-bound at ur_w / (ur_w + 1) of its FMA peak (6/7, 4/5), so no depthwise layer
// runs faster than that; and oneDNN's JIT convolutions reach at least 68% of their own ceiling per core (oneDNN issue
// #1115, Platinum 8180), so none runs below 68% of it. MobileNetV2's first depthwise layer at batch 1 (32 channels,
// 3x3, 112 x 112) held in the caches is FMA-bound, so its FMA rate is the kernel's.
TEST(CpuCost, DepthwiseRunsAtOneDnnKernelsLoadPortCeiling) {
  const double outputs = 32.0 * 112 * 112;
  const double flops = 2.0 * 9 * outputs;
  const double bytes = 2.0 * outputs * 4;
  for (const auto& [id, ur_w] : {std::pair{"xeon-platinum-8180", 6.0}, std::pair{"core-i7-8700", 4.0}}) {
    const CpuSpec& part = cpu(id);
    const CpuCostModel m(part, find_cpu_runtime("pytorch"), cpu_cost_constants(), "fp32");
    const KernelCost k = m.depthwise(flops, bytes);
    const double ceiling = part.peak_tflops("fp32") * 1e6 * ur_w / (ur_w + 1);
    EXPECT_GE(k.compute_us, flops / ceiling * (1 - 1e-9)) << id;
    EXPECT_LE(k.compute_us, flops / (0.68 * ceiling)) << id;
  }
}

// The CPU evaluation file, frozen before its first prediction (data/validation/README.md): batch-1 inference on a
// Core i7-8700 (ONNX Runtime's CPU BERT notebook) and one Xeon Platinum 8180 socket (Intel's convnet-benchmark-py).
// At freeze: 318% median, every row predicted 2-5.4x too fast (the batch-1 regime, not in the calibration rows).
// As for every eval_* file, no threshold (a ratchet would invite tuning against it): every row must be predicted,
// and the figures are reported in README.md and docs/validation.md.
TEST(CpuValidation, EvaluationFilePredictsEveryRow) {
  const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/eval_cpu.csv");
  EXPECT_EQ(rep.rows.size(), 3u);
  EXPECT_TRUE(rep.unpredicted.empty());
}

class CpuCli : public test::ScratchDirTest {};

TEST_F(CpuCli, ListsCpuIdsFirst) {
  const auto r = run("cpus");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto ids = test::first_words(r.out);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "xeon-platinum-8480plus"), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), "epyc-9654-2s"), ids.end());
  const auto j = run("cpus --json");
  ASSERT_EQ(j.code, 0);
  EXPECT_NE(j.out.find("\"amx_bf16_flops_per_clk\""), std::string::npos);
}

TEST_F(CpuCli, DeviceTakesCpusAndGpuRefersThemThere) {
  const auto ok = run("predict --device xeon-gold-6148-2s --model resnet50 --batch 32");
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("framework dispatch"), std::string::npos);
  const auto wrong = run("predict --gpu xeon-gold-6148-2s --model resnet50");
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.err.find("--device"), std::string::npos) << wrong.err;
  const auto typo = run("predict --device epyc-965");
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("epyc-9654"), std::string::npos) << typo.err;
}

TEST_F(CpuCli, CompareGivesTheGpuSpeedupOverTheCpu) {
  const auto r = run("compare --device gtx-1080-ti,xeon-e5-2690-v4-2s --model resnet50 --batch 32");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("gtx-1080-ti over xeon-e5-2690-v4-2s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("thousands of times"), std::string::npos);
}

TEST_F(CpuCli, CompareGivesACpuRowItsPackageEnergyAndSaysWhyItHasNoCost) {
  // Intel ARK, Xeon E5-2690 v4: 135 W TDP per socket, so the two-socket entry's package draws 270 W under load; the
  // energy of the run is that power over the run's hours. The price catalog rents GPU instances only.
  const auto r = run("compare --device gtx-1080-ti,xeon-e5-2690-v4-2s --model resnet152 --mode train --batch 32 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  const auto& cpu = j[1];
  ASSERT_EQ(cpu["device_kind"], "cpu");
  EXPECT_DOUBLE_EQ(cpu["package_power_w"].get<double>(), 270.0);
  EXPECT_NE(cpu["package_power_basis"].get<std::string>().find("not DRAM"), std::string::npos);
  EXPECT_NE(cpu["package_power_source"].get<std::string>().find("135 W"), std::string::npos);
  ASSERT_TRUE(cpu["run"].is_object()) << cpu.dump();
  EXPECT_NEAR(cpu["run"]["energy_kwh"].get<double>(), 270.0 * cpu["run"]["hours"].get<double>() / 1000.0, 1e-9);
  EXPECT_TRUE(cpu["run"]["usd_on_demand"].is_null());
  EXPECT_NE(cpu["cost_note"].get<std::string>().find("no instance with this CPU"), std::string::npos);
  EXPECT_NEAR(cpu["samples_per_joule"].get<double>(), cpu["samples_per_s"].get<double>() / 270.0, 1e-12);
  // The GPU row keeps its board power and its price.
  EXPECT_FALSE(j[0].contains("package_power_w"));
  EXPECT_TRUE(j[0]["run"]["usd_on_demand"].is_number());

  const auto text = run("compare --device gtx-1080-ti,xeon-e5-2690-v4-2s --model resnet152 --mode train --batch 32");
  ASSERT_EQ(text.code, 0) << text.err;
  const auto lines = test::lines_of(text.out);
  std::string header, cpu_row;
  for (const auto& l : lines) {
    if (l.rfind("device", 0) == 0) header = l;
    if (l.rfind("xeon-e5-2690-v4-2s ", 0) == 0) cpu_row = l;
  }
  // A device-neutral header: a CPU row's count is sockets' entries, not GPUs.
  ASSERT_FALSE(header.empty()) << text.out;
  EXPECT_EQ(header.find("GPUs"), std::string::npos) << header;
  EXPECT_NE(header.find("count"), std::string::npos) << header;
  EXPECT_NE(cpu_row.find("kWh"), std::string::npos) << cpu_row;
  EXPECT_NE(cpu_row.find("270 W"), std::string::npos) << cpu_row;
  EXPECT_NE(text.out.find("TDP, 270 W (2 sockets x 135 W"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("not DRAM"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("xeon-e5-2690-v4-2s: no cost"), std::string::npos) << text.out;
  // The legend's "mem free" is a CPU's host memory (data/cpus memory_gb, all sockets), not a GPU's.
  EXPECT_NE(text.out.find("mem free: per GPU (a CPU: its host memory left, all sockets)"), std::string::npos) << text.out;

  // The HTML page shows the same table (the CPU row's 270 W and the package-only line) and draws the energy chart,
  // whose note says what a CPU's energy leaves out.
  const auto html = run("compare --device gtx-1080-ti,xeon-e5-2690-v4-2s --model resnet152 --mode train --batch 32 "
                        "--html page.html");
  ASSERT_EQ(html.code, 0) << html.err;
  std::ifstream in(dir_ / "page.html");
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("TDP, 270 W (2 sockets x 135 W"), std::string::npos);
  EXPECT_NE(page.find("\"energy_note\":\"a GPU: its boards at their average power over the step; a CPU: its package at "
                      "TDP for the whole run, the package only, not DRAM"),
            std::string::npos);
  EXPECT_NE(page.find("\"package_power_w\":270.0"), std::string::npos);
}

}  // namespace
}  // namespace perfcast
