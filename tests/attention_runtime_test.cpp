// How each runtime runs the attention core, checked against the kernels the frameworks launch:
// - eager PyTorch on BERT (Hugging Face / NVIDIA DeepLearningExamples code): QK^T, scale by 1/sqrt(d), add the
//   mask, softmax, dropout (training), PV; autocast runs softmax in FP32 (a cast in, a cast back to FP16 for the
//   PV matmul) per the torch.cuda.amp op reference;
// - TensorRT (fused MHA) and torch.compile (Inductor rewrites the pattern to scaled_dot_product_attention) keep
//   the score matrix on chip.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/batch_predict.h"
#include "analysis/predict.h"
#include "cost/attention_kernels.h"
#include "step_entries.h"
#include "import/config_csv.h"
#include "import/model_source.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

PredictRequest bert(const std::string& runtime, const std::string& precision, const std::string& mode) {
  PredictRequest r;
  r.model = "bert_base";
  r.gpu = "v100-sxm2-16gb";
  r.runtime = runtime;
  r.precision = precision;
  r.mode = parse_mode(mode);
  r.batch = 32;
  r.seq = 128;
  return r;
}

using test::attention_entry;

constexpr double kScores = 32.0 * 12 * 128 * 128;  // batch x heads x seq x seq of BERT-base at seq 128

// PyTorch before 2.0 (no scaled_dot_product_attention) runs attention as the textbook code; 2.x, the default,
// fuses it (--runtime-version 1.13 for the eager path).
PredictRequest eager_bert(const std::string& precision, const std::string& mode) {
  PredictRequest r = bert("pytorch", precision, mode);
  r.runtime_version = "1.13";
  return r;
}

TEST(AttentionRuntime, EagerAutocastLaunchesEveryKernelOfTheTextbookCode) {
  const Prediction train = predict(eager_bert("amp", "train"));
  // Forward: QK^T and PV, plus scale, mask add, softmax (half scores in, FP32 out: autocast's fp32_set_opt_dtype
  // policy in aten/src/ATen/autocast_mode.cpp, no cast before it), dropout, cast to FP16, plus the four head copies
  // (below).
  EXPECT_DOUBLE_EQ(attention_entry(train, Phase::kForward).cost.launches, 11);
  // Backward: dP, dV, dQ, dK matmuls, plus cast, dropout, softmax (ATen's gradient x probabilities product, then
  // the kernel writing the half gradient) and scale backward, plus the four copies of the gradients.
  EXPECT_DOUBLE_EQ(attention_entry(train, Phase::kBackward).cost.launches, 13);
  // FP32 without autocast: no casts.
  EXPECT_DOUBLE_EQ(attention_entry(predict(eager_bert("fp32", "train")), Phase::kForward).cost.launches, 10);
}

// BertSelfAttention (Hugging Face modeling_bert.py; NVIDIA DeepLearningExamples PyTorch/LanguageModeling/BERT/
// modeling.py) permutes the [N, S, hidden] projections to heads (transpose_for_scores) and hands the views to
// torch.matmul, whose batch flattening (ATen LinearAlgebra.cpp matmul: expand(...).reshape({N x heads, S, d}))
// copies a permute whose batch and head strides cannot merge; the context is made contiguous again. So Q, K, V and
// the context are each copied (read and written once) in forward, and their gradients in backward. torchvision's
// ViT runs nn.MultiheadAttention, which hands bmm strided views and copies none of them this way.
TEST(AttentionRuntime, EagerTextbookCodeCopiesTheHeadsOncePerPhase) {
  for (const char* id : {"bert_base", "gpt2", "bert_large_squad"}) {
    const Graph g = resolve_model(id, {}).build({1, 128});
    for (const auto& op : g.ops)
      if (op.kind == OpKind::kAttention) {
        EXPECT_TRUE(op.attn.head_copies) << id << " " << op.name;
      }
  }
  const Graph vit = resolve_model("vit_b_16", {}).build({1, 0});
  for (const auto& op : vit.ops)
    if (op.kind == OpKind::kAttention) {
      EXPECT_FALSE(op.attn.head_copies) << op.name;
    }
  // Inference forward, FP32: QK^T, scale, mask add, softmax, PV and the four copies.
  const Prediction infer = predict(eager_bert("fp32", "infer"));
  EXPECT_DOUBLE_EQ(attention_entry(infer, Phase::kForward).cost.launches, 9);
  // Its bytes: the GEMMs read Q, K, V and write the context once, write and read the scores once each; scale, mask
  // and softmax read and write the scores; the four copies read and write Q, K, V and the context once more.
  const double hidden = 32.0 * 128 * 768 * 4;  // batch x seq x hidden, FP32
  EXPECT_NEAR(attention_entry(infer, Phase::kForward).cost.bytes, 4 * hidden + 8 * 4 * kScores + 8 * hidden,
              1e-6 * hidden);
  // The fused path of PyTorch 2.x (scaled_dot_product_attention) takes the views as they are.
  EXPECT_DOUBLE_EQ(attention_entry(predict(bert("pytorch", "fp16", "infer")), Phase::kForward).cost.launches, 1);
}

