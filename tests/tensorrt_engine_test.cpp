// TensorRT as NVIDIA's MLPerf Inference submissions run it, checked against what the engine is documented to do
// and against published MLPerf results (data/validation/mlperf_inference.csv):
// - layer fusion (TensorRT developer guide, 'Types of Fusions'): batch norm folds into the convolution's weights,
//   bias, ReLU and the residual add run in its epilogue, so ResNet-50 v1.5 launches one kernel per convolution
//   (53 of them: the stem, 16 bottlenecks of three, 4 projection shortcuts) and none for its 53 batch norms,
//   49 ReLUs and 16 adds;
// - the RGB input layer runs on tensor cores over channels padded to the vectorized layout (kCHW4 for INT8),
//   where cuDNN under PyTorch runs it on CUDA cores;
// - BERT runs packed tokens without padding (the MLPerf BERT builder's cu_seqlens input), so its cost follows the
//   real tokens per sequence; runtimes that pad refuse --seq-mean.
#include <gtest/gtest.h>

#include <libfccp/csv.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/predict.h"
#include "analysis/validate.h"
#include "core/error.h"
#include "core/toml_reader.h"
#include "test_paths.h"

namespace perfcast {
namespace {

PredictRequest engine(const std::string& gpu, const std::string& model, std::int64_t batch) {
  PredictRequest r;
  r.gpu = gpu;
  r.model = model;
  r.runtime = "tensorrt";
  r.mode = Mode::kInfer;
  r.precision = "int8";
  r.batch = batch;
  return r;
}

double launches_of(const Prediction& p, OpKind kind) {
  double n = 0;
  for (const auto& e : p.step.entries)
    if (e.kind == kind) n += e.cost.launches;
  return n;
}

// The convolution entries also carry the reformatting kernel TensorRT runs ahead of the channel-padded RGB layer
// ('Reformatting CopyNode for Input Tensor 0 to <conv1 ...>' in the measured engines below): 53 + 1.
TEST(TensorRtEngine, ResNet50LaunchesOneKernelPerConvolutionAndNoneForItsBatchNormsReluOrAdds) {
  const Prediction p = predict(engine("a100-pcie-40gb", "resnet50_v1_5", 256));
  EXPECT_DOUBLE_EQ(launches_of(p, OpKind::kConv), 53 + 1);
  EXPECT_DOUBLE_EQ(launches_of(p, OpKind::kNorm), 0);
  EXPECT_DOUBLE_EQ(launches_of(p, OpKind::kElementwise), 0);
}

TEST(TensorRtEngine, RgbLayerRunsOnInt8TensorCoresOverPaddedChannels) {
  const Prediction trt = predict(engine("a100-pcie-40gb", "resnet50_v1_5", 256));
  PredictRequest eager = engine("a100-pcie-40gb", "resnet50_v1_5", 256);
  eager.runtime = "pytorch";
  eager.precision = "fp16";
  const Prediction torch = predict(eager);
  const auto first_conv = [](const Prediction& p) -> const OpCost& {
    for (const auto& e : p.step.entries)
      if (e.kind == OpKind::kConv) return e;
    ADD_FAILURE() << "no convolution";
    return p.step.entries.front();
  };
  EXPECT_EQ(first_conv(trt).cost.pipe, Pipe::kTcInt8);
  EXPECT_EQ(first_conv(torch).cost.pipe, Pipe::kFp32);  // cuDNN: tensor-op convolutions need C % 8 == 0
}

// MLPerf Inference v1.0 closed, NVIDIA A100-PCIex1_TRT, ResNet-50 Offline: 31063.5 samples/s at batch 2048;
// v3.0 A100-PCIe-80GBx1_TRT bert-99 Offline: 3168.14 samples/s (SQuAD v1.1, 46% of the 384 positions real).
TEST(TensorRtEngine, MlperfOfflineThroughputsWithinAQuarter) {
  const Prediction rn = predict(engine("a100-pcie-40gb", "resnet50_v1_5", 2048));
  EXPECT_NEAR(rn.samples_per_s / 31063.5, 1.0, 0.25);
  PredictRequest b = engine("a100-pcie-80gb", "bert_large_squad", 1024);
  b.seq = 384;
  b.seq_mean = 177;
  const Prediction bert = predict(b);
  EXPECT_NEAR(bert.samples_per_s / 3168.14, 1.0, 0.25);
  // Tokens per second count the real tokens only.
  ASSERT_TRUE(bert.tokens_per_s);
  EXPECT_DOUBLE_EQ(*bert.tokens_per_s, bert.samples_per_s * 177);
}

TEST(TensorRtEngine, PaddedRuntimesAndLongerThanSeqRefuseSeqMean) {
  PredictRequest r = engine("a100-pcie-80gb", "bert_large_squad", 64);
  r.seq = 384;
  r.seq_mean = 400;
  EXPECT_THROW(predict(r), InputError);
  r.seq_mean = 177;
  r.runtime = "pytorch";
  r.precision = "fp16";
  EXPECT_THROW(predict(r), InputError);
  r.runtime = "tensorrt";
  r.mode = Mode::kTrain;
  EXPECT_THROW(predict(r), InputError);
}

// MLPerf Inference v3.0 closed, NVIDIA, ResNet-50 SingleStream (results/<system>/resnet50/SingleStream/performance/
// run_1/mlperf_log_summary.txt): one INT8 image per query, the next when it completes; mean latency 471.3 us on
// A100-PCIe-80GBx1_TRT ('QPS w/o loadgen overhead' 2121.63) and 355.5 us on L4x1_TRT (2812.91). Neither is in a
// validation file. At batch 1 every one of the engine's ~55 kernels is a small grid waiting out its K loop's loads
// (KernelCostModel::gemm's K-loop floor, forward convolutions unsplit); without that they were predicted at A100 5679/s
// +168%; L4 3184/s, +13%; docs/calibration.md, 'the tensor-core K loop's floor at batch 1'). Now A100 +34%, L4 -18%: a
// ratchet at 40%.
TEST(TensorRtEngine, MlperfV3SingleStreamLatencyWithinFortyPercent) {
  for (const auto& [gpu, qps] : {std::pair{"a100-pcie-80gb", 2121.63}, std::pair{"l4", 2812.91}}) {
    PredictRequest r = engine(gpu, "resnet50_v1_5", 1);
    r.harness = "mlperf-singlestream";
    const Prediction p = predict(r);
    EXPECT_NEAR(p.samples_per_s / qps, 1.0, 0.40) << gpu << ": predicted " << p.samples_per_s << "/s";
  }
}

// data/validation/mlperf_inference.csv (calibration): the Offline rows, 47.1% median before the two engine facts
// above, 12.8% with them. Ratchet at that figure plus a margin; every row within 2x.
TEST(TensorRtEngine, MlperfCalibrationFileStaysWithinItsRatchet) {
  const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/mlperf_inference.csv");
  std::vector<const ValidationRow*> offline, single;
  for (const auto& r : rep.rows) (r.result.row.harness == "mlperf-singlestream" ? single : offline).push_back(&r);
  const ErrorStats s = error_stats(offline);
  EXPECT_EQ(s.rows, 10);
  EXPECT_LE(s.median_ape, 14.0);
  EXPECT_GE(s.within_2x, 1.0);
  // The SingleStream rows (session 14): one INT8 image per query through NVIDIA's C++ harness with CUDA graphs,
  // 0.47 ms on the A10 and 0.50 ms on the A100 PCIe (v1.0 logs). The engine's kernels at batch 1 were predicted
  // about 2x faster than that (+94%, +177%); with the tensor-core K loop's floor (session 15) +20% and +41%
  // (docs/calibration.md, 'the tensor-core K loop's floor at batch 1'): a ratchet on the gap left, to be lowered.
  ASSERT_EQ(single.size(), 2u);
  for (const auto* r : single) {
    EXPECT_GT(r->ratio, 1.0) << r->result.row.gpu << ": the batch-1 gap is on the fast side";
    EXPECT_LE(r->ape, 50.0) << r->result.row.gpu;
  }
}

// NVIDIA's BERT engines build the Q, K and V projections as one layer of 3 x hidden outputs over the concatenated
// weights (NVIDIA/TensorRT demo/BERT/builder.py attention_layer_opt: mult_all, then the qkv2ctx plugin), and
// TensorRT fuses GEMMs that share an input (NVIDIA on its developer forum, topic 238187). So BERT-base (12 layers,
// hidden 768) launches one GEMM per layer for them, of 2 x tokens x 768 x 2304 FLOPs, reading the input once;
// the output, intermediate and output-projection GEMMs stay 3 per layer; PyTorch eager launches all six.
TEST(TensorRtEngine, BertQkvProjectionsRunAsOneGemmPerLayer) {
  PredictRequest r = engine("t4", "bert_base_squad", 8);
  r.seq = 384;
  const Prediction trt = predict(r);
  PredictRequest e = r;
  e.runtime = "pytorch";
  e.precision = "fp16";
  const Prediction eager = predict(e);
  const auto gemms = [](const Prediction& p, const std::string& layer) {
    std::pair<double, double> launches_flops{0, 0};
    for (const auto& entry : p.step.entries)
      if (entry.kind == OpKind::kMatmul && entry.name.rfind(layer, 0) == 0) {
        launches_flops.first += entry.cost.launches;
        if (entry.cost.launches > 0 && entry.name.find("attention.") != std::string::npos &&
            entry.name.find(".out") == std::string::npos)
          launches_flops.second += entry.cost.flops;
      }
    return launches_flops;
  };
  const auto [trt_launches, qkv_flops] = gemms(trt, "encoder.layer.3.");
  EXPECT_DOUBLE_EQ(trt_launches, 4);  // QKV, attention output, intermediate, output
  EXPECT_DOUBLE_EQ(qkv_flops, 2.0 * 8 * 384 * 768 * 2304);
  EXPECT_DOUBLE_EQ(gemms(eager, "encoder.layer.3.").first, 6);
}

// The same fusion on convolutions (NVIDIA, forum topic 238187: two Conv ops sharing an input with mergeable
// parameters, e.g. the same kernel size and activation). GoogLeNet (Szegedy et al. 2014, table 1) has 57
// convolutions: 3 in the stem and 6 in each of its 9 Inception modules, three of them 1x1 + ReLU on the module's
// input (#1x1, #3x3 reduce, #5x5 reduce), which run as one: 57 - 9 x 2 = 39 convolution kernels. ResNet-50 v1's
// projection shortcut and first 1x1 of a downsampling block share input, kernel and stride but not the
// activation (the shortcut feeds the add, the 1x1 a ReLU), so its 53 convolutions stay 53. Each count adds the
// input's reformatting kernel before the RGB layer (charged to that convolution's entry).
TEST(TensorRtEngine, InceptionBranchesSharingAnInputRunAsOneConvolution) {
  EXPECT_DOUBLE_EQ(launches_of(predict(engine("a100-pcie-40gb", "googlenet", 8)), OpKind::kConv), 39 + 1);
  EXPECT_DOUBLE_EQ(launches_of(predict(engine("a100-pcie-40gb", "resnet50", 8)), OpKind::kConv), 53 + 1);
}

// Merging layers moves work into one kernel and never drops it. In the Transformer (Vaswani et al. 2017) every
// decoder layer's cross-attention K and V projections read the encoder's output: all 12 share one input, but
// they sit across the whole decoder, far down the graph from it. Whatever TensorRT merges, the step's cross-attention
// K/V work stays 6 layers x 2 projections x 2 x tokens x 512 x 512 FLOPs, as in eager PyTorch, where nothing merges.
TEST(TensorRtEngine, HorizontalFusionKeepsEveryDecoderLayersCrossAttentionWork) {
  PredictRequest r = engine("a100-sxm4-80gb", "transformer_base", 32);
  r.precision = "fp16";
  PredictRequest e = r;
  e.runtime = "pytorch";
  const auto cross_kv_flops = [](const Prediction& p) {
    double flops = 0;
    int entries = 0;
    for (const auto& entry : p.step.entries)
      if (entry.kind == OpKind::kMatmul && (entry.name.find("encoder_attn.k") != std::string::npos ||
                                            entry.name.find("encoder_attn.v") != std::string::npos)) {
        flops += entry.cost.flops;
        ++entries;
      }
    EXPECT_EQ(entries, 12);
    return flops;
  };
  const double eager = cross_kv_flops(predict(e));
  EXPECT_GT(eager, 0);
  EXPECT_DOUBLE_EQ(cross_kv_flops(predict(r)), eager);
}

// TensorRT's builder removes a concatenation by retargeting each input's producer into its slice of the output
// ("Eliminating concatenation", "Retargeting ... to ...", "After concat removal: N layers" in its verbose build
// log), and copies an input it cannot retarget ("Generating copy for ... to ..."). GoogLeNet's 9 Inception modules
// each end in a concatenation of four branch outputs that nothing else reads (Szegedy et al. 2014, figure 2b); three
// are retargeted, but the #1x1 branch is written by the layer merged with the #3x3 and #5x5 reductions, one buffer
// for all three, so it is copied: 'Generating copy for inception_3a/1x1 + inception_3a/relu_1x1 ||
// inception_3a/3x3_reduce + ... to inception_3a/output' in a TensorRT 5.1 build log (deepindeed2022/DeployUseTensorRT
// README.md), and one 'inception_<m>/1x1 copy' layer per module in TensorRT 3's sampleGoogleNet layer profile on a
// GTX 1080 Ti (arleyzhang/arleyzhang.github.io.sources@a4034bbc, TensorRT-4-Profiling-and-16-bit-Inference.md). So 9
// copy kernels, as many as PyTorch's torch.cat runs, but moving the #1x1 branches only (64-384 of each module's
// 256-1024 output channels, Szegedy et al. table 1). DenseNet-121's concatenations (Huang et al. 2017: 58 dense layers in
// blocks of 6, 12, 24, 16, each reading the concatenation of every earlier feature map in its block, plus one per
// block for the transition) read tensors that later concatenations read too, so TensorRT copies them whole and they
// keep their kernels.
TEST(TensorRtEngine, InceptionConcatenationsCopyOnlyTheMergedBranchDenseNetsAreCopied) {
  const Prediction trt = predict(engine("tesla-p40", "googlenet", 1));
  PredictRequest cat = engine("tesla-p40", "googlenet", 1);
  cat.runtime = "pytorch";
  cat.precision = "fp32";
  const Prediction torch_cat = predict(cat);
  EXPECT_DOUBLE_EQ(launches_of(torch_cat, OpKind::kDataMovement), 9);
  EXPECT_DOUBLE_EQ(launches_of(trt, OpKind::kDataMovement), 9);
  const auto moved_bytes = [](const Prediction& p) {
    double b = 0;
    for (const auto& e : p.step.entries)
      if (e.kind == OpKind::kDataMovement) b += e.cost.bytes;
    return b;
  };
  // From Szegedy et al. table 1 at batch 1: the #1x1 branches hold 28x28x(64+128) + 14x14x(192+160+128+112+256) +
  // 7x7x(256+384) = 348,096 of the modules' 28x28x(256+480) + 14x14x(512x3+528+832) + 7x7x(832+1024) = 1,235,584
  // output elements, and the engine's are INT8 where torch.cat's are FP32 (each read once and written once).
  EXPECT_NEAR(moved_bytes(trt) / moved_bytes(torch_cat), 348096.0 / (1235584.0 * 4.0), 0.002);
  PredictRequest dense = engine("a100-pcie-40gb", "densenet121", 8);
  dense.precision = "fp16";
  PredictRequest dense_eager = dense;
  dense_eager.runtime = "pytorch";
  const double copies = launches_of(predict(dense), OpKind::kDataMovement);
  EXPECT_GT(copies, 0);
  EXPECT_DOUBLE_EQ(copies, launches_of(predict(dense_eager), OpKind::kDataMovement));
}

// TensorRT fuses a convolution with its bias and activation ('conv1/7x7_s2 + conv1/relu_7x7') but runs a local
// response normalization as a layer of its own: 'conv2/3x3 + conv2/relu_3x3' then 'conv2/norm2' in TensorRT 3's
// sampleGoogleNet layer profile (the 1080 Ti source above), and no 'Fusing ... with .../norm...' line in the 5.1
// build log. bvlc_alexnet (Krizhevsky et al. 2012 as Caffe ships it) has two LRNs, after conv1's and conv2's ReLU;
// GoogLeNet has two, after pool1 and after conv2's ReLU. Every one is a kernel under TensorRT; ReLUs stay in the
// convolutions' epilogues (no other elementwise kernel).
TEST(TensorRtEngine, LocalResponseNormalizationRunsAsALayerOfItsOwn) {
  EXPECT_DOUBLE_EQ(launches_of(predict(engine("tesla-p40", "bvlc_alexnet", 1)), OpKind::kElementwise), 2);
  EXPECT_DOUBLE_EQ(launches_of(predict(engine("tesla-p40", "googlenet", 1)), OpKind::kElementwise), 2);
}

// TensorRT's builder times every layer's kernels at each precision the build allows and keeps the fastest: an INT8
// or FP16 build may still run a layer in FP32 ("TensorRT will choose a higher precision kernel if an implementation
// with the precision you've selected is not available, or if using it results in a higher overall runtime",
// NVIDIA/TensorRT#1762, a maintainer; the same in pytorch/TensorRT#93). So an engine built with a lower precision
// allowed is never slower than the FP32 engine of the same network and batch, on any GPU and at any batch,
// small batches included, where the kernels wait on latency rather than math.
TEST(TensorRtEngine, ALowerPrecisionEngineIsNeverSlowerThanItsFp32Engine) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> gpus = {
      {"tesla-p40", {"int8"}},  // sm_61: dp4a INT8, no fast FP16
      {"t4", {"fp16", "int8"}},
      {"a10", {"fp16", "int8"}},
      {"a100-pcie-40gb", {"fp16", "int8"}},
      {"l4", {"fp16", "int8"}}};
  for (const auto& [gpu, precisions] : gpus)
    for (const std::string model : {"resnet50_v1_5", "googlenet", "bvlc_alexnet"})
      for (const std::int64_t batch : {1, 8, 128}) {
        PredictRequest r = engine(gpu, model, batch);
        r.precision = "fp32";
        const double fp32 = predict(r).samples_per_s;
        for (const auto& precision : precisions) {
          r.precision = precision;
          EXPECT_GE(predict(r).samples_per_s, fp32) << gpu << " " << model << " batch " << batch << " " << precision;
        }
      }
}

// Techn08055/tensorrt-precision-lab (GitHub, commit 56a0f0e, video_dossier.md and profiling/nsys/*_kern_sum.csv):
// ResNet-50 at batch 1 under TensorRT 10.14 on an RTX 4050 Laptop GPU (sm_89), GPU kernel time from Nsight Systems:
// FP16 0.756 ms, INT8 0.446 ms, INT8 1.70x FP16, with 56 of 58 layers in INT8 IMMA kernels. That board is not in the
// catalog; at batch 1 the ratio is set by the kernels' K-loop steps and launch floors more than by the SM count, so
// the catalog's sm_89 boards are held to it. perfcast overstates INT8's batch-1 advantage (session 23: L4 1.81x, RTX
// 4090 2.50x; docs/calibration.md, 'TensorRT INT8 at batch 1, looked at again'): a ratchet at 50%, to be lowered.
TEST(TensorRtEngine, Int8OverFp16AtBatchOneOnAdaMatchesAMeasuredEngine) {
  for (const std::string gpu : {"l4", "rtx-4090"}) {
    PredictRequest r = engine(gpu, "resnet50_v1_5", 1);
    const double int8_us = predict(r).step.gpu_us;
    r.precision = "fp16";
    const double fp16_us = predict(r).step.gpu_us;
    ASSERT_GT(int8_us, 0) << gpu;
    EXPECT_NEAR((fp16_us / int8_us) / (0.756 / 0.446), 1.0, 0.50) << gpu << ": FP16 " << fp16_us << " us, INT8 " << int8_us << " us";
  }
}

// A measured TensorRT engine (data/published_kernels/tensorrt_engine.toml, its kernels in tensorrt_engine_kernels.csv
// beside it, README there): the kernel time an inference by kind, the kernels an inference, the CUDA-graph replay, the
// GPU files at the two ends of the board's unrecorded boost clock, and the kinds' rule for perfcast's ops.
struct MeasuredEngine {
  struct Kind {
    std::string name;
    std::vector<std::string> kernels;  // values of the kernels file's `kind` column
    std::vector<std::string> ops;      // perfcast's op names: exact, "*suffix" or "*"
  };
  std::string model, precision;
  std::int64_t batch = 1;
  double graph_replay_us = 0;
  std::string gpu_low_clock, gpu_high_clock;  // paths
  std::vector<Kind> kinds;
  std::map<std::string, double> kernel_us;  // an inference, by kind (the summary's total over its inferences)
  double kernels = 0;                       // an inference

