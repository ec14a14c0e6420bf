// PyTorch profiler (Kineto) traces: reading real files (tests/data/kineto, facts from their upstream description),
// sorting kernels by the library naming conventions, what a trace measured per step (traces written here, whose
// expected figures follow from the events they hold), the model a trace with input shapes becomes, and the CLI.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <toml++/toml.h>

#include "analysis/trace_analysis.h"
#include "cli_runner.h"
#include "core/error.h"
#include "device/catalog.h"
#include "graph/op_arithmetic.h"
#include "import/kineto_trace.h"
#include "import/model_source.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace perfcast;

const fs::path kFixtures = fs::path(PERFCAST_SOURCE_DIR) / "tests" / "data" / "kineto";

std::string fixture(const std::string& name) { return (kFixtures / name).string(); }

// ---- writing small traces -------------------------------------------------------------------------------------

json cpu_op(const std::string& name, double ts, double dur, json dims = json::array(), json types = json::array(),
            json concrete = nullptr, int tid = 1) {
  json e = {{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", 1}, {"tid", tid}, {"ts", ts}, {"dur", dur}};
  e["args"] = {{"External id", 1}};
  if (!dims.empty()) e["args"]["Input Dims"] = dims;
  if (!types.empty()) e["args"]["Input type"] = types;
  if (!concrete.is_null()) e["args"]["Concrete Inputs"] = concrete;
  return e;
}

json kernel(const std::string& name, double ts, double dur, int stream = 7) {
  return {{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"pid", 0}, {"tid", stream}, {"ts", ts}, {"dur", dur},
          {"args", {{"device", 0}, {"stream", stream}, {"correlation", 1}}}};
}

json launch(double ts, int tid = 1, long correlation = 1) {
  return {{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 1}, {"tid", tid}, {"ts", ts},
          {"dur", 5}, {"args", {{"correlation", correlation}}}};
}

// A kernel launched from thread `tid` at `ts`: the launch call and the kernel, tied by their correlation id.
void push_launched(json& ev, int tid, double ts, long correlation, const std::string& kernel_name, double kernel_ts,
                   double kernel_dur) {
  ev.push_back(launch(ts, tid, correlation));
  json k = kernel(kernel_name, kernel_ts, kernel_dur);
  k["args"]["correlation"] = correlation;
  ev.push_back(k);
}

// A CPU op on thread `tid` that recorded an autograd sequence number (-1: none).
json seq_op(const std::string& name, double ts, double dur, int tid, long seq, json dims = json::array()) {
  json e = cpu_op(name, ts, dur, dims, json::array(), nullptr, tid);
  if (seq >= 0) e["args"]["Sequence number"] = seq;
  return e;
}

json rtx3090() {
  return json::array({{{"id", 0}, {"name", "NVIDIA GeForce RTX 3090"}, {"numSms", 82}, {"computeMajor", 8},
                       {"computeMinor", 6}, {"totalGlobalMem", 25447170048LL}}});
}

fs::path write_trace(const fs::path& dir, const std::string& name, const json& events, bool gzip = false) {
  json doc = {{"schemaVersion", 1}, {"deviceProperties", rtx3090()}, {"traceEvents", events}};
  const fs::path p = dir / name;
  const std::string text = doc.dump();
  if (gzip) {
    gzFile f = gzopen(p.string().c_str(), "wb");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
  } else {
    test::write_text(p, text);
  }
  return p;
}

// Two profiler steps of 10 ms. In each: a 0.5 ms host-to-device copy, a 4 ms SGEMM, a 1 ms elementwise kernel and a
// 1 ms NCCL kernel on another stream that overlaps the elementwise one by 0.5 ms; one more kernel after the steps.
// Per step: busy = [0, 6 ms] of the step = 6 ms, idle 4 ms, kernel time 6 ms in 3 kernels.
json two_step_events(double step_dur_us = 10000) {
  json ev = json::array();
  for (int s = 0; s < 2; ++s) {
    const double t0 = 1000 + s * step_dur_us;
    ev.push_back(cpu_op("ProfilerStep#" + std::to_string(s + 1), t0, step_dur_us));
    ev.push_back({{"ph", "X"}, {"cat", "gpu_memcpy"}, {"name", "Memcpy HtoD (Pageable -> Device)"}, {"pid", 0},
                  {"tid", 7}, {"ts", t0}, {"dur", 500}, {"args", {{"device", 0}, {"bytes", 1000000}}}});
    ev.push_back(kernel("ampere_sgemm_128x64_nn", t0 + 500, 4000));
    ev.push_back(kernel("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float> >(int)",
                        t0 + 4500, 1000));
    ev.push_back(kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", t0 + 5000, 1000, 20));
    for (int k = 0; k < 3; ++k) ev.push_back(launch(t0 + 10 * k));
  }
  ev.push_back(kernel("ampere_sgemm_128x64_nn", 1000 + 2 * step_dur_us + 5000, 500));
  ev.push_back(launch(1000 + 2 * step_dur_us + 100));
  return ev;
}

// One training step of a 784-256-10 MLP under autocast: aten::linear on FP32 inputs calls aten::addmm on FP16
// copies; backward and the optimizer run their own ops; aten::erfinv has no cost rule.
json mlp_events() {
  json ev = json::array();
  ev.push_back(cpu_op("ProfilerStep#1", 0, 10000));
  ev.push_back(cpu_op("aten::linear", 10, 100, {{64, 784}, {256, 784}, {256}}, {"float", "float", "float"}));
  ev.push_back(cpu_op("aten::t", 12, 2, {{256, 784}}, {"c10::Half"}));
  ev.push_back(cpu_op("aten::addmm", 20, 50, {{256}, {64, 784}, {784, 256}}, {"c10::Half", "c10::Half", "c10::Half"}));
  ev.push_back(cpu_op("aten::relu", 120, 10, {{64, 256}}, {"c10::Half"}));
  ev.push_back(cpu_op("aten::linear", 140, 100, {{64, 256}, {10, 256}, {10}}, {"float", "float", "float"}));
  ev.push_back(cpu_op("aten::addmm", 150, 50, {{10}, {64, 256}, {256, 10}}, {"c10::Half", "c10::Half", "c10::Half"}));
  ev.push_back(cpu_op("aten::cross_entropy_loss", 250, 20, {{64, 10}, {64}}, {"float", "long int"}));
  ev.push_back(cpu_op("aten::to", 280, 5, {{64, 10}}, {"float"}));
  ev.push_back(cpu_op("aten::erfinv", 290, 5, {{64}}, {"float"}));
  ev.push_back(cpu_op("autograd::engine::evaluate_function: AddmmBackward0", 400, 100));
  ev.push_back(cpu_op("aten::mm", 410, 20, {{64, 10}, {10, 256}}, {"c10::Half", "c10::Half"}));
  ev.push_back(cpu_op("Optimizer.step#SGD.step", 600, 100));
  ev.push_back(cpu_op("aten::add_", 610, 10, {{256, 784}, {256, 784}, {}}, {"float", "float", "Scalar"}));
  ev.push_back(kernel("ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_tn", 30, 40));
  ev.push_back(kernel("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<float>(int)", 620, 10));
  return ev;
}

// A CNN forward pass at batch 8: convolution geometry from Concrete Inputs where the trace has them, else from the
// next operator's input shape.
json cnn_events() {
  json ev = json::array();
  ev.push_back(cpu_op("aten::conv2d", 0, 10, {{8, 3, 224, 224}, {64, 3, 7, 7}, {}}, {"float", "float", ""},
                      {"", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "1"}));
  ev.push_back(cpu_op("aten::batch_norm", 20, 10, {{8, 64, 112, 112}, {64}, {64}, {64}, {64}}));
  ev.push_back(cpu_op("aten::relu_", 40, 10, {{8, 64, 112, 112}}));
  ev.push_back(cpu_op("aten::max_pool2d", 60, 10, {{8, 64, 112, 112}, {}, {}, {}, {}, {}}, {"float"},
                      {"", "[3, 3]", "[2, 2]", "[1, 1]", "[1, 1]", "False"}));
  ev.push_back(cpu_op("aten::conv2d", 80, 10, {{8, 64, 56, 56}, {128, 64, 3, 3}, {128}}));
  ev.push_back(cpu_op("aten::relu", 100, 10, {{8, 128, 28, 28}}));
  ev.push_back(cpu_op("aten::adaptive_avg_pool2d", 120, 10, {{8, 128, 28, 28}, {}}, {"float", ""}, {"", "[1, 1]"}));
  ev.push_back(cpu_op("aten::flatten", 140, 5, {{8, 128, 1, 1}}));
  ev.push_back(cpu_op("aten::linear", 150, 10, {{8, 128}, {1000, 128}, {1000}}));
  ev.push_back(kernel("sm86_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw", 5, 30));
  return ev;
}

class TraceCli : public test::ScratchDirTest {};

// ---- real files ---------------------------------------------------------------------------------------------

TEST(KinetoFixtures, AlexNetTraceHasItsKernelsAndDeviceButNoShapes) {
  const KinetoTrace t = read_kineto_trace(fixture("benchmark_result_2869224_1695835535_trace.json.gz"));
  EXPECT_EQ(t.kernels.size(), 79u);
  ASSERT_FALSE(t.devices.empty());
  EXPECT_EQ(t.devices[0].name, "NVIDIA A100-PG509-200");
  EXPECT_EQ(t.devices[0].sm_count, 108);
  EXPECT_EQ(t.devices[0].compute_major, 8);
  const TraceSummary s = summarize_trace(t);
  EXPECT_FALSE(s.has_shapes);
  // The A100 40 GB boards share chip, SM count and memory: both match, and the report says so.
  std::vector<std::string> ids = catalog_gpus_for(t.devices[0]);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"a100-pcie-40gb", "a100-sxm4-40gb"}));
  try {
    (void)model_from_trace(fixture("benchmark_result_2869224_1695835535_trace.json.gz"));
    FAIL() << "a trace without shapes cannot become a model";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("record_shapes=True"), std::string::npos) << e.what();
  }
}