TEST(AttentionRuntime, TrainingAddsExactlyTheDropoutKernelsTraffic) {
  // Between inference and training forward the only difference is dropout over the FP32 probabilities:
  // read 4 bytes, write 4 bytes and a 1-byte mask per score element.
  const double train = attention_entry(predict(eager_bert("amp", "train")), Phase::kForward).cost.bytes;
  const double infer = attention_entry(predict(eager_bert("amp", "infer")), Phase::kForward).cost.bytes;
  EXPECT_NEAR(train - infer, 9.0 * kScores, 1.0);
}

TEST(AttentionRuntime, FusedEnginesKeepScoresOnChip) {
  for (const char* runtime : {"tensorrt", "pytorch-compile"}) {
    const Prediction p = predict(bert(runtime, "fp16", "infer"));
    const OpCost& a = attention_entry(p, Phase::kForward);
    EXPECT_DOUBLE_EQ(a.cost.launches, 1) << runtime;
    // q, k, v in and the context out, 2 bytes each: nothing score-sized reaches DRAM.
    const double qkvo = 4.0 * 32 * 128 * 768 * 2;
    EXPECT_LE(a.cost.bytes, 1.01 * qkvo) << runtime;
  }
}

// TorchInductor fuses the residual add into the LayerNorm kernel that reads it (a pointwise producer fused into
// its reduction consumer): one Triton kernel reads the two addends, writes the sum and the normalized output. So a
// compiled LayerNorm moves its output and not its input, about half an eager LayerNorm's bytes (read + write).
TEST(AttentionRuntime, CompiledLayerNormReadsNothingTheResidualAddWrote) {
  const Prediction eager = predict(bert("pytorch", "fp16", "infer"));
  const Prediction compiled = predict(bert("pytorch-compile", "fp16", "infer"));
  const double hidden = 32.0 * 128 * 768 * 2;  // batch x seq x hidden, FP16
  int checked = 0;
  for (const auto& c : compiled.step.entries) {
    if (c.kind != OpKind::kNorm || c.phase != Phase::kForward) continue;
    for (const auto& e : eager.step.entries) {
      if (e.name != c.name || e.phase != Phase::kForward) continue;
      EXPECT_NEAR(e.cost.bytes, 2.0 * hidden, 0.01 * hidden) << e.name;
      EXPECT_NEAR(c.cost.bytes, hidden, 0.01 * hidden) << c.name;
      ++checked;
    }
  }
  // BERT-base (Hugging Face BertForPreTraining): the embedding LayerNorm (after the embedding sum), two per layer in 12
  // layers (after the residual adds) and the MLM head's transform LayerNorm (after its GELU).
  EXPECT_EQ(checked, 26);
}

TEST(AttentionRuntime, OnlyModelsThatTrainWithAttentionDropoutGetIt) {
  // BERT (attention_probs_dropout_prob 0.1) and GPT-2 (attn_pdrop 0.1) drop attention probabilities in training;
  // Llama-family configs have attention_dropout 0 (PyTorch's dropout launches nothing at p = 0).
  for (const char* id : {"bert_base", "gpt2"}) {
    const Graph g = resolve_model(id, {}).build({1, 0});
    for (const auto& op : g.ops) {
      if (op.kind == OpKind::kAttention) {
        EXPECT_TRUE(op.attn.dropout) << id << " " << op.name;
      }
    }
  }
  const Graph llama = resolve_model("llama-2-7b", {}).build({1, 64});
  int cores = 0;
  for (const auto& op : llama.ops)
    if (op.kind == OpKind::kAttention) {
      ++cores;
      EXPECT_FALSE(op.attn.dropout) << op.name;
    }
  EXPECT_EQ(cores, 32);
}

