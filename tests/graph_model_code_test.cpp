// The eager model code a zoo graph's layers run (data/graph_code, docs/host-model.md), against its source:
// Hugging Face transformers' GPT2Block, read in huggingface/transformers@c44b2d9976e8eafbdcb89cb2710141b2bc9b138f
// src/transformers/models/gpt2/modeling_gpt2.py (GPT2Attention, GPT2SdpaAttention, GPT2MLP, GPT2Block; Conv1D's
// forward is view, addmm, view; NewGELUActivation eight calls), and BertLayer, read in huggingface/transformers@8ec58104181bfb34d824d89bccc009b4f6be6e0e
// src/transformers/models/bert/modeling_bert.py (BertSelfAttention, BertSdpaSelfAttention, BertSelfOutput,
// BertAttention, BertIntermediate, BertOutput, BertLayer) and, for ACT2FN['gelu'] being a module,
// transformers@00e12e7c54598e50e7bef1540db3408f81916de1 src/transformers/activations.py. Each list below is the
// code's calls in the order the forward functions make them (an encoder layer in eval, attention mask given, no
// head mask, no cache, absolute positions).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "cost/op_cost.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "import/zoo/transformer_blocks.h"
#include "runtime/graph_model_code.h"
#include "runtime/runtime_profile.h"
#include "schedule/step.h"