TEST(KinetoFixtures, SampledTraceHasItsKernelsAndShapedMatmuls) {
  const KinetoTrace t = read_kineto_trace(fixture("sampled_rank-1.json.gz"));
  EXPECT_EQ(t.kernels.size(), 1104u);
  EXPECT_TRUE(t.devices.empty());
  const std::set<std::string> matmuls = {"aten::mm", "aten::linear", "aten::addmm", "aten::matmul", "aten::bmm"};
  const auto shaped = std::count_if(t.cpu_ops.begin(), t.cpu_ops.end(), [&](const TraceCpuOp& op) {
    return matmuls.count(op.name) && !op.input_dims.empty();
  });
  EXPECT_EQ(shaped, 579);
  EXPECT_TRUE(summarize_trace(t).has_backward);
}

TEST(KinetoFixtures, SmallTracesReadWhole) {
  EXPECT_EQ(read_kineto_trace(fixture("benchmark_simple_add_trace.json.gz")).kernels.size(), 4u);
  const KinetoTrace triton = read_kineto_trace(fixture("triton_example.json.gz"));
  ASSERT_EQ(triton.kernels.size(), 1u);
  EXPECT_EQ(kernel_class(triton.kernels[0].name), "elementwise");  // Inductor's pointwise kernel
  const KinetoTrace amd = read_kineto_trace(fixture("mi250_minitoy_train_ROCm6_2_kineto.json.gz"));
  EXPECT_FALSE(amd.kernels.empty());
  ASSERT_FALSE(amd.devices.empty());
  EXPECT_EQ(catalog_gpu_for(amd.devices[0]), "");  // an AMD GPU is not in the catalog
}

// ---- kernel names -------------------------------------------------------------------------------------------

TEST(KernelClasses, FollowLibraryNamingConventions) {
  struct Case {
    const char* name;
    const char* cls;
    bool tensor_cores;
  };
  const Case cases[] = {
      {"volta_h884gemm_64x64_ldg8_nn", "matmul", true},
      {"turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn", "matmul", true},
      {"ampere_sgemm_32x32_sliced1x4_tn", "matmul", false},
      {"maxwell_sgemm_128x64_nt", "matmul", false},
      {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw", "conv", true},
      {"void cudnn::detail::implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false>(int)", "conv", false},
      {"cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1", "conv", false},
      {"void fft2d_r2c_32x32<float, false, 1u, false>(float2*)", "conv", false},
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "communication", false},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", "communication", false},
      {"void at::native::batch_norm_collect_statistics_kernel<at::native::InvStd, float>(int)", "norm", false},
      {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct)", "norm", false},
      {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int)", "norm", false},
      {"void (anonymous namespace)::softmax_warp_forward<float, float, float, 9, false>(float*)", "softmax", false},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>(int)", "elementwise", false},
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::TensorListMetadata<4> >(int)",
       "optimizer", false},
      {"fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel)", "attention", true},
      {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4> >(Flash_fwd_params)", "attention", true},
      {"void fbgemm_gpu::permute_2D_data_kernel<float>(int)", "embedding", false},
      {"void at::native::(anonymous namespace)::max_pool_forward_nchw<float>(int)", "pool", false},
      {"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true>(int)", "elementwise", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(kernel_class(c.name), c.cls) << c.name;
    EXPECT_EQ(kernel_uses_tensor_cores(c.name), c.tensor_cores) << c.name;
  }
  EXPECT_EQ(short_kernel_name("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<float>(int)"),
            "at::native::multi_tensor_apply_kernel");
}

TEST(CatalogMatch, DeviceNamesMapToCatalogIds) {
  EXPECT_EQ(catalog_gpu_for({0, "NVIDIA GeForce RTX 3090", 82, 8, 6, 25447170048.0}), "rtx-3090");
  EXPECT_EQ(catalog_gpu_for({0, "NVIDIA H100 80GB HBM3", 132, 9, 0, 85520809984.0}), "h100-sxm5-80gb");
  EXPECT_EQ(catalog_gpu_for({0, "NVIDIA H100 PCIe", 114, 9, 0, 85520809984.0}), "h100-pcie-80gb");
  EXPECT_EQ(catalog_gpu_for({0, "NVIDIA GeForce GTX 1080 Ti", 28, 6, 1, 11720130560.0}), "gtx-1080-ti");
  EXPECT_EQ(catalog_gpu_for({0, "Some Future GPU", 500, 12, 0, 1e12}), "");
}

// ---- what a trace measured ------------------------------------------------------------------------------------

TEST_F(TraceCli, SummaryAddsUpTheStepsEvents) {
  const KinetoTrace t = read_kineto_trace(write_trace(dir_, "steps.json", two_step_events()).string());
  const TraceSummary s = summarize_trace(t);
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.gpu_id, "rtx-3090");
  EXPECT_NEAR(s.step_ms, 10.0, 1e-9);
  EXPECT_NEAR(s.busy_ms, 6.0, 1e-9);  // copy + GEMM + elementwise, the NCCL kernel overlapping it by half
  EXPECT_NEAR(s.idle_ms, 4.0, 1e-9);
  EXPECT_NEAR(s.kernel_ms, 6.0, 1e-9);
  EXPECT_NEAR(s.kernels, 3.0, 1e-9);
  EXPECT_NEAR(s.launches, 3.0, 1e-9);
  EXPECT_NEAR(s.h2d_ms, 0.5, 1e-9);
  EXPECT_NEAR(s.h2d_bytes, 1e6, 1e-6);
  EXPECT_EQ(s.bound, "host");  // idle 40% of the step
  ASSERT_EQ(s.classes.size(), 3u);
  EXPECT_EQ(s.classes[0].cls, "matmul");
  EXPECT_NEAR(s.classes[0].ms, 4.0, 1e-9);
  EXPECT_NEAR(s.tensor_core_share, 0.0, 1e-12);  // SGEMM
  EXPECT_EQ(s.precision, "fp32");
  // Steps of 6 ms leave the GPU no idle time: kernel time bounds the step.
  const TraceSummary busy = summarize_trace(read_kineto_trace(write_trace(dir_, "busy.json", two_step_events(6000)).string()));
  EXPECT_EQ(busy.bound, "gpu");
  EXPECT_NEAR(busy.idle_ms, 0.0, 1e-9);
}