// A configurations file with the optional columns: layout, host, host_cores, gpu_decode, context.
std::filesystem::path write_csv(const std::string& name, const std::string& body) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << "gpu,model,runtime,mode,precision,batch,layout,host,host_cores,gpu_decode,context\n" << body;
  return path;
}

TEST(AttentionRuntime, ConfigColumnsReachTheRequest) {
  const auto path = write_csv("perfcast_columns_test.csv",
                              "v100-sxm2-16gb,resnet50,pytorch,train,amp,256,nhwc,dgx1,20,yes,\n"
                              "v100-sxm2-16gb,resnet50,pytorch,train,amp,256,,,,,\n"
                              "v100-sxm2-16gb,resnet50,pytorch,train,amp,256,nhcw,,,,\n"
                              "v100-sxm2-16gb,resnet50,pytorch,train,amp,256,,,,maybe,\n");
  const auto rows = read_config_csv(path, false);
  ASSERT_EQ(rows.size(), 4u);
  const PredictRequest r = request_from_row(rows[0]);
  EXPECT_TRUE(r.channels_last);
  EXPECT_EQ(r.host, "dgx1");
  EXPECT_EQ(r.host_cores, 20);
  EXPECT_TRUE(r.gpu_decode);
  const auto results = predict_rows(rows);
  // Channels-last drops the NCHW<->NHWC transposes around tensor-core convolutions: faster on a V100.
  ASSERT_TRUE(results[0].prediction && results[1].prediction);
  EXPECT_GT(results[0].prediction->samples_per_s, results[1].prediction->samples_per_s);
  EXPECT_NE(results[2].status.find("layout must be nchw or nhwc"), std::string::npos) << results[2].status;
  EXPECT_NE(results[3].status.find("gpu_decode must be yes or no"), std::string::npos) << results[3].status;
  std::filesystem::remove(path);
}

TEST(AttentionRuntime, PrefetchColumnReachesTheRequest) {
  const auto path = std::filesystem::temp_directory_path() / "perfcast_prefetch_test.csv";
  std::ofstream(path) << "gpu,model,runtime,mode,precision,batch,data,prefetch\n"
                         "gtx-1080-ti,resnet50,pytorch,infer,fp32,32,host,yes\n"
                         "gtx-1080-ti,resnet50,pytorch,infer,fp32,32,host,\n"
                         "gtx-1080-ti,resnet50,pytorch,infer,fp32,32,host,often\n";
  const auto rows = read_config_csv(path, false);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(request_from_row(rows[0]).prefetch);
  EXPECT_FALSE(request_from_row(rows[1]).prefetch);
  const auto results = predict_rows(rows);
  ASSERT_TRUE(results[0].prediction && results[1].prediction);
  EXPECT_GT(results[0].prediction->samples_per_s, results[1].prediction->samples_per_s) << "the copy hides";
  EXPECT_NE(results[2].status.find("prefetch must be yes or no"), std::string::npos) << results[2].status;
  std::filesystem::remove(path);
}

TEST(AttentionRuntime, AmpO2ColumnNamesTheNearestValue) {
  // NVIDIA DeepLearningExamples' BERT run_squad.py runs --fp16 as apex amp O2 (a half model, no autocast): rows
  // from it say `amp_o2 = yes`; a misspelt value is that row's error with the value it was meant to be.
  const auto path = std::filesystem::temp_directory_path() / "perfcast_amp_o2_test.csv";
  std::ofstream(path) << "gpu,model,runtime,mode,precision,batch,seq,amp_o2\n"
                         "v100-sxm2-16gb,bert_large_squad,pytorch,train,amp,10,384,yes\n"
                         "v100-sxm2-16gb,bert_large_squad,pytorch,train,amp,10,384,yse\n";
  const auto rows = read_config_csv(path, false);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(request_from_row(rows[0]).amp_o2);
  const auto results = predict_rows(rows);
  EXPECT_TRUE(results[0].prediction);
  EXPECT_NE(results[1].status.find("did you mean 'yes'"), std::string::npos) << results[1].status;
  std::filesystem::remove(path);
}

