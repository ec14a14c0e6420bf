// The host model (issue 13 item 1, docs/host-model.md) against published facts:
// - per-op CPU costs of PyTorch eager measured in real profiler traces (tests/data/kineto, the
//   HolisticTraceAnalysis test data; tools/host_trace_costs.py, docs/host-trace-fit.md); pytorch/pytorch#41383 (~5 us per op without autograd, ~7 us with it, on
//   CPU tensors, i.e. before a CUDA launch); the autograd engine's work per backward node in a Hugging Face
//   profile (huggingface/blog#1649: evaluate_function 13.9 us around ViewBackward0's 6.4 us); torch.optim's
//   per-tensor loop over ResNet-101 (pytorch/pytorch#45408: 4-11 us per operation and tensor, launch included);
//   cudaLaunchKernel's ~3.4 us of CPU time (NVIDIA blog 'Getting Started with CUDA Graphs').
// - a measured host-bound row: nicklhy/DLInfBench, torchvision ResNet-50 inference at batch 1 on a GTX 1080 Ti
//   in PyTorch: 194.9 img/s (data/validation/check_pascal.csv), against ~4x that once batched.
// - documented cures: CUDA graphs replay a step without per-op CPU work; torch.compile runs no Python per op.
// - PyTorch eager has no CUDA INT8 convolution (torch.ao.quantization's INT8 kernels are CPU backends).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

#include "analysis/predict.h"
#include "core/error.h"
#include "import/config_csv.h"
#include "runtime/runtime_profile.h"
#include "test_paths.h"