  // The first kind that names this op.
  std::string kind_of_op(const std::string& op) const {
    for (const auto& k : kinds)
      for (const auto& pattern : k.ops)
        if (op == pattern || (!pattern.empty() && pattern[0] == '*' && op.size() >= pattern.size() - 1 &&
                              op.compare(op.size() - (pattern.size() - 1), std::string::npos, pattern, 1) == 0))
          return k.name;
    ADD_FAILURE() << "op " << op << " is in no [[kind]] of tensorrt_engine.toml";
    return "";
  }
};

MeasuredEngine measured_engine() {
  const std::string root = std::string(PERFCAST_SOURCE_DIR) + "/";
  const toml::table t = parse_toml_file(root + "data/published_kernels/tensorrt_engine.toml");
  const TomlFields f(t, "tensorrt_engine.toml");
  MeasuredEngine m;
  m.model = f.text("model");
  m.precision = f.text("precision");
  m.batch = f.count("batch");
  m.graph_replay_us = f.number("graph_replay_us");
  m.gpu_low_clock = root + f.text("gpu_file_low_clock");
  m.gpu_high_clock = root + f.text("gpu_file_high_clock");
  const auto texts = [](const toml::node_view<const toml::node>& node) {
    std::vector<std::string> out;
    if (const auto* a = node.as_array())
      for (const auto& e : *a) out.push_back(e.value_or(std::string()));
    return out;
  };
  for (const auto& node : *t["kind"].as_array()) {
    const toml::table& k = *node.as_table();
    m.kinds.push_back({k["name"].value_or(std::string()), texts(k["kernels"]), texts(k["ops"])});
  }
  io::CSVReader<4, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>> in(
      root + "data/published_kernels/tensorrt_engine_kernels.csv");
  in.read_header(io::ignore_extra_column, "kind", "instances", "inferences", "total_ns");
  std::string kernel_kind;
  double instances = 0, inferences = 0, total_ns = 0;
  while (in.read_row(kernel_kind, instances, inferences, total_ns)) {
    const auto kind = std::find_if(m.kinds.begin(), m.kinds.end(), [&](const MeasuredEngine::Kind& k) {
      return std::find(k.kernels.begin(), k.kernels.end(), kernel_kind) != k.kernels.end();
    });
    EXPECT_NE(kind, m.kinds.end()) << "kernel kind " << kernel_kind << " is in no [[kind]] of tensorrt_engine.toml";
    if (kind == m.kinds.end()) continue;
    m.kernel_us[kind->name] += total_ns / inferences / 1000;
    m.kernels += instances / inferences;
  }
  return m;
}

// A whole INT8 TensorRT engine at batch 1, kernel by kernel: ResNet-50 through TensorRT 10.14 on a GeForce RTX 4050
// Laptop GPU (sm_89, 20 SMs), Nsight Systems kernel summary of 320 inferences (Techn08055/tensorrt-precision-lab,
// commit 56a0f0e, profiling/nsys/int8_cuda_gpu_kern_sum.csv), read by kind from the engine's files (MeasuredEngine
// above; tools/trt_engine_kernels.py prints the table). The board's boost clock is set by the laptop's power limit and
// the run did not record it, so the measurement brackets perfcast rather than pins it: costed at the top of the boost
// range the engine's kernels may not be slower than measured, costed at the bottom not faster. A per-kernel floor
// perfcast lacked would show as the second; one it overstated, or a K-loop wait too long, as the first. Tolerances:
// +-10% for run-to-run and build-to-build tactic spread; the 3x3 convolutions, which perfcast costs 30% slow at the
// top clock (tensor-bound at batch 1 where TensorRT's avdt / t1r3s3 tactics take 6.8-8.8 us), hold a ratchet at 1.35.
// The global pool (5.8 us measured, perfcast's 2.5 us kernel floor) is the one kernel below the bracket and is not
// asserted.
TEST(TensorRtEngine, Int8EngineKernelsByKindAndItsGraphReplayAtBatchOne) {
  const MeasuredEngine m = measured_engine();
  ASSERT_EQ(m.kernel_us.size(), m.kinds.size()) << "a [[kind]] with no kernel in the summary";
  // perfcast's per-kind time: an op without a launch of its own counts with the kernel before it.
  const auto by_kind = [&](const Prediction& p) {
    std::map<std::string, double> out;
    std::string kind;
    for (const auto& e : p.step.entries) {
      if (e.cost.launches > 0) kind = m.kind_of_op(e.name);
      if (!kind.empty()) out[kind] += e.cost.time_us;
    }
    return out;
  };
  const auto measured_engine_on = [&](const std::string& gpu_file) {
    PredictRequest r = engine(gpu_file, m.model, m.batch);
    r.precision = m.precision;
    return predict(r);
  };
  const Prediction top = measured_engine_on(m.gpu_high_clock);
  const Prediction bottom = measured_engine_on(m.gpu_low_clock);
  auto top_kinds = by_kind(top), bottom_kinds = by_kind(bottom);
  EXPECT_DOUBLE_EQ(top.step.launches, m.kernels);
  for (const auto& [kind, us] : m.kernel_us) {
    if (kind == "avgpool") continue;
    EXPECT_GE(bottom_kinds[kind], 0.90 * us) << kind << " at the bottom clock";
    EXPECT_LE(top_kinds[kind], (kind == "conv3x3" ? 1.35 : 1.10) * us) << kind << " at the top clock";
  }
  // All the kernels, every op counted with its kernel: the same bracket, with the 3x3 convolutions' excess carried
  // into the top bound as a ratchet (1.15: at the top clock perfcast charges 1.13 x the measured sum).
  double measured_all = 0, top_all = 0, bottom_all = 0;
  for (const auto& [k, v] : m.kernel_us) measured_all += v;
  for (const auto& [k, v] : top_kinds) top_all += v;
  for (const auto& [k, v] : bottom_kinds) bottom_all += v;
  EXPECT_LE(top_all, 1.15 * measured_all) << "at the top clock";
  EXPECT_GE(bottom_all, 0.90 * measured_all) << "at the bottom clock";
  // The replay is every kernel and every gap between them: perfcast's GPU time at the top clock is not shorter.
  EXPECT_GE(top.step.gpu_us, 0.90 * m.graph_replay_us);
  // The launch-to-launch gap the replay leaves room for: the summary's kernels ran at some clock of the range, and a
  // kernel's time scales at most with the clock, so at the replay's clock they take at least the measured sum x
  // bottom / top.
  const double clock_ratio = top.device.boost_clock_mhz / bottom.device.boost_clock_mhz;
  ASSERT_GT(clock_ratio, 1.0) << "the high-clock GPU file's boost clock is not above the low one's";
  const double gap_bound_us = (m.graph_replay_us - measured_all / clock_ratio) / m.kernels;
  EXPECT_LE(top.runtime.gpu_gap_per_kernel_us, gap_bound_us);
}

// The layers of two measured ResNet-50 engines at batch 1, TensorRT 10.14 (Techn08055/tensorrt-precision-lab@e7f2370b,
// profiling/layer_profile_int8.txt and layer_profile_fp16.txt; Nsight Systems kernel summaries at @56a0f0ee): both
// open with 'Reformatting CopyNode for Input Tensor 0 to node_Conv_754 ...' (layer type Reformat: the input into the
// channel-padded vectorized layout of the RGB layer); the INT8 engine runs the stem as one CaskConvActPool layer,
// 'node_Conv_754 + node_relu + node_max_pool2d', the FP16 engine its max pool as a CaskPooling layer of its own.
TEST(TensorRtEngine, StemLayersOfMeasuredEnginesReformatTheInputAndFuseTheMaxPoolUnderInt8Only) {
  const std::string fixture = measured_engine().gpu_high_clock;
  const auto launches_named = [](const Prediction& p, const std::string& name) {
    double n = 0;
    for (const auto& e : p.step.entries)
      if (e.name == name) n += e.cost.launches;
    return n;
  };
  PredictRequest r = engine(fixture, "resnet50_v1_5", 1);
  const Prediction int8 = predict(r);
  EXPECT_DOUBLE_EQ(launches_named(int8, "conv1"), 2);  // the reformat, then the convolution (+ ReLU + pool)
  EXPECT_DOUBLE_EQ(launches_named(int8, "maxpool"), 0);
  r.precision = "fp16";
  const Prediction fp16 = predict(r);
  EXPECT_DOUBLE_EQ(launches_named(fp16, "conv1"), 2);
  EXPECT_DOUBLE_EQ(launches_named(fp16, "maxpool"), 1);
  // PyTorch's cuDNN takes the 3-channel input as it is (on CUDA cores): no reformat, and its own max-pool kernel.
  r.runtime = "pytorch";
  const Prediction eager = predict(r);
  EXPECT_DOUBLE_EQ(launches_named(eager, "conv1"), 1);
  EXPECT_DOUBLE_EQ(launches_named(eager, "maxpool"), 1);
}


// The per-image rate of TensorRT 2.0 INT8 engines on the Tesla P40, from the slope of Dell EMC's batch sweep
// ('Deep Learning Inference on P40 GPUs', Mar 2017, Figure 6, images/s at batch 32 and 128; the rows of
// data/validation/check_pascal.csv): AlexNet (bvlc) 11464 and 16292/s, i.e. (128/16292 - 32/11464) / 96 = 52.8 us an
// image; GoogLeNet 5417 and 6410/s, 146.5 us an image. The sweep is a straight line in the batch from 32 to 4096 for
// both networks with an intercept of about 1 ms a call that the kernels' per-image work does not give (docs/
// calibration.md, session 30, 'TensorRT 2.0 INT8 on the P40: the sweep is a line'); whatever that per-call cost is, it
// leaves the slope alone, so the slope checks the INT8 per-image cost by itself. AlexNet within 10%; GoogLeNet, whose
// slope perfcast puts 11% low, within 15% (a ratchet, to be lowered).
TEST(TensorRtEngine, P40Int8PerImageRateMatchesTheSlopeOfAMeasuredBatchSweep) {
  const auto step_us = [](const std::string& model, std::int64_t batch) {
    PredictRequest r = engine("tesla-p40", model, batch);
    r.runtime_version = "2.0";
    return 1e6 * static_cast<double>(batch) / predict(r).samples_per_s;
  };
  const std::vector<std::pair<std::string, std::pair<double, double>>> measured = {
      {"bvlc_alexnet", {(128.0 / 16292 - 32.0 / 11464) / 96 * 1e6, 0.10}},
      {"googlenet", {(128.0 / 6410 - 32.0 / 5417) / 96 * 1e6, 0.15}}};
  for (const auto& [model, slope] : measured) {
    const double predicted = (step_us(model, 128) - step_us(model, 32)) / 96;
    EXPECT_NEAR(predicted / slope.first, 1.0, slope.second)
        << model << ": predicted " << predicted << " us an image, measured " << slope.first;
  }
}


// Szymon Migacz, '8-bit Inference with TensorRT' (GTC 2017, S7310), slide 'Results - Performance - Pascal Titan X':
// TensorRT 2.1 INT8 and FP32 engines on a Pascal Titan X (sm_61, dp4a), images/s. INT8 over FP32 at batch 1 is small
// where fully connected layers carry the weights (AlexNet 972 / 823 = 1.18x, VGG-16 393 / 261 = 1.51x) and near the
// dp4a rate at batch 128 (AlexNet 18714 / 5882 = 3.18x, VGG-16 1178 / 426 = 2.77x): an INT8 fully connected layer on
// sm_61 runs as TensorRT's 128-row int8x4 convolution tile (RuntimeProfile::dp4a_fully_connected_as_convolution), which
// computes a whole tile for one row. perfcast gave 3.4x and 2.7x at batch 1 before session 37 (1.8x and 1.9x after);
// within 60% at batch 1 (a ratchet, to be lowered) and 25% at batch 128.
TEST(TensorRtEngine, PascalInt8OverFp32RatioFollowsAPublishedTitanXTableAtBatchOneAnd128) {
  struct Published {
    std::string model;
    std::int64_t batch;
    double int8_per_s, fp32_per_s, tolerance;
  };
  const std::vector<Published> table = {{"bvlc_alexnet", 1, 972, 823, 0.60},
                                        {"vgg16", 1, 393, 261, 0.60},
                                        {"bvlc_alexnet", 128, 18714, 5882, 0.25},
                                        {"vgg16", 128, 1178, 426, 0.25}};
  for (const auto& row : table) {
    PredictRequest r = engine("titan-x-pascal", row.model, row.batch);
    r.runtime_version = "2.1";
    const double int8 = predict(r).samples_per_s;
    r.precision = "fp32";
    const double fp32 = predict(r).samples_per_s;
    const double measured = row.int8_per_s / row.fp32_per_s;
    EXPECT_NEAR((int8 / fp32) / measured, 1.0, row.tolerance)
        << row.model << " batch " << row.batch << ": predicted INT8/FP32 " << int8 / fp32 << ", measured " << measured;
  }
}

}  // namespace
}  // namespace perfcast