TEST(AttentionRuntime, AmpO2StepMovesWhatApexO2Moves) {
  // apex amp/_process_optimizer.py (the O2 master-weight path every optimizer but FusedSGD takes):
  // post_backward_with_master_weights unscales each half gradient into a new FP32 master gradient
  // (multi_tensor_scale: 2 bytes in, 4 out per parameter), and the patched step() copies the FP32 masters back
  // into the half model (_master_params_to_model_params: 4 in, 2 out). O2 patches no torch functions
  // (amp/frontend.py: patch_torch_functions False), so no activation is cast and no cast has a backward node.
  PredictRequest r = eager_bert("amp", "train");
  r.amp_o2 = true;
  r.fused_optimizer = true;
  const Prediction p = predict(r);
  const auto bytes_of = [&](const std::string& name) {
    double bytes = -1;
    for (const auto& e : p.step.entries)
      if (e.name == name) bytes = e.cost.bytes;
    return bytes;
  };
  const double params = static_cast<double>(p.params);
  EXPECT_DOUBLE_EQ(bytes_of("amp.unscale_grads"), 6.0 * params);
  EXPECT_DOUBLE_EQ(bytes_of("amp.cast_weights"), 6.0 * params);
  EXPECT_EQ(bytes_of("amp.cast_activations"), -1.0);
  EXPECT_EQ(bytes_of("amp.cast_grads"), -1.0);
  // DeepLearningExamples' modeling.py runs dropout on the half probabilities: training adds its read and write of
  // 2 bytes each and PyTorch's 1-byte mask per score element, and nothing else, to the forward attention.
  PredictRequest infer = r;
  infer.mode = parse_mode("infer");
  const double added = attention_entry(p, Phase::kForward).cost.bytes -
                       attention_entry(predict(infer), Phase::kForward).cost.bytes;
  EXPECT_NEAR(added, 5.0 * kScores, 1e-6 * kScores);
}

TEST(AttentionRuntime, DecodeContextColumn) {
  const auto path = write_csv("perfcast_context_test.csv",
                              // 3968 cached + 128 decoded (the default --seq) = Llama 2's 4096 positions
                              "a100-sxm4-80gb,llama-2-7b,vllm,decode,fp16,1,,,,,3968\n"
                              "a100-sxm4-80gb,llama-2-7b,vllm,decode,fp16,1,,,,,\n");
  const auto rows = read_config_csv(path, false);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(request_from_row(rows[0]).context, 3968);
  const auto results = predict_rows(rows);
  ASSERT_TRUE(results[0].prediction && results[1].prediction);
  // A 3968-token KV cache is read at every step: slower than decoding from an empty cache.
  EXPECT_LT(results[0].prediction->tokens_per_s.value_or(0), results[1].prediction->tokens_per_s.value_or(0));
  std::filesystem::remove(path);
}


PredictRequest llama_serving(const std::string& gpu, const std::string& runtime, const std::string& mode) {
  PredictRequest r;
  r.model = "llama-2-7b";
  r.gpu = gpu;
  r.runtime = runtime;
  r.mode = parse_mode(mode);
  r.precision = runtime == "llama.cpp" ? "f16" : "fp16";
  r.batch = 1;
  return r;
}

// ---------------------------------------------------------------- JAX and ONNX Runtime profiles

PredictRequest a100(const std::string& runtime, const std::string& model, const std::string& mode,
                    const std::string& precision) {
  PredictRequest r;
  r.gpu = "a100-sxm4-40gb";
  r.model = model;
  r.runtime = runtime;
  r.mode = parse_mode(mode);
  r.precision = precision;
  r.batch = 64;
  return r;
}

