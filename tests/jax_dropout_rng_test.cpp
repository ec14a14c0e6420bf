// JAX's dropout random bits before 0.4.27: jax.random's threefry2x32 lowered on GPU to jaxlib's CUDA kernel (a custom
// call), whose operands and outputs go through DRAM (jax-ml/jax CHANGELOG.md, jax 0.4.27: 'On GPU, the Threefry PRNG
// implementation no longer lowers to a kernel call by default'; jax/_src/prng.py _threefry2x32_gpu_lowering
// broadcasts both key words and both counter halves to the output's shape). Expectations from those sources and the
// A100 40GB datasheet (1555 GB/s), not from the code's output.
#include <gtest/gtest.h>

#include <string>

#include "analysis/predict.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

PredictRequest keras_jax_bert(const std::string& version, Mode mode, int batch) {
  PredictRequest r;
  r.gpu = "a100-sxm4-40gb";
  r.model = "bert_base_squad";
  r.runtime = "jax";
  r.runtime_version = version;
  r.mode = mode;
  r.precision = "fp32";
  r.batch = batch;
  r.seq = 512;
  return r;
}

TEST(JaxDropoutRng, ThreefryKernelCallUntil0427) {
  const RuntimeProfile& jax = find_runtime("jax");
  // Four operand arrays of N/2 uint32 (8 bytes a value) written and read, two output halves (4 bytes a value)
  // written and read back: 24 bytes per value.
  EXPECT_DOUBLE_EQ(jax.dropout_rng_bytes_per_value, 24.0);  // the profile describes default_version 0.4
  for (const char* v : {"0.4.20", "0.4.26", "0.4"}) EXPECT_DOUBLE_EQ(at_version(jax, v).dropout_rng_bytes_per_value, 24.0) << v;
  for (const char* v : {"0.4.27", "0.4.30", "0.5"}) EXPECT_DOUBLE_EQ(at_version(jax, v).dropout_rng_bytes_per_value, 0.0) << v;
  // PyTorch draws Philox numbers inside its dropout kernel.
  EXPECT_DOUBLE_EQ(find_runtime("pytorch").dropout_rng_bytes_per_value, 0.0);
}

TEST(JaxDropoutRng, TrainingStepPaysTheBitsAtDramSpeedOrSlower) {
  // BERT-base at seq 512, batch 54: attention-probability dropout over 54 x 12 heads x 512 x 512 scores in each of
  // 12 layers, plus the embedding and two hidden dropouts per layer over 54 x 512 x 768 values.
  const double b = 54, s = 512;
  const double values = 12 * (b * 12 * s * s + 2 * b * s * 768) + b * s * 768;
  const double at_peak_ms = values * 24.0 / 1555e9 * 1e3;  // A100 40GB datasheet DRAM bandwidth
  const Prediction old_jax = predict(keras_jax_bert("0.4.20", Mode::kTrain, 54));
  const Prediction new_jax = predict(keras_jax_bert("0.4.27", Mode::kTrain, 54));
  const double extra_ms = (old_jax.step_us - new_jax.step_us) / 1e3;
  EXPECT_GE(extra_ms, at_peak_ms) << extra_ms << " ms against " << at_peak_ms << " ms at peak bandwidth";
  EXPECT_LE(extra_ms, 2.0 * at_peak_ms) << extra_ms << " ms";
}

TEST(JaxDropoutRng, InferenceDrawsNoBits) {
  // Dropout is off in inference (Keras' training=False, flax deterministic=True): no random bits.
  const Prediction old_jax = predict(keras_jax_bert("0.4.20", Mode::kInfer, 64));
  const Prediction new_jax = predict(keras_jax_bert("0.4.27", Mode::kInfer, 64));
  EXPECT_DOUBLE_EQ(old_jax.step_us, new_jax.step_us);
}

}  // namespace
}  // namespace perfcast
