// Training-step options that change how often work happens: fused vs unfused optimizer updates and gradient
// accumulation, and the runtime/host profiles written from framework sources in session 5.
#include <gtest/gtest.h>

#include <string>

#include "analysis/predict.h"
#include "core/error.h"
#include "device/host_profile.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

PredictRequest bert_train(const std::string& runtime) {
  PredictRequest r;
  r.gpu = "v100-sxm2-16gb";
  r.model = "bert_base_squad";
  r.mode = Mode::kTrain;
  r.batch = 8;
  r.seq = 384;
  r.runtime = runtime;
  r.optimizer = "adamw";
  return r;
}

double step_bytes(const Prediction& p) { return p.step.bytes; }

TEST(TrainingOptions, EagerPyTorchOptimizerMakesOnePassPerOperation) {
  // torch.optim.AdamW without fused=True: m.mul_, m.add_, v.mul_, v.addcmul_, sqrt, /bc2, +eps, addcdiv_ and the
  // decoupled decay param.mul_ read and write whole fp32 tensors: 22 tensor accesses per parameter against the
  // 7 of one fused kernel (read param, grad, m, v; write param, m, v).
  PredictRequest fused = bert_train("pytorch");
  fused.fused_optimizer = true;
  const Prediction eager = predict(bert_train("pytorch")), one_pass = predict(fused);
  EXPECT_NEAR(step_bytes(eager) - step_bytes(one_pass), (22.0 - 7.0) * 4.0 * static_cast<double>(eager.params),
              1e-6 * step_bytes(eager));
  EXPECT_LT(eager.samples_per_s, one_pass.samples_per_s);
  // TensorFlow's ApplyAdam is one kernel per variable already: the flag changes nothing there.
  PredictRequest tf = bert_train("tensorflow");
  const Prediction tf_default = predict(tf);
  tf.fused_optimizer = true;
  EXPECT_DOUBLE_EQ(tf_default.step_us, predict(tf).step_us);
}

const OpCost* entry(const Prediction& p, const std::string& name) {
  for (const auto& e : p.step.entries)
    if (e.name == name) return &e;
  return nullptr;
}

TEST(TrainingOptions, EagerSgdMakesElevenPasses) {
  // torch.optim.SGD with momentum and weight decay: d_p = grad + wd * param (3 accesses), buf.mul_ (2),
  // buf.add_(d_p) (3), param.add_(buf) (3); one fused kernel reads param, grad, buf and writes param, buf (5).
  PredictRequest r;
  r.gpu = "gtx-1080-ti";
  r.mode = Mode::kTrain;
  r.runtime = "pytorch";
  r.optimizer = "sgd";
  const Prediction eager = predict(r);
  r.fused_optimizer = true;
  const Prediction fused = predict(r);
  const double params = static_cast<double>(eager.params);
  EXPECT_NEAR(entry(eager, "optimizer.update")->cost.bytes, 11.0 * 4.0 * params, 1e-6 * params);
  EXPECT_NEAR(entry(fused, "optimizer.update")->cost.bytes, 5.0 * 4.0 * params, 1e-6 * params);
}

TEST(TrainingOptions, AccumulationArithmetic) {
  // Over N micro-batches the update runs once (1/N of it per micro-batch) and N - 1 backward passes add their
  // fp32 gradients into the accumulators (read both, write one: 12 bytes per parameter).
  PredictRequest r = bert_train("pytorch");
  const Prediction one = predict(r);
  r.grad_accum = 4;
  const Prediction four = predict(r);
  const double params = static_cast<double>(one.params);
  EXPECT_NEAR(entry(four, "optimizer.update")->cost.time_us, entry(one, "optimizer.update")->cost.time_us / 4.0,
              1e-9 * entry(one, "optimizer.update")->cost.time_us);
  ASSERT_NE(entry(four, "grad.accumulate"), nullptr);
  EXPECT_EQ(entry(one, "grad.accumulate"), nullptr);
  EXPECT_NEAR(entry(four, "grad.accumulate")->cost.bytes, 12.0 * params * 3.0 / 4.0, 1e-6 * params);
  // It is the same kernel run a quarter as often: each launch takes as long and keeps DRAM as busy as before
  // (what the power model reads), only the count and the totals shrink.
  const KernelCost& u1 = entry(one, "optimizer.update")->cost;
  const KernelCost& u4 = entry(four, "optimizer.update")->cost;
  EXPECT_DOUBLE_EQ(u4.memory_us, u1.memory_us);
  EXPECT_DOUBLE_EQ(u4.time_us / u4.launches, u1.time_us / u1.launches);
}

