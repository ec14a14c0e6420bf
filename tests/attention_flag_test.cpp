// --attention eager|sdpa|flash (Hugging Face's attn_implementation) against PyTorch's documented dispatch
// (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp, data/attention.toml): which kernel runs the attention
// core on which GPU and precision, what FlashAttention-2 refuses, that the default keeps the runtime's own
// behaviour, and the flag on the command line and in configurations files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/batch_predict.h"
#include "analysis/predict.h"
#include "step_entries.h"
#include "cli_runner.h"
#include "core/error.h"
#include "cost/attention_kernels.h"
#include "import/config_csv.h"
#include "test_paths.h"

namespace perfcast {
namespace {

PredictRequest bert(const std::string& gpu, const std::string& precision, const std::string& attention) {
  PredictRequest r;
  r.model = "bert_base";
  r.gpu = gpu;
  r.precision = precision;
  r.attention = attention;
  r.batch = 32;
  r.seq = 128;
  return r;
}

using test::attention_entry;

AttentionGeometry geometry(std::int64_t head_dim, bool causal = false, bool dropout = false) {
  AttentionGeometry a;
  a.batch = 8;
  a.heads = 16;
  a.kv_heads = 16;
  a.q_len = a.kv_len = 512;
  a.head_dim = head_dim;
  a.causal = causal;
  a.dropout = dropout;
  return a;
}

AttentionTarget on(int sm, const std::string& dtype, bool training = false) { return {"gpu", sm, dtype, training}; }

// ---- the dispatch rules

TEST(AttentionFlag, SdpaPicksFlashThenMemoryEfficientThenMath) {
  const auto sdpa = AttentionImpl::kSdpa;
  // FlashAttention-2: sm_80+ with fp16/bf16.
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(64), on(80, "fp16")), AttentionKernel::kFlash);
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(128), on(90, "bf16")), AttentionKernel::kFlash);
  // fp32 on an A100, and fp16 on a V100 or a T4: the memory-efficient kernel (sm_50+; fp32 allowed).
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(64), on(80, "fp32")), AttentionKernel::kMemoryEfficient);
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(64), on(70, "fp16")), AttentionKernel::kMemoryEfficient);
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(64), on(75, "fp16")), AttentionKernel::kMemoryEfficient);
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(64), on(61, "fp32")), AttentionKernel::kMemoryEfficient);
  // bf16 below sm_80 is no type of the memory-efficient kernel: math fallback (eager kernels).
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(64), on(75, "bf16")), AttentionKernel::kUnfused);
  // Head dimensions past 256 leave flash; fp16 on tensor cores needs a multiple of 8 for the memory-efficient one.
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(320), on(80, "fp16")), AttentionKernel::kMemoryEfficient);
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(60), on(70, "fp16")), AttentionKernel::kUnfused);
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(60), on(61, "fp32")), AttentionKernel::kMemoryEfficient);
  // Training on sm_86/sm_89 with head_dim in (192, 224]: no flash backward.
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(208), on(86, "fp16", true)), AttentionKernel::kMemoryEfficient);
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(208), on(80, "fp16", true)), AttentionKernel::kFlash);
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(256), on(89, "bf16", true)), AttentionKernel::kFlash);
  EXPECT_EQ(select_attention_kernel(sdpa, geometry(256, false, true), on(89, "bf16", true)),
            AttentionKernel::kMemoryEfficient);
  // Eager is always the separate kernels.
  EXPECT_EQ(select_attention_kernel(AttentionImpl::kEager, geometry(64), on(90, "bf16")), AttentionKernel::kUnfused);
}