namespace perfcast {
namespace {

PredictRequest small_batch(const std::string& model, const std::string& mode, std::int64_t batch) {
  PredictRequest r;
  r.gpu = "gtx-1080-ti";
  r.model = model;
  r.runtime = "pytorch";
  r.mode = parse_mode(mode);
  r.precision = "fp32";
  r.batch = batch;
  r.host = "desktop-6c";
  return r;
}

// ---------------------------------------------------------------- the runtime file against published overheads

TEST(HostModel, PytorchPerOpCostsSitInTheMeasuredRanges) {
  // The HolisticTraceAnalysis Kineto traces (tests/data/kineto; tools/host_trace_costs.py prints these figures as
  // median and interquartile range, docs/host-trace-fit.md): AlexNet inference on an A100 and a recommender's
  // training step, PyTorch 2.x.
  const RuntimeProfile& rt = find_runtime("pytorch");
  // A cudaLaunchKernel call: 6-9 us in both traces (~3.4 us without the profiler, NVIDIA's CUDA graphs blog).
  EXPECT_GE(rt.host_overhead_per_kernel_us, 3.0);
  EXPECT_LE(rt.host_overhead_per_kernel_us, 9.0);
  // A forward op with one kernel: own time 18-35 us (launch included: 6-9 us) plus 10-21 us of Python before the
  // next op; a bare scalar op from Python is ~5 us (pytorch/pytorch#41383), so a model's op is well above it.
  const double forward = rt.host_op_us + rt.host_overhead_per_kernel_us;
  EXPECT_GE(forward, 18.0 + 10.0 - 6.0);
  EXPECT_LE(forward, 35.0 + 21.0);
  // Recording autograd adds ~2 us (7 vs 5 us, pytorch/pytorch#41383).
  EXPECT_GE(rt.host_autograd_op_us, 1.0);
  EXPECT_LE(rt.host_autograd_op_us, 4.0);
  // A backward node: own time 32-119 us beside its launches, 9-15 us of engine between nodes.
  EXPECT_GE(rt.host_backward_op_us, 32.0 + 9.0);
  EXPECT_LE(rt.host_backward_op_us, 119.0 + 15.0);
  // A convolution or GEMM call costs more than a plain op (cudnn_convolution / addmm 52-88 us own).
  EXPECT_GT(rt.host_library_call_us, 0.0);
  EXPECT_LE(rt.host_library_call_us + rt.host_op_us, 88.0 + 21.0);
  // AccumulateGrad: 19-37 us own per parameter tensor.
  EXPECT_GE(rt.host_accumulate_grad_us, 19.0);
  EXPECT_LE(rt.host_accumulate_grad_us, 37.0 + 15.0);
  // torch.optim's per-tensor loop: 4-11 us per operation and tensor with the launch included (pytorch#45408).
  const double optimizer = rt.host_optimizer_op_us + rt.host_overhead_per_kernel_us;
  EXPECT_GE(optimizer, 4.0);
  EXPECT_LE(optimizer, 11.0);
  // Loops read the loss or synchronize every iteration; GradScaler reads found_inf with .item().
  EXPECT_GE(rt.syncs_per_step, 1.0);
  EXPECT_TRUE(rt.amp_sync_before_update);
}

TEST(HostModel, ZeroGradKeepsGradientsBeforePytorch2) {
  // Before PyTorch 2.0, zero_grad() zeroes every gradient in place (a fill kernel per tensor) and the next
  // backward's AccumulateGrad adds into it (a kernel per tensor); 2.0 sets them to None (release notes).
  // torchvision ResNet-50 has 161 parameter tensors (53 convolutions, 53 batch norms with weight and bias, the
  // classifier's weight and bias). A fused update keeps the optimizer's launches the same in both versions.
  PredictRequest r = small_batch("resnet50", "train", 32);
  r.fused_optimizer = true;
  r.runtime_version = "1.13";
  const Prediction old_version = predict(r);
  r.runtime_version = "2.0";
  const Prediction new_version = predict(r);
  EXPECT_NEAR(old_version.step.launches - new_version.step.launches, 2.0 * 161, 1.0);
  EXPECT_GT(old_version.step.host_us, new_version.step.host_us);
}

TEST(HostModel, CompiledRuntimeRunsNoPythonPerOp) {
  // TorchInductor's wrapper calls kernels directly; AOTAutograd makes the compiled backward one node.
  const RuntimeProfile& compiled = find_runtime("pytorch-compile");
  EXPECT_EQ(compiled.host_op_us, 0.0);
  EXPECT_EQ(compiled.host_backward_op_us, 0.0);
  EXPECT_LT(compiled.host_overhead_per_kernel_us, find_runtime("pytorch").host_overhead_per_kernel_us);
}

// ---------------------------------------------------------------- a measured host-bound row

TEST(HostModel, Resnet50BatchOneInPytorchIsHostBound) {
  // DLInfBench: 194.9 img/s at batch 1 on a GTX 1080 Ti (5.1 ms per image) against 4x that per image at batch
  // 16; the GPU alone runs ResNet-50 at batch 1 in about 2 ms. The host sets the pace.
  const Prediction p = predict(small_batch("resnet50_v1_5", "infer", 1));
  EXPECT_EQ(p.primary, Bound::kHost) << bound_name(p.primary);
  EXPECT_GT(p.step.host_us, p.step.gpu_us);
  // Within 2x of the measurement (the run also copied each image from host memory inside the timing).
  EXPECT_GT(p.samples_per_s, 194.9 / 2);
  EXPECT_LT(p.samples_per_s, 194.9 * 2);
}

TEST(HostModel, LargeBatchTrainingHidesTheHost) {
  // u39kun/deep-learning-benchmark: ResNet-152 training at batch 16 on a GTX 1080 Ti, 77.5 img/s (206 ms per
  // step): kernels dominate, the host's few milliseconds hide behind them.
  const Prediction p = predict(small_batch("resnet152", "train", 16));
  EXPECT_NE(p.primary, Bound::kHost);
  EXPECT_LT(p.step.gpu_wait_us, 0.05 * p.step.step_us);
}

TEST(HostModel, HostBoundStepsFollowTheHostsSingleThreadSpeed) {
  // A faster CPU issues the same ops sooner: a host-bound step speeds up, a GPU-bound one does not move.
  PredictRequest r = small_batch("shufflenet_v2_x1_0", "train", 12);
  const Prediction slow = predict(r);
  r.host = "workstation-5995wx";
  const Prediction fast = predict(r);
  ASSERT_EQ(slow.primary, Bound::kHost);
  EXPECT_GT(fast.samples_per_s, 1.15 * slow.samples_per_s);

  PredictRequest big = small_batch("resnet152", "train", 16);
  const double at_desktop = predict(big).samples_per_s;
  big.host = "workstation-5995wx";
  EXPECT_NEAR(predict(big).samples_per_s / at_desktop, 1.0, 0.03);
}

TEST(HostModel, H200DeviceHostPutsAmpResnet50InferenceAheadOfFp32) {
  // data/validation/measured_h200.csv (PyTorch 2.11 on the lent H200, its host an Emerald Rapids KVM guest:
  // data/device_sessions/2026-12-04-h200/lscpu.txt): torchvision ResNet-50 inference at batch 64, AMP with
  // channels-last against FP32, 1.80x (both measurements read from the file below); the AMP step stays at 4.3-5.7 ms
  // from batch 4 to 64, so the host sets its pace. On that host's profile the prediction must sit on the same side
  // of a 15% gain and call the AMP step host-bound.
  std::optional<double> measured_amp, measured_fp32;
  for (const auto& row : read_config_csv(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/measured_h200.csv", true))
    if (row.gpu == "h200-sxm-141gb" && row.model == "resnet50_v1_5" && row.runtime == "pytorch" &&
        row.mode == "infer" && row.batch == "64" && row.metric == "samples_per_s" && row.n_gpus == "1") {
      if (row.precision == "amp" && row.layout == "nhwc") measured_amp = row.measured;
      if (row.precision == "fp32" && row.layout.empty()) measured_fp32 = row.measured;
    }
  ASSERT_TRUE(measured_amp && measured_fp32);
  PredictRequest r;
  r.gpu = "h200-sxm-141gb";
  r.model = "resnet50_v1_5";
  r.runtime = "pytorch";
  r.runtime_version = "2.11";
  r.mode = parse_mode("infer");
  r.conv_algo = "autotune";
  r.batch = 64;
  r.host = "emr-kvm-2p1ghz";
  r.precision = "fp32";
  const Prediction fp32 = predict(r);
  r.precision = "amp";
  r.channels_last = true;
  const Prediction amp = predict(r);
  EXPECT_GT(amp.samples_per_s, 1.15 * fp32.samples_per_s);
  EXPECT_GT(amp.step.host_us, amp.step.gpu_us);
  // Within 2x of each measurement.
  EXPECT_GT(*measured_amp, 1.15 * *measured_fp32);
  EXPECT_GT(amp.samples_per_s, *measured_amp / 2);
  EXPECT_LT(amp.samples_per_s, *measured_amp * 2);
  EXPECT_GT(fp32.samples_per_s, *measured_fp32 / 2);
  EXPECT_LT(fp32.samples_per_s, *measured_fp32 * 2);
}

TEST(HostModel, TheStepIsNotThePlainSumOfHostAndGpu) {
  // The host runs ahead of the GPU: the step is at least the longer timeline and well under their sum.
  const Prediction p = predict(small_batch("shufflenet_v2_x1_0", "train", 12));
  EXPECT_GE(p.step.step_us, std::max(p.step.host_us, p.step.gpu_us) - 1e-6);
  EXPECT_LT(p.step.step_us, 0.9 * (p.step.host_us + p.step.gpu_us));
}

// ---------------------------------------------------------------- cures

TEST(HostModel, CudaGraphsAndCompileCureAHostBoundStep) {
  PredictRequest r = small_batch("shufflenet_v2_x1_0", "train", 12);
  const Prediction eager = predict(r);
  ASSERT_EQ(eager.primary, Bound::kHost);
  PredictRequest graphs = r;
  graphs.cuda_graphs = true;
  const Prediction replayed = predict(graphs);
  EXPECT_NE(replayed.primary, Bound::kHost);
  EXPECT_GT(replayed.samples_per_s, 1.15 * eager.samples_per_s);
  PredictRequest compiled = r;
  compiled.runtime = "pytorch-compile";
  EXPECT_LT(predict(compiled).step.host_us, 0.6 * eager.step.host_us);
}

// ---------------------------------------------------------------- INT8 in PyTorch eager

TEST(HostModel, PytorchInt8RefusesConvolutionsAndNamesTheEngines) {
  PredictRequest r = small_batch("resnet50", "infer", 8);
  r.gpu = "t4";
  r.precision = "int8";
  try {
    predict(r);
    FAIL() << "PyTorch eager has no CUDA INT8 convolution";
  } catch (const UnsupportedError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("tensorrt"), std::string::npos) << m;
    EXPECT_NE(m.find("ONNX Runtime"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(HostModel, PytorchInt8RunsOnlyTheGemms) {
  // torch._int_mm / torchao quantize the linear layers; the tensors between them stay FP16.
  PredictRequest r = small_batch("bert_base_squad", "infer", 8);
  r.gpu = "t4";
  r.precision = "int8";
  const Prediction p = predict(r);
  EXPECT_EQ(p.precision_note_code.id, "note.int8_gemm_only");
}


// ---------------------------------------------------------------- TensorFlow, XLA and MXNet against their sources

TEST(HostModel, TensorflowExecutorCostsSitInTheMeasuredBand) {
  // PaddlePaddle/benchmark#380 (TF 1.x on a V100 host, feeds and fetches kept out of the run, the empty run
  // subtracted): one Abs node costs 14.6 us of host beside its 17.2 us kernel, MatMul + BiasAdd 27.4 us for two
  // nodes; session.run of an empty graph 181.9 us, ~0.2 ms per run in tensorflow/tensorflow#5516.
  const RuntimeProfile& tf = find_runtime("tensorflow");
  const double node = tf.host_op_us + tf.host_overhead_per_kernel_us;
  EXPECT_GE(node, 27.4 / 2 - 3.0);
  EXPECT_LE(node, 14.6 + 3.0);
  // Gradient ops are graph nodes run by the same executor.
  EXPECT_EQ(tf.host_backward_op_us, tf.host_op_us);
  // No autograd recording in a graph built once.
  EXPECT_EQ(tf.host_autograd_op_us, 0.0);
  EXPECT_GE(tf.host_step_us, 150.0);
  EXPECT_LE(tf.host_step_us, 250.0);
  // session.run returns its fetches as host arrays: every step waits for the GPU.
  EXPECT_GE(tf.syncs_per_step, 1.0);
}

TEST(HostModel, XlaClustersRunNoExecutorCostPerOp) {
  // A compiled cluster is one node to the executor (_XlaRun); its thunks cost the launch alone, while the run
  // that holds it still pays session.run's fixed cost.
  const RuntimeProfile& xla = find_runtime("tensorflow-xla");
  EXPECT_EQ(xla.host_op_us, 0.0);
  EXPECT_EQ(xla.host_backward_op_us, 0.0);
  EXPECT_GE(xla.host_step_us, 150.0);
  EXPECT_LE(xla.host_step_us, 250.0);
  EXPECT_GE(xla.syncs_per_step, 1.0);
}

TEST(HostModel, MxnetSymbolicStepPaysLessThanOneImperativeOpPerNode) {
  // Imperative MXNet pays 30-60 us per op (apache/mxnet#17097); the bulked symbolic executor pays its launch
  // (cudaLaunch 4.8 us on average in apache/mxnet#9055) and a per-step Python forward call.
  const RuntimeProfile& mx = find_runtime("mxnet");
  EXPECT_LT(mx.host_op_us + mx.host_overhead_per_kernel_us, 30.0);
  EXPECT_GE(mx.host_overhead_per_kernel_us, 3.0);
  EXPECT_GE(mx.host_step_us, 30.0 + 10.0);
  EXPECT_LE(mx.host_step_us, 60.0 + 3 * 10.0);
  EXPECT_GE(mx.syncs_per_step, 1.0);
}

TEST(HostModel, TensorflowBatchOneStepPaysTheRunsFixedCost) {
  // A batch-1 step cannot be shorter than session.run's own fixed cost scaled to the host.
  PredictRequest r = small_batch("resnet50", "infer", 1);
  r.runtime = "tensorflow";
  const Prediction p = predict(r);
  EXPECT_GE(p.step.step_us, find_runtime("tensorflow").host_step_us);
  EXPECT_GE(p.step.syncs, 1.0);
}


TEST(HostModel, TorchscriptRunsNoModulePythonPerOp) {
  // The TorchScript interpreter costs ~9 us per node (pytorch/pytorch#55283: 8.9 us per scripted add), against a
  // model op's 18-56 us in eager traces (module call and the model's Python included); its profiling executor
  // fuses pointwise chains on CUDA (legacy fuser, NNC, nvFuser), and cuDNN / cuBLAS setup stays.
  const RuntimeProfile& ts = find_runtime("torchscript");
  const RuntimeProfile& eager = find_runtime("pytorch");
  EXPECT_GE(ts.host_op_us, 5.0);
  EXPECT_LE(ts.host_op_us, 12.0);
  EXPECT_LT(ts.host_op_us, eager.host_op_us);
  EXPECT_TRUE(ts.fuse_elementwise_chains);
  EXPECT_EQ(ts.host_library_call_us, eager.host_library_call_us);
}

}  // namespace
}  // namespace perfcast
