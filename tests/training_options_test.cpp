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
  r.mode = "train";
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
  infer.mode = "infer";
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
  // Host profiles of the DGX systems, from their datasheets.
  EXPECT_EQ(find_host("dgx-a100").cores, 128);
  EXPECT_EQ(find_host("dgx2").cores, 48);
}

}  // namespace
}  // namespace perfcast