TEST(TrainingOptions, GradientAccumulationSharesTheUpdateAndTheAllReduce) {
  PredictRequest one = bert_train("pytorch");
  PredictRequest accum = one;
  accum.grad_accum = 8;
  const Prediction a = predict(one), b = predict(accum);
  // The update runs once per 8 micro-batches; each micro-batch adds its gradients to the accumulators.
  EXPECT_GT(b.samples_per_s, a.samples_per_s);
  // Across GPUs the ranks all-reduce once per update: scaling efficiency can only improve.
  one.gpus = accum.gpus = 8;
  one.interconnect = accum.interconnect = "nvlink";
  const Prediction c = predict(one), d = predict(accum);
  ASSERT_TRUE(c.scale && d.scale);
  EXPECT_GT(d.scale->efficiency, c.scale->efficiency);
  EXPECT_LT(d.scale->exposed_comm_ms, c.scale->exposed_comm_ms);
  // Accumulation is a training notion, and at least one micro-batch.
  PredictRequest infer = bert_train("pytorch");
  infer.mode = Mode::kInfer;
  infer.grad_accum = 4;
  EXPECT_THROW(predict(infer), InputError);
  PredictRequest zero = bert_train("pytorch");
  zero.grad_accum = 0;
  EXPECT_THROW(predict(zero), InputError);
}

TEST(TrainingOptions, FrameworkProfilesFromTheirSources) {
  // Chainer asks cuDNN for algorithms within CuPy's 8 MB workspace (cupy/cudnn.pyx _max_workspace_size), BVLC
  // Caffe within its own 8 MB (cudnn_conv_layer.cpp); CNTK and NVCaffe time every algorithm with FindEx.
  EXPECT_DOUBLE_EQ(find_runtime("chainer").conv_workspace_limit_bytes, 8.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(find_runtime("caffe").conv_workspace_limit_bytes, 8.0 * 1024 * 1024);
  EXPECT_TRUE(find_runtime("cntk").conv_autotune);
  EXPECT_GT(find_runtime("nvcaffe").conv_workspace_limit_bytes, 1e12);
  // NVCaffe trains in FP16 on tensor cores; BVLC Caffe has float and double layers only.
  PredictRequest r;
  r.gpu = "v100-sxm2-16gb";
  r.runtime = "nvcaffe";
  r.precision = "amp";
  EXPECT_GT(predict(r).samples_per_s, 0);
  r.runtime = "caffe";
  EXPECT_THROW(predict(r), InputError);
  // PaddlePaddle picks cuDNN's heuristic algorithm within FLAGS_conv_workspace_size_limit (512 MB) and runs fp32
  // as TF32 on Ampere (allow_tf32_cudnn / allow_tf32_cublas default true).
  const RuntimeProfile& paddle = find_runtime("paddle");
  EXPECT_DOUBLE_EQ(paddle.conv_workspace_limit_bytes, 512.0 * 1024 * 1024);
  EXPECT_TRUE(paddle.tf32_conv_default);
  EXPECT_TRUE(paddle.tf32_matmul_default);
  // Host profiles of the DGX systems, from their datasheets.
  EXPECT_EQ(find_host("dgx-a100").cores, 128);
  EXPECT_EQ(find_host("dgx2").cores, 48);
}

TEST(TrainingOptions, FrameworkReductionStrategies) {
  // CNTK all-reduces each gradient after backward (DataParallelDistributedLearner::Update); ChainerMN's pure_nccl
  // packs all of them into one buffer, also after backward; BVLC Caffe reduces layer by layer during backward.
  PredictRequest r;
  r.gpu = "v100-sxm2-16gb";
  r.mode = Mode::kTrain;
  r.gpus = 8;
  r.interconnect = "nvlink";
  r.runtime = "cntk";
  const Prediction cntk = predict(r);
  ASSERT_TRUE(cntk.scale.has_value());
  EXPECT_EQ(cntk.scale->strategy, "cntk");
  EXPECT_NEAR(cntk.scale->comm_wait_ms, cntk.scale->allreduce_ms, 1e-6 * cntk.scale->allreduce_ms);
  r.runtime = "chainer";
  const Prediction chainer = predict(r);
  EXPECT_EQ(chainer.scale->strategy, "chainermn");
  EXPECT_EQ(chainer.scale->collectives, 1);
  r.runtime = "caffe";
  EXPECT_EQ(predict(r).scale->strategy, "nccl");
  r.runtime = "nvcaffe";
  EXPECT_EQ(predict(r).scale->strategy, "ddp");
}

}  // namespace
}  // namespace perfcast