TEST_F(TraceCli, GzipAndPlainReadAlike) {
  const auto plain = read_kineto_trace(write_trace(dir_, "t.json", two_step_events()).string());
  const auto gz = read_kineto_trace(write_trace(dir_, "t.json.gz", two_step_events(), true).string());
  EXPECT_EQ(plain.kernels.size(), gz.kernels.size());
  EXPECT_NEAR(summarize_trace(plain).busy_ms, summarize_trace(gz).busy_ms, 1e-12);
  EXPECT_TRUE(looks_like_trace((dir_ / "t.json").string()));
}

// ---- the model a trace becomes --------------------------------------------------------------------------------

TEST_F(TraceCli, MlpTraceBecomesItsForwardOps) {
  const fs::path p = write_trace(dir_, "mlp.json", mlp_events());
  const ModelSource m = model_from_trace(p.string());
  EXPECT_EQ(m.natural_batch, 64);
  EXPECT_EQ(m.uncosted, (std::vector<std::string>{"1 x aten::erfinv not costed"}));
  const Graph g = m.build(ModelOptions{64, 0});
  ASSERT_EQ(g.ops.size(), 4u);  // linear, relu, linear, loss: nested addmm, backward, optimizer and casts left out
  EXPECT_EQ(g.ops[0].kind, OpKind::kMatmul);
  EXPECT_EQ(g.ops[1].kind, OpKind::kElementwise);
  EXPECT_EQ(g.ops[2].kind, OpKind::kMatmul);
  EXPECT_EQ(g.ops[3].kind, OpKind::kLoss);
  EXPECT_EQ(g.params(), 784 * 256 + 256 + 256 * 10 + 10);  // 203,530 as torch counts nn.Linear(784,256), (256,10)
  EXPECT_EQ(g.ops[2].inputs, (std::vector<int>{1}));       // the second linear reads the ReLU's output
  const Graph g128 = m.build(ModelOptions{128, 0});
  EXPECT_EQ(g128.ops[0].out_shape, (std::vector<std::int64_t>{128, 256}));
  const TraceSummary s = summarize_trace(read_kineto_trace(p.string()));
  EXPECT_TRUE(s.has_backward);
  EXPECT_EQ(s.precision, "amp");  // FP32 module inputs, FP16 GEMMs
}

TEST_F(TraceCli, CnnTraceRecoversConvolutionGeometry) {
  const ModelSource m = model_from_trace(write_trace(dir_, "cnn.json", cnn_events()).string());
  EXPECT_EQ(m.natural_batch, 8);
  const Graph g = m.build(ModelOptions{8, 0});
  ASSERT_EQ(g.ops.size(), 8u);  // flatten is a view
  const Op& stem = g.ops[0];
  ASSERT_EQ(stem.kind, OpKind::kConv);
  EXPECT_EQ(stem.conv.stride[0], 2);
  EXPECT_EQ(stem.conv.pad[0], 3);
  EXPECT_EQ(stem.conv.out[0], 112);
  EXPECT_EQ(g.ops[3].out_shape, (std::vector<std::int64_t>{8, 64, 56, 56}));  // 3x3/2 max pool, padding 1
  const Op& conv2 = g.ops[4];
  ASSERT_EQ(conv2.kind, OpKind::kConv);
  EXPECT_EQ(conv2.conv.stride[0], 2);  // 56 -> 28, read from the ReLU that follows
  EXPECT_EQ(conv2.conv.pad[0], 1);
  EXPECT_EQ(conv2.conv.out[0], 28);
  // conv 3*64*7*7, batch norm 2*64, conv 64*128*3*3 + 128, linear 128*1000 + 1000.
  EXPECT_EQ(g.params(), 9408 + 128 + 73856 + 129000);
}

// A 3D U-Net decoder step as torch.profiler records it: conv3d, ReLU, then nn.ConvTranspose3d(16, 8, kernel 2,
// stride 2) upsampling 8^3 to 16^3. It was listed as "not costed", so the trace's model lost its decoder. Its
// arithmetic is torch's: weight [C_in, C_out, 2, 2, 2] + bias = 16*8*8 + 8 parameters; each input voxel meets
// every output channel through every kernel tap, C_in*C_out*k^3*D^3 multiply-adds per sample.
TEST_F(TraceCli, TransposedConvolution3dIsCosted) {
  const auto events = [](bool concrete, const std::string& output_padding) {
    json ev = json::array();
    ev.push_back(cpu_op("aten::conv3d", 0, 10, {{2, 4, 8, 8, 8}, {16, 4, 3, 3, 3}, {16}}, {"float", "float", "float"},
                        {"", "", "", "[1, 1, 1]", "[1, 1, 1]", "[1, 1, 1]", "1"}));
    ev.push_back(cpu_op("aten::relu", 20, 10, {{2, 16, 8, 8, 8}}));
    const json c = concrete ? json{"", "", "", "[2, 2, 2]", "[0, 0, 0]", output_padding, "1", "[1, 1, 1]"} : json(nullptr);
    ev.push_back(cpu_op("aten::conv_transpose3d", 40, 10, {{2, 16, 8, 8, 8}, {16, 8, 2, 2, 2}, {8}},
                        {"float", "float", "float"}, c));
    ev.push_back(cpu_op("aten::relu", 60, 10, {{2, 8, 16, 16, 16}}));
    ev.push_back(kernel("cudnn_convolution_kernel", 5, 30));
    return ev;
  };
  for (const bool concrete : {true, false}) {
    SCOPED_TRACE(concrete ? "stride from Concrete Inputs" : "stride from the next op's input");
    const ModelSource m = model_from_trace(write_trace(dir_, "unet.json", events(concrete, "[0, 0, 0]")).string());
    EXPECT_TRUE(m.uncosted.empty()) << m.uncosted.front();
    const Graph g = m.build(ModelOptions{2, 0});
    ASSERT_EQ(g.ops.size(), 4u);
    const Op& up = g.ops[2];
    ASSERT_EQ(up.kind, OpKind::kConv);
    EXPECT_TRUE(up.conv.transposed);
    EXPECT_EQ(up.out_shape, (std::vector<std::int64_t>{2, 8, 16, 16, 16}));
    EXPECT_EQ(g.params(), (4 * 16 * 27 + 16) + (16 * 8 * 8 + 8));
    EXPECT_DOUBLE_EQ(conv_linear_macs(g), 16.0 * 4 * 27 * 512 + 16.0 * 8 * 8 * 512);  // per sample
  }
  // Output padding is outside the graph's transposed convolution: listed, never dropped.
  const ModelSource odd = model_from_trace(write_trace(dir_, "odd.json", events(true, "[1, 1, 1]")).string());
  ASSERT_EQ(odd.uncosted.size(), 1u);
  EXPECT_EQ(odd.uncosted[0], "1 x aten::conv_transpose3d not costed");
}