namespace perfcast {
namespace {

// The torch calls of the textbook attention path (BertSelfAttention.forward and the rest of the layer).
const std::vector<std::string> kEagerLayerCalls = {
    // BertSelfAttention.forward
    "query", "key", "key view", "key permute", "value", "value view", "value permute", "query view",
    "query permute", "key_layer.transpose", "torch.matmul", "/ sqrt(head size)", "+ attention_mask", "softmax",
    "self.dropout", "torch.matmul", "permute", "contiguous", "view",
    // BertSelfOutput.forward
    "dense", "dropout", "+ input_tensor", "LayerNorm",
    // BertIntermediate.forward
    "dense", "GELUActivation: nn.functional.gelu",
    // BertOutput.forward
    "dense", "dropout", "+ input_tensor", "LayerNorm"};

// Of those, the kernels in eval: torch.matmul on permuted 4-D operands copies each non-viewable operand (Q and K,
// then V; the probabilities are contiguous) before its bmm; views, permutes, transposes and eval dropouts launch none.
const std::vector<std::string> kEagerLayerKernels = {
    "query GEMM", "key GEMM", "value GEMM", "Q copy", "K copy", "scores bmm", "divide", "mask add", "softmax",
    "V copy", "context bmm", "context contiguous copy", "dense GEMM", "residual add", "LayerNorm",
    "dense GEMM", "gelu", "dense GEMM", "residual add", "LayerNorm"};

const std::vector<std::string> kEagerLayerModules = {
    "BertLayer", "BertAttention", "BertSelfAttention", "query", "key", "value", "attention dropout",
    "BertSelfOutput", "dense", "dropout", "LayerNorm", "BertIntermediate", "dense", "GELUActivation",
    "BertOutput", "dense", "dropout", "LayerNorm"};

// BertSdpaSelfAttention.forward (PyTorch >= 2.2: no contiguous() of q, k, v) and the same rest of the layer.
const std::vector<std::string> kSdpaLayerCalls = {
    "query", "query view", "query permute", "key", "key view", "key permute", "value", "value view",
    "value permute", "scaled_dot_product_attention", "transpose", "reshape",
    "dense", "dropout", "+ input_tensor", "LayerNorm", "dense", "gelu", "dense", "dropout", "+ input_tensor",
    "LayerNorm"};

const std::vector<std::string> kSdpaLayerKernels = {
    "query GEMM", "key GEMM", "value GEMM", "fused attention", "reshape copy of the transposed output",
    "dense GEMM", "residual add", "LayerNorm", "dense GEMM", "gelu", "dense GEMM", "residual add", "LayerNorm"};

TEST(GraphModelCode, HfBertLayerCountsFromModelingBert) {
  const GraphModelCode& bert = find_graph_model_code("hf_bert");
  EXPECT_EQ(bert.eager.python_ops, static_cast<double>(kEagerLayerCalls.size()));
  EXPECT_EQ(bert.eager.kernels, static_cast<double>(kEagerLayerKernels.size()));
  EXPECT_EQ(bert.eager.module_calls, static_cast<double>(kEagerLayerModules.size()));
  EXPECT_EQ(bert.sdpa.python_ops, static_cast<double>(kSdpaLayerCalls.size()));
  EXPECT_EQ(bert.sdpa.kernels, static_cast<double>(kSdpaLayerKernels.size()));
  // BertSdpaSelfAttention hands dropout_p to SDPA: no attention-probabilities dropout module.
  EXPECT_EQ(bert.sdpa.module_calls, static_cast<double>(kEagerLayerModules.size()) - 1);
  EXPECT_EQ(bert.sources.size(), 6u);
}

// DistilBERT's TransformerBlock, read in huggingface/transformers@00b326f4caca2d1fbebe5c86e1693475fd4d0c9a
// src/transformers/models/distilbert/modeling_distilbert.py (MultiHeadSelfAttention, FFN, TransformerBlock), and
// DistilBertSdpaAttention from the later module (data/graph_code/hf_distilbert.toml [sources]).
const std::vector<std::string> kDistilBertEagerCalls = {
    // MultiHeadSelfAttention.forward
    "q_lin", "q view", "q transpose", "k_lin", "k view", "k transpose", "v_lin", "v view", "v transpose",
    "q / sqrt(dim_per_head)", "k.transpose(2, 3)", "torch.matmul", "mask == 0", "view", "expand_as",
    "torch.tensor(finfo.min)", "masked_fill", "softmax", "self.dropout", "torch.matmul", "transpose", "contiguous",
    "view", "out_lin",
    // TransformerBlock.forward and FFN.ff_chunk
    "sa_output + x", "sa_layer_norm", "lin1", "GELUActivation: nn.functional.gelu", "lin2", "dropout",
    "ffn_output + sa_output", "output_layer_norm"};
const std::vector<std::string> kDistilBertEagerKernels = {
    "q GEMM", "k GEMM", "v GEMM", "divide", "q copy", "k copy", "scores bmm", "mask == 0", "masked_fill clone",
    "masked_fill_", "softmax", "v copy", "context bmm", "contiguous copy", "out_lin GEMM", "residual add",
    "LayerNorm", "lin1 GEMM", "gelu", "lin2 GEMM", "residual add", "LayerNorm"};
const std::vector<std::string> kDistilBertEagerModules = {
    "TransformerBlock", "MultiHeadSelfAttention", "q_lin", "k_lin", "v_lin", "attention dropout", "out_lin",
    "sa_layer_norm", "FFN", "lin1", "GELUActivation", "lin2", "FFN dropout", "output_layer_norm"};
const std::vector<std::string> kDistilBertSdpaCalls = {
    "q_lin", "q view", "q transpose", "k_lin", "k view", "k transpose", "v_lin", "v view", "v transpose",
    "scaled_dot_product_attention", "transpose", "contiguous", "view", "out_lin", "sa_output + x", "sa_layer_norm",
    "lin1", "gelu", "lin2", "dropout", "ffn_output + sa_output", "output_layer_norm"};
const std::vector<std::string> kDistilBertSdpaKernels = {
    "q GEMM", "k GEMM", "v GEMM", "fused attention", "contiguous copy", "out_lin GEMM", "residual add",
    "LayerNorm", "lin1 GEMM", "gelu", "lin2 GEMM", "residual add", "LayerNorm"};

TEST(GraphModelCode, HfDistilBertBlockCountsFromModelingDistilBert) {
  const GraphModelCode& d = find_graph_model_code("hf_distilbert");
  EXPECT_EQ(d.eager.python_ops, static_cast<double>(kDistilBertEagerCalls.size()));
  EXPECT_EQ(d.eager.kernels, static_cast<double>(kDistilBertEagerKernels.size()));
  EXPECT_EQ(d.eager.module_calls, static_cast<double>(kDistilBertEagerModules.size()));
  EXPECT_EQ(d.sdpa.python_ops, static_cast<double>(kDistilBertSdpaCalls.size()));
  EXPECT_EQ(d.sdpa.kernels, static_cast<double>(kDistilBertSdpaKernels.size()));
  EXPECT_EQ(d.sdpa.module_calls, static_cast<double>(kDistilBertEagerModules.size()) - 1);  // no attention dropout
  EXPECT_EQ(d.sources.size(), 6u);
}

// AlbertLayer under AlbertLayerGroup with hidden_act gelu_new, read in
// huggingface/transformers@3c354ea20e347edb9413ada30911e9fdc242719d src/transformers/models/albert/modeling_albert.py
// (softmax as nn.functional.softmax, as in the releases with AlbertSdpaAttention) and activations.py's
// NewGELUActivation (the eight calls of kGpt2NewGelu below).
const std::vector<std::string> kAlbertEagerCalls = {
    // AlbertAttention.forward
    "query", "key", "value", "query view", "query permute", "key view", "key permute", "value view",
    "value permute", "key_layer.transpose", "torch.matmul", "/ sqrt(head size)", "+ attention_mask", "softmax",
    "attention_dropout", "torch.matmul", "transpose", "flatten", "dense", "output_dropout", "hidden_states +",
    "LayerNorm",
    // ff_chunk: ffn, NewGELUActivation (8), ffn_output; AlbertLayer.forward
    "ffn", "0.5 * x", "torch.pow", "0.044715 *", "x +", "sqrt(2/pi) *", "torch.tanh", "1.0 +", "*", "ffn_output",
    "ffn_output + attention_output", "full_layer_layer_norm"};
const std::vector<std::string> kAlbertEagerKernels = {
    "query GEMM", "key GEMM", "value GEMM", "Q copy", "K copy", "scores bmm", "divide", "mask add", "softmax",
    "V copy", "context bmm", "flatten copy", "dense GEMM", "residual add", "LayerNorm", "ffn GEMM",
    "gelu_new pow", "mul", "add", "mul", "tanh", "add", "mul", "mul", "ffn_output GEMM", "residual add",
    "LayerNorm"};
const std::vector<std::string> kAlbertEagerModules = {
    "AlbertLayerGroup", "AlbertLayer", "AlbertAttention", "query", "key", "value", "attention_dropout", "dense",
    "output_dropout", "LayerNorm", "ffn", "NewGELUActivation", "ffn_output", "full_layer_layer_norm"};

TEST(GraphModelCode, HfAlbertLayerCountsFromModelingAlbert) {
  const GraphModelCode& a = find_graph_model_code("hf_albert");
  EXPECT_EQ(a.eager.python_ops, static_cast<double>(kAlbertEagerCalls.size()));
  EXPECT_EQ(a.eager.kernels, static_cast<double>(kAlbertEagerKernels.size()));
  EXPECT_EQ(a.eager.module_calls, static_cast<double>(kAlbertEagerModules.size()));
  // AlbertSdpaAttention: key_layer.transpose, the two torch.matmul, the scaling, mask add, softmax and dropout (7
  // calls) become one scaled_dot_product_attention call; the kernels lose the three copies, two bmms, divide, mask
  // add and softmax (8) for one fused kernel; no attention_dropout module.
  EXPECT_EQ(a.sdpa.python_ops, static_cast<double>(kAlbertEagerCalls.size()) - 6);
  EXPECT_EQ(a.sdpa.kernels, static_cast<double>(kAlbertEagerKernels.size()) - 7);
  EXPECT_EQ(a.sdpa.module_calls, static_cast<double>(kAlbertEagerModules.size()) - 1);
}

// GPT2Block on the eager path, a full sequence without a padding mask (eval).
const std::vector<std::string> kGpt2Conv1d = {"view", "torch.addmm", "view"};
const std::vector<std::string> kGpt2NewGelu = {"0.5 * x", "torch.pow", "0.044715 *", "x +", "sqrt(2/pi) *",
                                               "torch.tanh", "1.0 +", "*"};
const std::vector<std::string> kGpt2Attn = {
    "split", "query view", "query permute", "key view", "key permute", "value view", "value permute",
    "key.transpose", "torch.matmul", "torch.full", "divide", "bias slice dim 2", "bias slice dim 3", "torch.full",
    "to(dtype)", "torch.where", "softmax", "type(value.dtype)", "attn_dropout", "torch.matmul",
    "permute", "contiguous", "view", "resid_dropout"};
const std::vector<std::string> kGpt2SdpaAttn = {
    "split", "query view", "query permute", "key view", "key permute", "value view", "value permute",
    "scaled_dot_product_attention", "transpose", "contiguous", "view", "resid_dropout"};
// Around the attention: ln_1, the residual add, ln_2, the MLP's dropout, the residual add (besides its Conv1Ds
// and activation).
const double kGpt2BlockRest = 5;

TEST(GraphModelCode, HfGpt2BlockCountsFromModelingGpt2) {
  const GraphModelCode& gpt2 = find_graph_model_code("hf_gpt2");
  const double conv1d = static_cast<double>(kGpt2Conv1d.size());
  const double gelu = static_cast<double>(kGpt2NewGelu.size());
  // c_attn, c_proj, c_fc, c_proj: four Conv1Ds.
  EXPECT_EQ(gpt2.eager.python_ops, static_cast<double>(kGpt2Attn.size()) + 4 * conv1d + gelu + kGpt2BlockRest);
  EXPECT_EQ(gpt2.sdpa.python_ops, static_cast<double>(kGpt2SdpaAttn.size()) + 4 * conv1d + gelu + kGpt2BlockRest);
  // GPT2Block, ln_1, attn, c_attn, attn_dropout, c_proj, resid_dropout, ln_2, mlp, c_fc, act, c_proj, dropout.
  EXPECT_EQ(gpt2.eager.module_calls, 13);
  EXPECT_EQ(gpt2.sdpa.module_calls, 12);  // no attn_dropout call: its p goes to SDPA
  // Kernels: four addmm GEMMs, gelu_new's eight, two LayerNorms, two residual adds, and the attention's own:
  // eager: query and key copies, scores bmm, two fills, divide, where, softmax, value copy, context bmm, the
  // merge's contiguous copy (11); SDPA: the fused kernel and the contiguous copy (2).
  EXPECT_EQ(gpt2.eager.kernels, 4 + gelu + 2 + 2 + 11);
  EXPECT_EQ(gpt2.sdpa.kernels, 4 + gelu + 2 + 2 + 2);
  EXPECT_EQ(gpt2_lm_graph("g", Gpt2Dims{}, 64, 1).model_code, "hf_gpt2");
}

TEST(GraphModelCode, UnknownIdSuggestsTheNearest) {
  try {
    find_graph_model_code("hf_bret");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("hf_bert"), std::string::npos) << e.what();
  }
}

// The forward host time of one encoder layer's entries at batch 1, inference, FP16 on an A100, with the pytorch
// profile as `edit` leaves it (the reference host: no scaling).
template <typename Edit>
double layer_forward_host_us(bool sdpa, Edit edit) {
  const DeviceSpec device = find_gpu("a100-sxm4-40gb");
  const ArchitectureProfile arch = architecture_for(device);
  const KernelCostModel kernels(device, arch);
  RuntimeProfile runtime = find_runtime("pytorch");
  edit(runtime);
  const PrecisionPlan plan = resolve_precision("fp16", device, arch, runtime, "", false);
  const CostContext ctx{kernels, runtime, plan, false};
  Graph g = bert_squad_graph("bert_base_squad", BertDims{}, 128, 1);
  for (auto& op : g.ops)
    if (op.kind == OpKind::kAttention) op.attn.fused = sdpa;
  StepOptions options;
  options.training = false;
  const StepCost s = schedule_step(g, ctx, options);
  double host = 0;
  for (const auto& e : s.entries)
    if (e.phase == Phase::kForward && e.name.rfind("encoder.layer.3.", 0) == 0) host += e.host_us;
  return host;
}

TEST(GraphModelCode, ALayerIsChargedItsCountedCallsInPlaceOfItsGraphOps) {
  EXPECT_EQ(bert_squad_graph("b", BertDims{}, 128, 1).model_code, "hf_bert");
  const GraphModelCode& bert = find_graph_model_code("hf_bert");
  for (const bool sdpa : {false, true}) {
    RuntimeProfile seen;
    const auto on = [&](RuntimeProfile& r) { r.count_model_code_calls = true; seen = r; };
    const auto off = [](RuntimeProfile& r) { r.count_model_code_calls = false; };
    // Launches and library setup are charged alike either way; the per-op charge of the layer's running graph ops
    // (12 in inference: the eval dropouts run nothing) gives way to the counted calls and module calls.
    const double with = layer_forward_host_us(sdpa, on);
    const double without = layer_forward_host_us(sdpa, off);
    const LayerCodeCounts& c = sdpa ? bert.sdpa : bert.eager;
    const double counted = c.python_ops * seen.host_inline_op_us + c.module_calls * seen.host_module_call_us;
    EXPECT_NEAR(with - without, counted - 12 * seen.host_op_us, 1e-6) << (sdpa ? "sdpa" : "eager");
  }
}

}  // namespace
}  // namespace perfcast