TEST(RuntimeProfiles, JaxRunsFp32AsTf32OnAmpereAndFusesElementwiseChains) {
  // JAX docs ('Matmul precision'): float32 dots and convolutions default to TF32 on recent GPUs.
  const Prediction jax_fp32 = predict(a100("jax", "resnet50", "train", "fp32"));
  const Prediction jax_tf32 = predict(a100("jax", "resnet50", "train", "tf32"));
  EXPECT_DOUBLE_EQ(jax_fp32.samples_per_s, jax_tf32.samples_per_s);
  // XLA fuses batch norm's elementwise tail and ReLU: fewer kernels and bytes than eager PyTorch.
  const Prediction eager = predict(a100("pytorch", "resnet50", "train", "amp"));
  const Prediction jax = predict(a100("jax", "resnet50", "train", "amp"));
  EXPECT_LT(jax.step.launches, eager.step.launches);
  EXPECT_LT(jax.step.bytes, eager.step.bytes);
}

TEST(RuntimeProfiles, OnnxRuntimeFoldsBatchNormAtInference) {
  // ORT's default graph optimizations fold BatchNormalization into the preceding Conv and fuse Conv + ReLU.
  const Prediction ort = predict(a100("onnxruntime", "resnet50", "infer", "amp"));
  const Prediction eager = predict(a100("pytorch", "resnet50", "infer", "amp"));
  // ResNet-50 has 53 batch norms and 49 ReLUs that become part of the convolutions. Counted at FP32: under mixed
  // precision the two runtimes cast weights by different rules (torch.autocast casts conv/linear weights only).
  const Prediction ort_fp32 = predict(a100("onnxruntime", "resnet50", "infer", "fp32"));
  const Prediction eager_fp32 = predict(a100("pytorch", "resnet50", "infer", "fp32"));
  EXPECT_LE(ort_fp32.step.launches, eager_fp32.step.launches - 53 - 49);
  EXPECT_GT(ort.samples_per_s, eager.samples_per_s);
}

TEST(RuntimeProfiles, OnnxRuntime14LaunchesTheKernelsOfItsFusedContribOps) {
  // ONNX Runtime 1.4's CUDA sources (onnxruntime/contrib_ops/cuda/bert/): an Attention node runs 7 kernels
  // (attention.cc: a GEMM broadcasting the bias against GetConstOnes, the QKV GEMM; attention_impl.cu
  // QkvToContext: LaunchTransQkv, the Q K^T strided-batched GEMM, softmax, the P V GEMM, LaunchTransCtx), and an
  // EmbedLayerNormalization node one (embed_layer_norm_impl.cu: EmbedLayerNormKernel). BERT-base has 12 layers.
  PredictRequest r;
  r.gpu = "v100-pcie-16gb";
  r.model = "bert_base_squad";
  r.runtime = "onnxruntime";
  r.runtime_version = "1.4.0";
  r.mode = Mode::kInfer;
  r.batch = 1;
  r.seq = 128;
  const Prediction p = predict(r);
  double attention = 0, embed = 0;
  for (const auto& e : p.step.entries) {
    const bool in_attention = e.name.find("attention.") != std::string::npos &&
                              (e.name.ends_with(".q") || e.name.ends_with(".k") || e.name.ends_with(".v") ||
                               e.name.ends_with(".core"));
    if (in_attention) attention += e.cost.launches;
    if (e.name.rfind("embeddings.", 0) == 0) embed += e.cost.launches;
  }
  EXPECT_DOUBLE_EQ(attention, 12.0 * 7.0);
  EXPECT_DOUBLE_EQ(embed, 1.0);
}

// ONNX Runtime's Attention contrib op from 1.14 hands an FP16 core to TensorRT's fused MHA kernel
// (microsoft/onnxruntime#12814, #13732; mha_runner.cu FusedMHARunnerFP16v2::is_supported): one kernel takes the
// packed Q, K, V and writes the context, so nothing score-sized reaches DRAM. BERT-large SQuAD at sequence 128
// on an RTX 4090 (sm_89, head size 64), as ORT's PyTorch_Bert-Squad_OnnxRuntime_GPU notebook ran it with 1.16.
PredictRequest ort_bert_large(const std::string& version, const std::string& precision, std::int64_t seq) {
  PredictRequest r;
  r.gpu = "rtx-4090";
  r.model = "bert_large_squad";
  r.runtime = "onnxruntime";
  r.runtime_version = version;
  r.precision = precision;
  r.mode = Mode::kInfer;
  r.batch = 8;
  r.seq = seq;
  return r;
}