TEST(AttentionFlag, FlashRefusesOldGpusAndFp32WithAReason) {
  const auto flash = AttentionImpl::kFlash;
  try {
    select_attention_kernel(flash, geometry(64), on(75, "fp16"));
    ADD_FAILURE() << "no error";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("sm_80"), std::string::npos) << e.what();
  }
  try {
    select_attention_kernel(flash, geometry(64), on(80, "fp32"));
    ADD_FAILURE() << "no error";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("fp16 and bf16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(select_attention_kernel(flash, geometry(512), on(90, "bf16")), UnsupportedError);
  EXPECT_EQ(attention_dtype("amp"), "fp16");
  EXPECT_EQ(attention_dtype("amp-bf16"), "bf16");
  EXPECT_EQ(attention_dtype("tf32"), "fp32");
}

// ---- predictions

TEST(AttentionFlag, DefaultKeepsTheRuntimesBehaviour) {
  // PyTorch 1.x has eager attention only; 2.0 and later (the profile's default version) fuse it (SDPA): the flag
  // naming what the runtime already does changes nothing.
  PredictRequest one = bert("v100-sxm2-16gb", "amp", "");
  one.runtime_version = "1.13";
  PredictRequest one_eager = one;
  one_eager.attention = "eager";
  EXPECT_DOUBLE_EQ(predict(one).step_us, predict(one_eager).step_us);
  EXPECT_DOUBLE_EQ(predict(bert("a100-sxm4-40gb", "amp", "")).step_us,
                   predict(bert("a100-sxm4-40gb", "amp", "sdpa")).step_us);
  PredictRequest two = bert("a100-sxm4-40gb", "amp", "");
  two.runtime_version = "2.1";
  PredictRequest two_sdpa = two;
  two_sdpa.attention = "sdpa";
  EXPECT_DOUBLE_EQ(predict(two).step_us, predict(two_sdpa).step_us);  // FlashAttention-2 on an A100 in fp16
}

TEST(AttentionFlag, EagerRunsEveryKernelAndSdpaOne) {
  PredictRequest r = bert("a100-sxm4-40gb", "amp", "eager");
  r.runtime_version = "2.1";
  // Eager under autocast: QK^T, PV plus scale, mask, softmax (half in, FP32 out: autocast's fp32_set_opt_dtype
  // policy, aten/src/ATen/autocast_mode.cpp), dropout, cast (as PyTorch 1.x runs it), and the copies torch.matmul
  // and .contiguous() make of the permuted Q, K, V and context (4).
  EXPECT_DOUBLE_EQ(attention_entry(predict(r), Phase::kForward).cost.launches, 11);
  r.attention = "sdpa";
  const Prediction sdpa = predict(r);
  EXPECT_DOUBLE_EQ(attention_entry(sdpa, Phase::kForward).cost.launches, 1);
  // No score matrix reaches DRAM: q, k, v in and the output out, 2 bytes each.
  EXPECT_LE(attention_entry(sdpa, Phase::kForward).cost.bytes, 1.01 * 4.0 * 32 * 128 * 768 * 2);
}

TEST(AttentionFlag, SdpaSavesTheScoreMatricesMemory) {
  // Training at seq 512: eager keeps batch x heads x 512 x 512 probabilities per layer for backward.
  PredictRequest r = bert("a100-sxm4-40gb", "amp", "eager");
  r.seq = 512;
  const double eager = predict(r).memory.total;
  r.attention = "sdpa";
  EXPECT_LT(predict(r).memory.total, eager - 12.0 * 32 * 12 * 512 * 512 * 2);
}

TEST(AttentionFlag, MemoryEfficientKernelIsSlowerThanFlash) {
  // PyTorch's SDPA tutorial measured the memory-efficient kernel at 0.55 of FlashAttention-2's speed
  // (data/attention.toml). On a V100 (no FlashAttention) sdpa runs it; the runtime's own fused kernel of
  // PyTorch 2.x is costed at FlashAttention's rate. At seq 512 the kernel is compute-bound, so it is slower.
  const AttentionRules& rules = attention_rules();
  EXPECT_GT(rules.mem_efficient_relative_rate, 0.3);
  EXPECT_LT(rules.mem_efficient_relative_rate, 1.0);
  PredictRequest r = bert("v100-sxm2-16gb", "amp", "sdpa");
  r.seq = 512;
  r.batch = 8;
  PredictRequest fused = r;
  fused.runtime_version = "2.1";
  fused.attention = "";
  EXPECT_GT(attention_entry(predict(r), Phase::kForward).cost.time_us,
            1.3 * attention_entry(predict(fused), Phase::kForward).cost.time_us);
}

TEST(AttentionFlag, ReportsSayWhichKernelRan) {
  const auto has_note = [](const Prediction& p, const std::string& text) {
    for (const auto& n : p.notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has_note(predict(bert("v100-sxm2-16gb", "amp", "sdpa")), "memory-efficient kernel for 12"));
  EXPECT_TRUE(has_note(predict(bert("h100-sxm5-80gb", "amp-bf16", "sdpa")), "FlashAttention-2 for 12"));
  EXPECT_FALSE(has_note(predict(bert("t4", "amp", "")), "--attention"));
}

TEST(AttentionFlag, FlashAndSdpaRefusedWhereTheyCannotRun) {
  EXPECT_THROW(predict(bert("v100-sxm2-16gb", "amp", "flash")), UnsupportedError);
  EXPECT_THROW(predict(bert("a100-sxm4-40gb", "fp32", "flash")), UnsupportedError);
  EXPECT_NO_THROW(predict(bert("a100-sxm4-40gb", "amp-bf16", "flash")));
  PredictRequest trt = bert("a100-sxm4-40gb", "fp16", "sdpa");
  trt.runtime = "tensorrt";
  trt.mode = Mode::kInfer;
  EXPECT_THROW(predict(trt), InputError);  // --attention is PyTorch's
  PredictRequest old = bert("a100-sxm4-40gb", "amp", "sdpa");
  old.runtime_version = "1.13";
  EXPECT_THROW(predict(old), InputError);  // SDPA arrived in PyTorch 2.0
  PredictRequest sw = bert("a100-sxm4-40gb", "amp", "sdpa");
  sw.model = std::string(PERFCAST_SOURCE_DIR) + "/data/models/hf/switch-base-8.json";
  try {
    predict(sw);
    ADD_FAILURE() << "no error";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("eager attention only"), std::string::npos) << e.what();
  }
  sw.attention = "eager";
  EXPECT_NO_THROW(predict(sw));
}

TEST(AttentionFlag, ServingUsesTheChosenKernel) {
  PredictRequest r;
  r.gpu = "a100-sxm4-80gb";
  r.model = "llama-2-7b";
  r.mode = Mode::kPrefill;
  r.precision = "fp16";
  r.batch = 1;
  r.seq = 2048;
  r.attention = "eager";
  const double eager = predict(r).step_us;
  r.attention = "flash";
  EXPECT_LT(predict(r).step_us, eager);  // no 2048 x 2048 score matrices through DRAM
  r.gpu = "v100-sxm2-16gb";
  r.model = "gpt2";
  r.seq = 512;
  EXPECT_THROW(predict(r), UnsupportedError);
}

// ---- configurations files and the command line

TEST(AttentionFlag, ConfigsColumnReachesTheRequest) {
  const auto path = std::filesystem::temp_directory_path() / "perfcast_attention_column.csv";
  std::ofstream(path) << "gpu,model,mode,precision,batch,seq,attention\n"
                         "a100-sxm4-40gb,bert_base,train,amp,32,128,sdpa\n"
                         "a100-sxm4-40gb,bert_base,train,amp,32,128,eager\n"
                         "v100-sxm2-16gb,bert_base,train,amp,32,128,flash\n"
                         "a100-sxm4-40gb,bert_base,train,amp,32,128,flsh\n";
  const auto rows = read_config_csv(path, false);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(request_from_row(rows[0]).attention, "sdpa");
  const auto results = predict_rows(rows);
  ASSERT_TRUE(results[0].prediction && results[1].prediction);
  EXPECT_GT(results[0].prediction->samples_per_s, results[1].prediction->samples_per_s);
  EXPECT_NE(results[2].status.find("sm_80"), std::string::npos) << results[2].status;
  EXPECT_NE(results[3].status.find("did you mean 'flash'"), std::string::npos) << results[3].status;
  std::filesystem::remove(path);
}

class AttentionCli : public test::ScratchDirTest {};

TEST_F(AttentionCli, FlagTypoAndRefusalAreOneLineErrors) {
  const auto typo = run("predict --gpu a100-sxm4-40gb --model bert_base --attention sdap");
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("did you mean 'sdpa'"), std::string::npos) << typo.err;
  const auto refused = run("predict --gpu t4 --model bert_base --precision amp --attention flash");
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("sm_80"), std::string::npos) << refused.err;
  const auto ok = run("predict --gpu a100-sxm4-40gb --model bert_base --precision amp --attention sdpa --json");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

}  // namespace
}  // namespace perfcast