// MONAI's 3D U-Nets normalise with instance norm. torch.nn.InstanceNorm3d(16) has no parameters (affine=False
// is its default); InstanceNorm3d(16, affine=True) has a weight and a bias, 32. It was listed as not costed.
TEST_F(TraceCli, InstanceNormIsCostedWithTorchsParameterCount) {
  for (const bool affine : {false, true}) {
    SCOPED_TRACE(affine ? "affine" : "no affine weight");
    json ev = json::array();
    const json w = affine ? json{16} : json::array();
    ev.push_back(cpu_op("aten::instance_norm", 0, 10, {{2, 16, 8, 8, 8}, w, w, json::array(), json::array()}));
    ev.push_back(cpu_op("aten::relu", 20, 10, {{2, 16, 8, 8, 8}}));
    ev.push_back(kernel("instance_norm_kernel", 5, 30));
    const ModelSource m = model_from_trace(write_trace(dir_, "inorm.json", ev).string());
    EXPECT_TRUE(m.uncosted.empty()) << m.uncosted.front();
    const Graph g = m.build(ModelOptions{2, 0});
    ASSERT_EQ(g.ops.size(), 2u);
    EXPECT_EQ(g.ops[0].kind, OpKind::kNorm);
    EXPECT_EQ(g.ops[0].out_shape, (std::vector<std::int64_t>{2, 16, 8, 8, 8}));
    EXPECT_EQ(g.params(), affine ? 32 : 0);
  }
}

// ---- the command line ------------------------------------------------------------------------------------------

TEST_F(TraceCli, TraceCommandPrintsMeasuredAndPredicted) {
  write_trace(dir_, "mlp.json", mlp_events());
  const auto r = run("trace mlp.json --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["gpu"], "rtx-3090");
  EXPECT_EQ(j["training"], true);
  ASSERT_TRUE(j["prediction"].is_object());
  EXPECT_EQ(j["prediction"]["mode"], "train");
  EXPECT_EQ(j["prediction"]["precision"], "amp");
  EXPECT_EQ(j["prediction"]["batch"], 64);
  EXPECT_GT(j["prediction"]["predicted_step_ms"].get<double>(), 0);
  const auto html = run("trace mlp.json --html page.html");
  ASSERT_EQ(html.code, 0) << html.err;
  const std::string page = test::slurp(dir_ / "page.html");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("perfcast on the same operators"), std::string::npos);
  EXPECT_NE(page.find("<td>matmul</td>"), std::string::npos);
  EXPECT_EQ(page.find("<script src"), std::string::npos);  // self-contained: its scripts are inline
  const auto text = run("trace mlp.json --gpu gtx-1080-ti");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("perfcast on the same operators"), std::string::npos);
}