TEST(RuntimeProfiles, OnnxRuntimeHalfAttentionRunsTensorRtFusedMhaFrom114) {
  const Prediction p = predict(ort_bert_large("1.16", "fp16", 128));
  const OpCost& fused = attention_entry(p, Phase::kForward);
  EXPECT_DOUBLE_EQ(fused.cost.launches, 1);
  const double qkvo = 4.0 * 8 * 128 * 1024 * 2;  // q, k, v in and the context out, 2 bytes each
  EXPECT_LE(fused.cost.bytes, 1.01 * qkvo);
  // Before #13732 (1.13 ran it at batch 1 only) and in FP32 (the FP16 runner only) the score matrix is written.
  const double scores = 8.0 * 16 * 128 * 128 * 2;
  EXPECT_GT(attention_entry(predict(ort_bert_large("1.13", "fp16", 128)), Phase::kForward).cost.bytes, scores);
  EXPECT_GT(attention_entry(predict(ort_bert_large("1.16", "fp32", 128)), Phase::kForward).cost.bytes, 2 * scores);
  // Past the normal kernel's 384 tokens the TensorRT runner declines (its flash kernel is not modelled).
  EXPECT_GT(attention_entry(predict(ort_bert_large("1.16", "fp16", 512)), Phase::kForward).cost.launches, 1);
}

TEST(RuntimeProfiles, OnnxRuntimeFusedMhaKeepsTheTensorRtKernelLimits) {
  // FusedMHARunnerFP16v2::is_supported (non-causal, not flash): sm_70/75/80/86/89, head size 64 or 32 (not 32 on
  // sm_70), sequence length up to 384, the FP16 runner; self-attention in inference.
  AttentionGeometry a;
  a.batch = 1;
  a.heads = 12;
  a.kv_heads = 12;
  a.head_dim = 64;
  a.q_len = a.kv_len = 384;
  const AttentionTarget v100{"v100-pcie-16gb", 70, "fp16", false};
  EXPECT_TRUE(onnxruntime_fused_mha_runs(a, v100));
  for (int sm : {75, 80, 86, 89}) EXPECT_TRUE(onnxruntime_fused_mha_runs(a, {"", sm, "fp16", false})) << sm;
  EXPECT_FALSE(onnxruntime_fused_mha_runs(a, {"h100-sxm5-80gb", 90, "fp16", false}));
  EXPECT_FALSE(onnxruntime_fused_mha_runs(a, {"v100-pcie-16gb", 70, "fp32", false}));
  EXPECT_FALSE(onnxruntime_fused_mha_runs(a, {"v100-pcie-16gb", 70, "fp16", true}));
  AttentionGeometry longer = a;
  longer.q_len = longer.kv_len = 385;
  EXPECT_FALSE(onnxruntime_fused_mha_runs(longer, v100));
  AttentionGeometry h32 = a;
  h32.head_dim = 32;
  EXPECT_FALSE(onnxruntime_fused_mha_runs(h32, v100));
  EXPECT_TRUE(onnxruntime_fused_mha_runs(h32, {"t4", 75, "fp16", false}));
  AttentionGeometry h128 = a;
  h128.head_dim = 128;
  EXPECT_FALSE(onnxruntime_fused_mha_runs(h128, {"", 80, "fp16", false}));
  AttentionGeometry causal = a;
  causal.causal = true;
  EXPECT_FALSE(onnxruntime_fused_mha_runs(causal, v100));
}

// InferenceSession::Run returns only after the CUDA EP synchronizes its compute stream (OnRunEnd;
// microsoft/onnxruntime#7225, #12216), so a timed loop of Run calls cannot overlap one Run's kernels with the next
// one's host work: the step is the host-to-GPU timeline, never shorter than the host's dispatch plus the last
// kernel. ORT 1.4 FP16 BERT-base at batch 1, sequence 8 on the V100 is host-bound (the README's 1.30 ms is flat
// from sequence 8 to 64).
TEST(RuntimeProfiles, OnnxRuntimeRunEndsInAStreamSync) {
  EXPECT_GE(find_runtime("onnxruntime").syncs_per_step, 1);
  PredictRequest r;
  r.gpu = "v100-pcie-16gb";
  r.model = "bert_base_squad";
  r.runtime = "onnxruntime";
  r.runtime_version = "1.4.0";
  r.precision = "fp16";
  r.mode = Mode::kInfer;
  r.batch = 1;
  r.seq = 8;
  const Prediction p = predict(r);
  EXPECT_GE(p.step.syncs, 1);
  EXPECT_GT(p.step.step_us, p.step.host_us);
}