TEST_F(TraceCli, PredictTakesATraceAsTheModel) {
  write_trace(dir_, "cnn.json", cnn_events());
  const auto r = run("predict --model cnn.json --gpu v100-sxm2-16gb --mode infer --batch 32 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["batch"], 32);
}

TEST_F(TraceCli, BadTracesAreOneLineErrors) {
  const auto check = [&](const std::string& args, const std::string& says) {
    const auto r = run(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  check("trace missing.json", "no such file");
  test::write_text(dir_ / "cfg.json", R"({"hidden_size": 768})");
  check("trace cfg.json", "no traceEvents");
  // The Chrome trace format's bare-array form, as torch.autograd.profiler's legacy export_chrome_trace writes it
  // (pytorch/pytorch torch/autograd/profiler_util.py): a Chrome trace, but not one perfcast reads; the error says
  // which profiler writes the traces it does.
  test::write_text(dir_ / "legacy.json",
                   R"([{"name": "aten::conv3d", "ph": "X", "ts": 10, "dur": 900, "tid": 1, "pid": "CPU functions", )"
                   R"("args": {}}])");
  check("trace legacy.json", "torch.profiler (Kineto)");
  check("predict --model legacy.json", "torch.profiler (Kineto)");
  test::write_text(dir_ / "broken.json", R"({"traceEvents": [)");
  check("trace broken.json", "not valid JSON");
  const std::string gz = test::slurp(fixture("sampled_rank-1.json.gz"));
  test::write_text(dir_ / "cut.json.gz", gz.substr(0, gz.size() / 2));
  check("trace cut.json.gz", "cut.json.gz");
  check("predict --model " + fixture("benchmark_result_2869224_1695835535_trace.json.gz"), "record_shapes=True");
  write_trace(dir_, "mlp.json", mlp_events());
  check("trace mlp.json --top -1", "--top");
  check("trace mlp.json --gpu gtx-1080-tii", "did you mean 'gtx-1080-ti'");
}

// advise --trace without --model costs the trace's own operators; a trace without shapes has two ways out, and
// the one-line error names both (README: record_shapes=True, or --model ID).
TEST_F(TraceCli, AdviseOnATraceWithoutShapesNamesBothWaysOut) {
  const std::string trace = fixture("benchmark_result_2869224_1695835535_trace.json.gz");
  const auto r = run("advise --trace " + trace + " --gpu a100-sxm4-40gb");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("record_shapes=True"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--model ID"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(TraceCli, TraceWithoutShapesStillReportsWhatItMeasured) {
  const auto r = run("trace " + fixture("benchmark_result_2869224_1695835535_trace.json.gz"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no input shapes"), std::string::npos);
  EXPECT_NE(r.out.find("kernel time by class"), std::string::npos);
}


// ---- what the review of the first version found -----------------------------------------------------------------

TEST_F(TraceCli, CommunicationBoundHoldsOverSeveralSteps) {
  // Per step: a 2 ms GEMM, then a 3 ms NCCL kernel; 5 ms steps, three of them.
  json ev = json::array();
  for (int s = 0; s < 3; ++s) {
    const double t0 = 5000.0 * s;
    ev.push_back(cpu_op("ProfilerStep#" + std::to_string(s), t0, 5000));
    ev.push_back(kernel("ampere_sgemm_128x64_nn", t0, 2000));
    ev.push_back(kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", t0 + 2000, 3000, 20));
  }
  const TraceSummary s = summarize_trace(read_kineto_trace(write_trace(dir_, "comm.json", ev).string()));
  EXPECT_EQ(s.steps, 3);
  EXPECT_EQ(s.bound, "communication");
  EXPECT_NE(s.verdict.find("60%"), std::string::npos) << s.verdict;  // 3 ms of 5 ms busy
}

TEST_F(TraceCli, TruncatedLastStepAndUnmarkedStepsAreLeftOut) {
  json ev = json::array();
  ev.push_back(cpu_op("ProfilerStep#1", 0, 10000));
  ev.push_back(cpu_op("ProfilerStep#2", 10000, 10000));
  ev.push_back(cpu_op("ProfilerStep#3", 20000, 300));  // profiling stopped here
  ev.push_back(cpu_op("ProfilerStep#0", -500, -1));    // no duration
  ev.push_back(kernel("ampere_sgemm_128x64_nn", 100, 5000));
  ev.push_back(kernel("ampere_sgemm_128x64_nn", 10100, 5000));
  const TraceSummary s = summarize_trace(read_kineto_trace(write_trace(dir_, "cut.json", ev).string()));
  EXPECT_EQ(s.steps, 2);
  EXPECT_NEAR(s.step_ms, 10.0, 1e-9);
  EXPECT_NEAR(s.kernels, 1.0, 1e-9);
}

TEST_F(TraceCli, OperatorsAreFoundOnTheirOwnThreadAndBatchComesFromTheFirstCostedOp) {
  json ev = json::array();
  json step = cpu_op("ProfilerStep#1", 0, 1000, json::array(), json::array(), nullptr, 9);
  step["cat"] = "user_annotation";
  ev.push_back(step);
  ev.push_back(cpu_op("aten::mean", 10, 5, {{7, 3}}));                     // costed, but not the batch
  ev.push_back(cpu_op("aten::bmm", 20, 5, {{2, 0, 3}, {2, 3, 4}}));        // an empty tensor: not costed, no crash
  ev.push_back(cpu_op("aten::linear", 30, 5, {{5, 128}, {64, 128}, {64}}));
  ev.push_back(kernel("ampere_sgemm_128x64_nn", 31, 4));
  const ModelSource m = model_from_trace(write_trace(dir_, "tid.json", ev).string());
  EXPECT_EQ(m.natural_batch, 5);
  EXPECT_EQ(m.uncosted, (std::vector<std::string>{"1 x aten::bmm not costed"}));
  EXPECT_EQ(m.build(ModelOptions{5, 0}).params(), 128 * 64 + 64);
}

// Memory-bound operators cost their bytes read + written, counted by hand from the shapes the trace recorded
// (fp32: 4 bytes an element); backward moves the same bytes (the gradient's slices, broadcast or scatter).
TEST_F(TraceCli, ConcatReductionsAndInterpolationCostTheirBytesFromTheTracedShapes) {
  json ev = json::array();
  // PyTorch 2.x records a TensorList input as a list of shapes: cat([8,16], [8,48]) along dim 1 -> [8,64].
  ev.push_back(cpu_op("aten::linear", 0, 5, {{8, 32}, {16, 32}, {16}}));
  ev.push_back(cpu_op("aten::cat", 10, 5, {json::array({{8, 16}, {8, 48}}), {}}, {"TensorList", "Scalar"}, {"", "1"}));
  ev.push_back(cpu_op("aten::stack", 20, 5, {json::array({{8, 64}, {8, 64}, {8, 64}}), {}}, {"TensorList", "Scalar"},
                      {"", "0"}));
  ev.push_back(cpu_op("aten::sum", 30, 5, {{3, 8, 64}, {}, {}, {}}, {"float", "", "Scalar", ""}, {"", "[0]", "False", ""}));
  ev.push_back(cpu_op("aten::mean", 40, 5, {{8, 64}, {}, {}, {}}, {"float", "", "Scalar", ""}, {"", "[-1]", "True", ""}));
  ev.push_back(cpu_op("aten::upsample_trilinear3d", 50, 5, {{8, 2, 4, 4, 4}, {}, {}, {}}, {"float", "", "Scalar", ""},
                      {"", "[8, 8, 8]", "False", ""}));
  ev.push_back(cpu_op("aten::max_pool3d_with_indices", 60, 5, {{8, 2, 8, 8, 8}, {}, {}, {}, {}, {}},
                      {"float", "", "", "", "", "Scalar"}, {"", "[2, 2, 2]", "[2, 2, 2]", "[0, 0, 0]", "[1, 1, 1]", "False"}));
  ev.push_back(cpu_op("aten::index_select", 70, 5, {{100, 64}, {}, {40}}, {"float", "Scalar", "long"}, {"", "0", ""}));
  const ModelSource m = model_from_trace(write_trace(dir_, "streaming.json", ev).string());
  EXPECT_TRUE(m.uncosted.empty()) << m.uncosted.front();
  EXPECT_EQ(m.natural_batch, 8);
  const Graph g = m.build(ModelOptions{8, 0});
  ASSERT_EQ(g.ops.size(), 8u);
  const auto fwd = [&](std::size_t i) { return forward_work(g.ops[i], ElemBytes{}, true).bytes; };
  const auto bwd = [&](std::size_t i) { return backward_work(g.ops[i], ElemBytes{}).bytes; };
  EXPECT_EQ(g.ops[1].out_shape, (std::vector<std::int64_t>{8, 64}));
  EXPECT_DOUBLE_EQ(fwd(1), 4.0 * (8 * 16 + 8 * 48 + 8 * 64));
  EXPECT_DOUBLE_EQ(bwd(1), fwd(1));
  EXPECT_EQ(g.ops[2].out_shape, (std::vector<std::int64_t>{3, 8, 64}));
  EXPECT_DOUBLE_EQ(fwd(2), 4.0 * (3 * 512 + 3 * 512));
  EXPECT_EQ(g.ops[3].out_shape, (std::vector<std::int64_t>{8, 64}));  // summed over the stacked dim
  EXPECT_DOUBLE_EQ(fwd(3), 4.0 * (3 * 512 + 512));
  EXPECT_EQ(g.ops[4].out_shape, (std::vector<std::int64_t>{8, 1}));  // keepdim
  EXPECT_DOUBLE_EQ(fwd(4), 4.0 * (512 + 8));
  EXPECT_EQ(g.ops[5].out_shape, (std::vector<std::int64_t>{8, 2, 8, 8, 8}));
  EXPECT_DOUBLE_EQ(fwd(5), 4.0 * (8 * 2 * 64 + 8 * 2 * 512));
  EXPECT_DOUBLE_EQ(bwd(5), fwd(5));
  EXPECT_EQ(g.ops[6].kind, OpKind::kPool);
  EXPECT_EQ(g.ops[6].out_shape, (std::vector<std::int64_t>{8, 2, 4, 4, 4}));
  EXPECT_EQ(g.ops[7].out_shape, (std::vector<std::int64_t>{40, 64}));  // 40 rows gathered
  EXPECT_DOUBLE_EQ(fwd(7), 4.0 * (40 * 64 + 40 * 64));
  // At batch 16 every activation whose first dimension is the batch doubles.
  const Graph g16 = m.build(ModelOptions{16, 0});
  EXPECT_EQ(g16.ops[1].out_shape, (std::vector<std::int64_t>{16, 64}));
  EXPECT_EQ(g16.ops[5].out_shape, (std::vector<std::int64_t>{16, 2, 8, 8, 8}));
}

TEST_F(TraceCli, OperatorsWithoutACostRuleAreListedByNameAndCount) {
  json ev = json::array();
  ev.push_back(cpu_op("aten::linear", 0, 5, {{8, 32}, {16, 32}, {16}}));
  // An older trace: the TensorList's shapes are not recorded.
  ev.push_back(cpu_op("aten::cat", 10, 5, {{}, {}}, {"TensorList", "Scalar"}));
  ev.push_back(cpu_op("aten::cat", 20, 5, {{}, {}}, {"TensorList", "Scalar"}));
  ev.push_back(cpu_op("aten::repeat_interleave", 30, 5, {{8}, {8}, {}, {}}, {"long", "long", "", "Scalar"}));
  const auto r = run("predict --model " + write_trace(dir_, "uncosted.json", ev).string() + " --gpu a100-sxm4-40gb");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("2 x aten::cat (its tensor list's shapes not recorded) not costed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 x aten::repeat_interleave not costed"), std::string::npos) << r.out;
}

TEST_F(TraceCli, CudnnConvolutionReadsItsOwnArgumentOrder) {
  // cudnn_convolution(input, weight, padding, stride, dilation, groups, benchmark, deterministic, allow_tf32):
  // a depthwise 3x3, stride 2, padding 1, 56 -> 28.
  json ev = json::array();
  ev.push_back(cpu_op("aten::cudnn_convolution", 0, 10, {{8, 32, 56, 56}, {32, 1, 3, 3}, {}, {}, {}, {}}, {"float", "float"},
                      {"", "", "[1, 1]", "[2, 2]", "[1, 1]", "32", "False", "False", "True"}));
  const Graph g = model_from_trace(write_trace(dir_, "dw.json", ev).string()).build(ModelOptions{8, 0});
  ASSERT_EQ(g.ops.size(), 1u);
  EXPECT_EQ(g.ops[0].conv.groups, 32);
  EXPECT_EQ(g.ops[0].conv.stride[0], 2);
  EXPECT_EQ(g.ops[0].conv.pad[0], 1);
  EXPECT_EQ(g.ops[0].conv.out[0], 28);
  EXPECT_FALSE(g.ops[0].conv.bias);
}

TEST_F(TraceCli, TracesThatCannotBecomeModelsStillGetTheirMeasuredReport) {
  // Inductor's Triton kernel under a compiled region: shapes on a non-aten op, no aten operators.
  const auto r = run("trace " + fixture("triton_example.json.gz") + " --gpu a100-sxm4-40gb");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no prediction beside it"), std::string::npos) << r.out;
  // TF32 on the traced A100 becomes FP32 on a V100.
  const auto v = run("trace " + fixture("sampled_rank-1.json.gz") + " --gpu v100-sxm2-16gb --json");
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_EQ(json::parse(v.out)["prediction"]["precision"], "fp32");
}


// Kernels are tied to operators through their launch (correlation id, then the enclosing CPU event), and backward
// kernels through the sequence number of the autograd node the forward op created.
TEST_F(TraceCli, KernelsAreAttributedToTheirForwardOperators) {
  json ev = json::array();
  ev.push_back(seq_op("ProfilerStep#1", 0, 10000, 1, -1));
  ev.push_back(seq_op("aten::linear", 10, 100, 1, -1, {{64, 784}, {256, 784}, {256}}));
  ev.push_back(seq_op("aten::addmm", 20, 50, 1, 5, {{256}, {64, 784}, {784, 256}}));
  push_launched(ev, 1, 30, 100, "ampere_sgemm_64x64_nn", 40, 40);
  ev.push_back(seq_op("aten::relu", 120, 10, 1, 6, {{64, 256}}));
  push_launched(ev, 1, 125, 101, "void at::native::vectorized_elementwise_kernel<4>(int)", 130, 5);
  ev.push_back(seq_op("autograd::engine::evaluate_function: ReluBackward0", 380, 30, 2, -1));
  ev.push_back(seq_op("ReluBackward0", 381, 28, 2, 6));
  push_launched(ev, 2, 385, 102, "void at::native::vectorized_elementwise_kernel<4>(int)", 390, 7);
  ev.push_back(seq_op("autograd::engine::evaluate_function: AddmmBackward0", 420, 100, 2, -1));
  ev.push_back(seq_op("AddmmBackward0", 421, 98, 2, 5));
  ev.push_back(seq_op("aten::mm", 425, 20, 2, -1, {{64, 256}, {256, 784}}));
  push_launched(ev, 2, 430, 103, "ampere_sgemm_64x64_nn", 440, 60);
  ev.push_back(seq_op("Optimizer.step#SGD.step", 600, 100, 1, -1));
  push_launched(ev, 1, 610, 104, "void at::native::multi_tensor_apply_kernel<float>(int)", 620, 10);
  write_trace(dir_, "attr.json", ev);
  const KinetoTrace t = read_kineto_trace((dir_ / "attr.json").string());
  const TraceComparison c = compare_trace(t, summarize_trace(t), "rtx-3090", "pytorch");
  ASSERT_EQ(c.ops.size(), 2u);
  EXPECT_EQ(c.ops[0].name, "aten::linear#0");
  EXPECT_NEAR(c.ops[0].measured_forward_ms, 0.040, 1e-12);
  EXPECT_NEAR(c.ops[0].measured_backward_ms, 0.060, 1e-12);
  EXPECT_GT(c.ops[0].predicted_forward_ms, 0);
  EXPECT_GT(c.ops[0].predicted_backward_ms, 0);
  EXPECT_EQ(c.ops[1].name, "aten::relu#1");
  EXPECT_NEAR(c.ops[1].measured_forward_ms, 0.005, 1e-12);
  EXPECT_NEAR(c.ops[1].measured_backward_ms, 0.007, 1e-12);
  EXPECT_NEAR(c.attributed_share, 112.0 / 122.0, 1e-12);  // the optimizer's kernel belongs to no forward op
}


// A trace whose kernels run slower or faster than the model expects becomes a GPU file whose [measured] table
// reproduces them: predicting the same operators with it gives the measured kernel times back.
TEST_F(TraceCli, WrittenGpuFileReproducesTheTracesKernelTimes) {
  json ev = json::array();
  ev.push_back(cpu_op("ProfilerStep#1", 0, 100000));
  ev.push_back(cpu_op("aten::linear", 10, 100, {{8192, 4096}, {4096, 4096}, {4096}}, {"float", "float", "float"}));
  push_launched(ev, 1, 20, 1, "ampere_sgemm_128x64_nn", 100, 20000);
  ev.push_back(cpu_op("aten::relu", 200, 10, {{8192, 4096}}, {"float"}));
  push_launched(ev, 1, 205, 2, "void at::native::vectorized_elementwise_kernel<4>(int)", 20200, 400);
  write_trace(dir_, "cal.json", ev);
  const KinetoTrace t = read_kineto_trace((dir_ / "cal.json").string());
  const TraceSummary s = summarize_trace(t);
  const TraceComparison before = compare_trace(t, s, "rtx-3090", "pytorch");
  const TraceCalibration cal = calibrate_from_trace(before);
  EXPECT_EQ(cal.gemm_ops, 1);
  EXPECT_EQ(cal.streaming_ops, 1);
  ASSERT_TRUE(cal.gemm_efficiency_cuda.has_value());  // FP32 SGEMM on CUDA cores
  ASSERT_TRUE(cal.dram_efficiency.has_value());
  const fs::path file = dir_ / "rtx-3090-trace.toml";
  test::write_text(file, measured_gpu_file(cal, before.prediction.device, t.path, s.device_name));
  const TraceComparison after = compare_trace(t, s, file.string(), "pytorch");
  EXPECT_EQ(after.prediction.device.id, "rtx-3090-trace");
  ASSERT_EQ(after.ops.size(), 2u);
  for (const auto& op : after.ops) {
    const double measured = op.measured_forward_ms, predicted = op.predicted_forward_ms;
    EXPECT_NEAR(predicted / measured, 1.0, 0.05) << op.name << ": " << predicted << " vs " << measured;
  }
  // Written where the CLI says, with one line naming the file.
  const auto r = run("trace cal.json --write-gpu out.toml");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote out.toml"), std::string::npos);
  EXPECT_NE(test::slurp(dir_ / "out.toml").find("[measured]"), std::string::npos);
  // Without shapes there is nothing to measure against: an error, and no file.
  const auto bad = run("trace " + fixture("benchmark_result_2869224_1695835535_trace.json.gz") + " --write-gpu no.toml");
  EXPECT_EQ(bad.code, 2);
  EXPECT_FALSE(fs::exists(dir_ / "no.toml"));
}


// What the second review found: ops before a node's creator share its sequence number; GPU files must be valid TOML,
// keep what they had measured, and belong to the traced card; no file is left behind by an error; long kernel
// names are cut on a UTF-8 character boundary.
TEST_F(TraceCli, SharedSequenceNumbersGoToTheOpThatCreatedTheNode) {
  json ev = json::array();
  ev.push_back(seq_op("ProfilerStep#1", 0, 10000, 1, -1));
  ev.push_back(seq_op("aten::mul", 10, 5, 1, 5, {{64, 784}, {}}));  // no node of its own: the counter still reads 5
  ev.push_back(seq_op("aten::linear", 20, 100, 1, 5, {{64, 784}, {256, 784}, {256}}));
  ev.push_back(seq_op("aten::addmm", 30, 50, 1, 5, {{256}, {64, 784}, {784, 256}}));
  push_launched(ev, 1, 40, 1, "ampere_sgemm_64x64_nn", 45, 30);
  ev.push_back(seq_op("AddmmBackward0", 400, 100, 2, 5));
  push_launched(ev, 2, 410, 2, "ampere_sgemm_64x64_nn", 415, 50);
  write_trace(dir_, "seq.json", ev);
  const KinetoTrace t = read_kineto_trace((dir_ / "seq.json").string());
  const TraceComparison c = compare_trace(t, summarize_trace(t), "rtx-3090", "pytorch");
  const auto linear = std::find_if(c.ops.begin(), c.ops.end(), [](const auto& o) { return o.name == "aten::linear#1"; });
  ASSERT_NE(linear, c.ops.end());
  EXPECT_NEAR(linear->measured_backward_ms, 0.050, 1e-12);
}

TEST_F(TraceCli, GpuFilesAreValidKeepTheirMeasurementsAndBelongToTheTracedCard) {
  // A card whose catalog file already has a [measured] table (published matmul benchmarks of the RTX 4090).
  const DeviceSpec ada = find_gpu("rtx-4090");
  ASSERT_TRUE(ada.measured && ada.measured->gemm_efficiency_tensor);
  TraceCalibration cal;
  cal.dram_efficiency = 0.8;
  cal.streaming_ops = 3;
  const fs::path file = dir_ / "ada.toml";
  test::write_text(file, measured_gpu_file(cal, ada, "run \"1\".json", "NVIDIA \"GeForce\" RTX 4090"));
  const DeviceSpec back = find_gpu(file.string());
  EXPECT_EQ(back.id, "rtx-4090-trace");
  ASSERT_TRUE(back.measured.has_value());
  EXPECT_NEAR(*back.measured->dram_efficiency, 0.8, 1e-12);
  EXPECT_NEAR(*back.measured->gemm_efficiency_tensor, *ada.measured->gemm_efficiency_tensor, 1e-12);  // kept
  // The RTX 3090 trace's measurements do not go into another card's file, and an error writes nothing.
  write_trace(dir_, "t3090.json", mlp_events());
  const auto other = run("trace t3090.json --gpu rtx-4090 --write-gpu x.toml");
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.err.find("belong to that card"), std::string::npos) << other.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.toml"));
  const auto by_path = run("trace t3090.json --gpu " + (fs::path(PERFCAST_SOURCE_DIR) / "data/gpus/rtx-4090.toml").string() +
                           " --write-gpu x.toml");
  EXPECT_EQ(by_path.code, 2) << "a GPU file of another card is refused too";
  EXPECT_FALSE(fs::exists(dir_ / "x.toml"));
  const auto half = run("trace t3090.json --write-gpu y.toml --html no-such-dir/page.html");
  EXPECT_EQ(half.code, 2);
  EXPECT_FALSE(fs::exists(dir_ / "y.toml"));
}

// A GPU file's floats read back to the catalog's values and are written as the catalog writes them (9.7, not
// toml++'s 9.6999999999999993).
TEST_F(TraceCli, GpuFileFloatsAreWrittenAsTheCatalogWritesThem) {
  const DeviceSpec a100 = find_gpu("a100-pcie-40gb");
  TraceCalibration cal;
  cal.dram_efficiency = 0.8;
  cal.streaming_ops = 3;
  const std::string text = measured_gpu_file(cal, a100, "run.json", "NVIDIA A100-PCIE-40GB");
  EXPECT_NE(text.find("\nfp64_tflops = 9.7\n"), std::string::npos) << text;  // data/gpus/a100-pcie-40gb.toml
  EXPECT_NE(text.find("\ndram_efficiency = 0.8\n"), std::string::npos) << text;
  const fs::path file = dir_ / "a100.toml";
  test::write_text(file, text);
  const toml::table written = toml::parse_file(file.string()), catalog = toml::parse_file(a100.file);
  int floats = 0;
  for (const auto& [key, value] : catalog) {
    if (!value.is_floating_point()) continue;
    ++floats;
    ASSERT_TRUE(written[key].is_floating_point()) << key.str();
    EXPECT_EQ(written[key].value<double>(), value.value<double>()) << key.str();  // the same double, bit for bit
  }
  EXPECT_GT(floats, 5);
}

TEST_F(TraceCli, LongNonAsciiKernelNamesStayValidUtf8) {
  json ev = two_step_events();
  std::string name = "void my_kernel_";
  while (name.size() < 71) name += "x";  // 66 ASCII bytes after "void ": the cut at 67 falls inside the first é
  name += "\u00e9\u00e9\u00e9\u00e9<float>(int)";  // two-byte characters across the cut
  ev.push_back(kernel(json::parse("\"" + name + "\"").get<std::string>(), 1600, 10));
  write_trace(dir_, "utf.json", ev);
  const auto r = run("trace utf.json --json --no-predict");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NO_THROW((void)json::parse(r.out));
}


// PyTorch >= 1.13 links each forward op to its backward node with a "fwdbwd" flow: in the AMD minitoy trace, the
// flows pair aten::addmm, aten::relu and aten::mse_loss with AddmmBackward0, ReluBackward0 and MseLossBackward0, so
// each of those forward operators gets backward kernel time.
TEST_F(TraceCli, ForwardBackwardFlowsTieBackwardKernels) {
  const KinetoTrace t = read_kineto_trace(fixture("mi250_minitoy_train_ROCm6_2_kineto.json.gz"));
  EXPECT_EQ(std::count_if(t.fwdbwd.begin(), t.fwdbwd.end(), [](const TraceFlow& f) { return f.start; }), 4);
  const TraceComparison c = compare_trace(t, summarize_trace(t), "a100-sxm4-40gb", "pytorch");
  int with_backward = 0;
  for (const auto& op : c.ops)
    if ((op.name.rfind("aten::linear#", 0) == 0 || op.name.rfind("aten::relu#", 0) == 0 ||
         op.name.rfind("aten::mse_loss#", 0) == 0) && op.measured_backward_ms > 0)
      ++with_backward;
  EXPECT_EQ(with_backward, 3);
}


// Kernels queued by a step can run after its CPU side ends; where the trace marks the step on the GPU timeline
// (gpu_user_annotation), that window decides.
TEST_F(TraceCli, GpuSideStepWindowsCountLateKernels) {
  json ev = json::array();
  ev.push_back(cpu_op("ProfilerStep#1", 0, 1000));
  json g = cpu_op("ProfilerStep#1", 100, 5000, json::array(), json::array(), nullptr, 7);
  g["cat"] = "gpu_user_annotation";
  ev.push_back(g);
  ev.push_back(kernel("ampere_sgemm_128x64_nn", 100, 800));
  ev.push_back(kernel("ampere_sgemm_128x64_nn", 2000, 3000));  // after the CPU step ended
  const TraceSummary s = summarize_trace(read_kineto_trace(write_trace(dir_, "late.json", ev).string()));
  EXPECT_NEAR(s.kernels, 2.0, 1e-12);
  EXPECT_NEAR(s.kernel_ms, 3.8, 1e-12);
}


// A folder of per-rank traces: one line per rank, and the slowest rank against the median.
TEST_F(TraceCli, FolderOfRankTracesNamesTheStraggler) {
  fs::create_directory(dir_ / "ranks");
  for (int rank : {0, 1}) {
    json doc = {{"schemaVersion", 1}, {"deviceProperties", rtx3090()}, {"distributedInfo", {{"rank", rank}, {"world_size", 2}}},
                {"traceEvents", two_step_events(rank == 0 ? 10000 : 12000)}};
    test::write_text(dir_ / "ranks" / ("worker" + std::to_string(rank) + ".pt.trace.json"), doc.dump());
  }
  test::write_text(dir_ / "ranks" / "notes.txt", "not a trace");
  test::write_text(dir_ / "ranks" / "config.json", R"({"hidden_size": 768})");  // run folders hold configs too
  const TraceFolder f = summarize_trace_folder((dir_ / "ranks").string());
  ASSERT_EQ(f.ranks.size(), 2u);
  EXPECT_EQ(f.ranks[0].rank, 0);
  EXPECT_EQ(f.slowest, 1u);
  EXPECT_NEAR(f.median_step_ms, 11.0, 1e-9);
  EXPECT_NEAR(f.spread, 12.0 / 11.0 - 1.0, 1e-9);
  EXPECT_NEAR(f.ranks[0].communication_ms, 1.0, 1e-9);  // the NCCL kernel of each step
  EXPECT_EQ(f.skipped, (std::vector<std::string>{"config.json (not a profiler trace)"}));
  const auto r = run("trace ranks");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("<- slowest"), std::string::npos);
  // A second, older trace of rank 1 (another profiling cycle) does not become a third rank.
  {
    json doc = {{"schemaVersion", 1}, {"distributedInfo", {{"rank", 1}, {"world_size", 2}}},
                {"traceEvents", two_step_events(30000)}};
    const fs::path older = dir_ / "ranks" / "worker1.older.pt.trace.json";
    test::write_text(older, doc.dump());
    fs::last_write_time(older, fs::last_write_time(dir_ / "ranks" / "worker0.pt.trace.json") - std::chrono::hours(1));
  }
  const TraceFolder again = summarize_trace_folder((dir_ / "ranks").string());
  ASSERT_EQ(again.ranks.size(), 2u);
  EXPECT_NEAR(again.ranks[1].summary.step_ms, 12.0, 1e-9);  // the newer trace of rank 1
  fs::create_directory(dir_ / "empty");
  EXPECT_EQ(run("trace empty").code, 2);
  EXPECT_EQ(run("trace ranks --html x.html").code, 2);
}


// Issue 14: the ROCm trace (an MI250, "AMD Radeon Graphics", compute 9.0, 104 compute units) put among the A100
// traces of the HolisticTraceAnalysis fixtures is not a rank of their job: one line naming that file and both
// devices, exit 2. A trace that names no device (sampled_rank-1 has no deviceProperties) is not compared.
TEST_F(TraceCli, FolderMixingDevicesNamesTheOddTrace) {
  fs::create_directory(dir_ / "mixed");
  for (const char* f : {"benchmark_simple_add_trace.json.gz", "triton_example.json.gz",
                        "mi250_minitoy_train_ROCm6_2_kineto.json.gz", "sampled_rank-1.json.gz"})
    fs::copy_file(fixture(f), dir_ / "mixed" / f);
  try {
    (void)summarize_trace_folder((dir_ / "mixed").string());
    FAIL() << "an MI250 trace among A100 traces is not one job";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'mi250_minitoy_train_ROCm6_2_kineto.json.gz' ran on AMD Radeon Graphics"), std::string::npos) << m;
    EXPECT_NE(m.find("NVIDIA A100-PG509-200"), std::string::npos) << m;
  }
  const auto r = run("trace mixed");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_TRUE(r.out.empty());
  // Without it the A100 traces (and the one naming no device) read as one job.
  fs::remove(dir_ / "mixed" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz");
  EXPECT_EQ(summarize_trace_folder((dir_ / "mixed").string()).ranks.size(), 3u);
}


// The GPU-timeline window widens the CPU window, never narrows it: on the ROCm fixture its gpu_user_annotation only
// covers the main thread's kernels, not the backward ones the autograd thread launched.
TEST(KinetoFixtures, GpuStepWindowsOnlyAddKernels) {
  KinetoTrace t = read_kineto_trace(fixture("mi250_minitoy_train_ROCm6_2_kineto.json.gz"));
  ASSERT_FALSE(t.gpu_steps.empty());
  const double with_windows = summarize_trace(t).kernels;
  t.gpu_steps.clear();
  EXPECT_GE(with_windows, summarize_trace(t).kernels);
  EXPECT_GT(with_windows, 0);
}

// With no sequence numbers at all, the fwdbwd flow alone ties the backward kernel to its forward operator.
TEST_F(TraceCli, FlowsWithoutSequenceNumbersStillTieBackward) {
  json ev = json::array();
  ev.push_back(cpu_op("ProfilerStep#1", 0, 10000));
  ev.push_back(cpu_op("aten::linear", 20, 100, {{64, 784}, {256, 784}, {256}}));
  ev.push_back(cpu_op("aten::addmm", 30, 50, {{256}, {64, 784}, {784, 256}}));
  ev.push_back({{"ph", "s"}, {"cat", "fwdbwd"}, {"name", "fwdbwd"}, {"id", 7}, {"pid", 1}, {"tid", 1}, {"ts", 30}});
  ev.push_back(cpu_op("AddmmBackward0", 400, 100, json::array(), json::array(), nullptr, 2));
  ev.push_back({{"ph", "f"}, {"cat", "fwdbwd"}, {"name", "fwdbwd"}, {"id", 7}, {"pid", 1}, {"tid", 2}, {"ts", 400},
                {"bp", "e"}});
  push_launched(ev, 2, 410, 9, "ampere_sgemm_64x64_nn", 420, 60);
  write_trace(dir_, "flow.json", ev);
  const KinetoTrace t = read_kineto_trace((dir_ / "flow.json").string());
  const TraceComparison c = compare_trace(t, summarize_trace(t), "rtx-3090", "pytorch");
  ASSERT_EQ(c.ops.size(), 1u);
  EXPECT_EQ(c.ops[0].name, "aten::linear#0");
  EXPECT_NEAR(c.ops[0].measured_backward_ms, 0.060, 1e-12);
}

}  // namespace