TEST(RuntimeProfiles, CaffeChoosesConvolutionsUnderItsEightMegabyteWorkspace) {
  // BVLC Caffe asks cuDNN for the best algorithm within workspace_limit_bytes = 8 MB (cudnn_conv_layer.cpp), so
  // the large-workspace algorithms an autotuner with room would take (FFT, non-fused Winograd) are out of reach:
  // on a GP102 card its VGG-16 (all 3x3 convolutions) cannot be faster than with an unlimited workspace.
  PredictRequest r;
  r.gpu = "gtx-1080-ti";
  r.model = "vgg16";
  r.mode = Mode::kTrain;
  r.batch = 32;
  r.runtime = "caffe";
  const Prediction caffe = predict(r);
  const RuntimeProfile& profile = find_runtime("caffe");
  EXPECT_LE(profile.conv_workspace_limit_bytes, 8.0 * 1024 * 1024);
  r.runtime = "mxnet";  // the same cuDNN 5 generation (MXNet 0.x) and autotuning, without the cap
  r.runtime_version = "0.9";
  const Prediction mxnet = predict(r);
  EXPECT_LT(caffe.samples_per_s, mxnet.samples_per_s);
  // Caffe's SGD touches each parameter blob with four kernels (clear, weight decay, momentum update, apply).
  EXPECT_DOUBLE_EQ(profile.optimizer_kernels_per_tensor, 4.0);
}

TEST(GenerateMode, PromptPrefillThenDecodeAddUp) {
  // A served request: the prompt's prefill (--context tokens), then --seq decode steps; the throughput serving
  // benchmarks report is generated tokens over that whole time.
  PredictRequest g = llama_serving("a100-sxm4-80gb", "vllm", "generate");
  g.context = 2048;
  g.seq = 128;
  const Prediction p = predict(g);
  ASSERT_TRUE(p.llm.has_value());
  EXPECT_NEAR(p.step_us / 1e3, p.llm->time_to_first_token_ms + 128 * p.llm->time_per_output_token_ms,
              1e-6 * p.step_us);
  PredictRequest pre = g;
  pre.mode = Mode::kPrefill;
  pre.seq = 2048;
  pre.context = 0;
  EXPECT_NEAR(p.llm->time_to_first_token_ms, predict(pre).step_us / 1e3, 1e-6 * p.step_us);
  PredictRequest dec = g;
  dec.mode = Mode::kDecode;
  const Prediction d = predict(dec);
  EXPECT_LT(*p.tokens_per_s, *d.tokens_per_s) << "the prompt's prefill is part of the request";
  // Without a prompt, generate is decode.
  g.context = 0;
  dec.context = 0;
  EXPECT_DOUBLE_EQ(predict(g).step_us, predict(dec).step_us);
}

TEST(GenerateMode, MemoryCountsThePromptPass) {
  // The prompt's prefill pass holds a batch x context working set that a decode step does not.
  PredictRequest g = llama_serving("rtx-3090", "llama.cpp", "generate");
  g.precision = "q4_0";
  g.context = 512;
  g.seq = 128;
  g.batch = 16;
  PredictRequest dec = g;
  dec.mode = Mode::kDecode;
  EXPECT_GT(predict(g).memory.total, predict(dec).memory.total);
}

TEST(LlamaCpp, Fp16AccumulateKeepsTuringDatacenterBoardsAheadOfTheGeForce) {
  // llama.cpp's FP16 GEMMs accumulate in FP16 (CUBLAS_COMPUTE_16F). TITAN RTX (72 SMs, 672 GB/s) then outruns the
  // RTX 2080 Ti (68 SMs, 616 GB/s) at prefill, as its datasheet says it should.
  PredictRequest titan = llama_serving("titan-rtx", "llama.cpp", "prefill");
  titan.seq = 512;
  PredictRequest ti = titan;
  ti.gpu = "rtx-2080-ti";
  EXPECT_GT(predict(titan).tokens_per_s.value_or(0), predict(ti).tokens_per_s.value_or(0));
}

}  // namespace
}  // namespace perfcast
