#include "report/messages.h"

#include <fmt/args.h>
#include <fmt/format.h>

#include <map>

namespace perfcast {

namespace {

struct Text {
  std::string_view en;
  std::string_view zh;
};

const std::map<std::string_view, Text>& table() {
  static const std::map<std::string_view, Text> t{
      {"title", {"perfcast advice: {} on {} ({}), {} {} {}, batch {}", "perfcast 建议：{} 在 {}（{}）上，{} {} {}，批大小 {}"}},
      {"title_data", {", data {}", "，数据 {}"}},
      {"html_title", {"perfcast advice", "perfcast 建议"}},
      {"verdict", {"Verdict", "结论"}},
      {"verdict.bound_in", {"bound by {} in {}: {} of the step", "瓶颈是 {}，主要在 {}：占单步时间的 {}"}},
      {"verdict.input",
       {"bound by the host input pipeline: {} cores prepare {:.0f} samples/s, the GPU could take {:.0f}/s",
        "瓶颈是主机输入流水线：{} 个 CPU 核每秒只能准备 {:.0f} 个样本，而 GPU 每秒可处理 {:.0f} 个"}},
      {"verdict.host",
       {"launch-bound: the framework needs {:.2f} ms to dispatch {:.0f} kernels, the GPU needs {:.2f} ms",
        "受启动开销限制：框架派发 {1:.0f} 个内核需要 {0:.2f} ms，而 GPU 只需 {2:.2f} ms"}},
      {"verdict.h2d",
       {"bound by the host-to-device copy of each batch: {:.2f} ms ({}) in a {:.2f} ms step",
        "瓶颈是每批数据从主机到设备的拷贝：{:.2f} ms（{}），单步共 {:.2f} ms"}},
      {"h2d.blocking", {"blocking, from pageable memory", "阻塞式，来自可分页内存"}},
      {"h2d.prefetched", {"prefetched, longer than the GPU step", "已预取，但比 GPU 计算更长"}},
      {"verdict.fits_no", {"it does not fit: {} needed, {} available", "显存不足：需要 {}，只有 {}"}},
      {"summary", {"Prediction", "预测"}},
      {"throughput", {"throughput", "吞吐量"}},
      {"step", {"step time", "单步时间"}},
      {"memory", {"memory", "显存"}},
      {"fits", {"fits", "可容纳"}},
      {"no_fit", {"DOES NOT FIT", "放不下"}},
      {"breakdown", {"Where the step goes (by op class and bound)", "时间分布（按算子类别与瓶颈）"}},
      {"strategies", {"Strategies, ranked by predicted gain", "优化策略（按预测收益排序）"}},
      {"combined", {"Combined", "组合"}},
      {"not_applicable", {"Not applicable here", "此处不适用"}},
      {"baseline_cost",
       {"  baseline rented: ${:.2f} per million samples at the cheapest on-demand price per GPU-hour in the price catalog",
        "  租用成本：按价格目录中最便宜的按需单卡小时价，每百万样本 ${:.2f}"}},
      {"capacity",
       {"memory capacity caps the batch at {}: a batch twice as large would run faster if it fit",
        "显存容量把批大小限制在 {}：若能放下两倍批大小会更快"}},
      {"pressure", {"memory in use: {:.0f}% of the card", "显存占用：{:.0f}%"}},
      {"legend",
       {"Legend: share = part of the step time; roofline = achieved FLOP/s over the pipe's peak (compute-bound) or "
        "achieved bytes/s over DRAM peak (bandwidth-bound); speedup = predicted throughput over the baseline; "
        "memory = change in predicted device memory; energy = per sample against the baseline; cost = US dollars per "
        "million samples at the cheapest on-demand price per GPU-hour of an instance with that GPU and at least that "
        "many of them in data/cloud/prices.toml ('-' without a price). "
        "Each strategy is the same model re-predicted with one change.",
        "说明：占比 = 占单步时间的比例；屋顶线 = 实际 FLOP/s 与该计算单元峰值之比（计算受限）或实际带宽与显存峰值带宽之比"
        "（带宽受限）；加速比 = 预测吞吐量 / 基线；显存 = 预测显存的变化；能耗 = 每样本相对基线之比；成本 = 每百万样本的美元数"
        "（按 data/cloud/prices.toml 中含该 GPU 且数量足够的实例最便宜的按需单卡小时价；无价格时为 '-'）。每个策略都是同一模型只改一处后重新预测的结果。"}},
      {"bound.tensor_compute", {"tensor-core compute", "张量核心计算"}},
      {"bound.cuda_compute", {"CUDA-core compute", "CUDA 核心计算"}},
      {"bound.dram_bandwidth", {"DRAM bandwidth", "显存带宽"}},
      {"bound.latency", {"kernel launch latency", "内核启动延迟"}},
      {"bound.host_overhead", {"host dispatch", "主机派发开销"}},
      {"bound.input_pipeline", {"the input pipeline", "输入流水线"}},
      {"bound.host_to_device", {"host-to-device copies", "主机到设备拷贝"}},
      {"bound.communication", {"communication", "通信"}},
      {"and", {" and ", "和"}},

      // Why a strategy does not apply: "reason." + the code the library gives (core/error.h ReasonCode), facts by
      // name. The English sentence is the library's own text, word for word (tests/advice_zh_test.cpp checks it).
      {"reason.precision.inference_only",
       {"precision '{precision}' is for inference only; training needs fp32, tf32, amp, amp-bf16, fp16 or bf16",
        "精度 '{precision}' 只用于推理；训练需要 fp32、tf32、amp、amp-bf16、fp16 或 bf16"}},
      {"reason.precision.needs_tensor_cores",
       {"precision '{precision}' is not supported on {gpu} (sm_{sm}): it needs {unit} tensor cores (sm_{min_sm} or newer)",
        "{gpu}（sm_{sm}）不支持精度 '{precision}'：需要 {unit} 张量核心（sm_{min_sm} 或更新的架构）"}},
      {"reason.precision.needs_int8",
       {"precision '{precision}' is not supported on {gpu} (sm_{sm}): it needs INT8 dp4a (sm_61 or newer) or INT8 tensor cores",
        "{gpu}（sm_{sm}）不支持精度 '{precision}'：需要 INT8 dp4a（sm_61 或更新的架构）或 INT8 张量核心"}},
      {"reason.precision.needs_hardware",
       {"precision '{precision}' is not supported on {gpu} (sm_{sm}): it needs hardware support",
        "{gpu}（sm_{sm}）不支持精度 '{precision}'：缺少所需的硬件支持"}},
      {"reason.precision.unsupported_by_runtime",
       {"precision '{precision}' is not supported on {gpu} (sm_{sm}) by {runtime}",
        "{runtime} 在 {gpu}（sm_{sm}）上不支持精度 '{precision}'"}},
      {"reason.precision.runtime_version",
       {"precision '{precision}' is not available in {runtime} {version} (TF32 arrived in later versions of the framework)",
        "{runtime} {version} 不提供精度 '{precision}'（TF32 在该框架更新的版本中才出现）"}},
      // How a precision runs here (the note under the verdict): "reason.note.*", same facts as the English note.
      {"reason.note.tf32_default_all",
       {"{runtime} runs fp32 convolutions and matmuls as TF32 on tensor cores by default",
        "{runtime} 默认把 fp32 卷积和矩阵乘法放到张量核心上以 TF32 运行"}},
      {"reason.note.tf32_default_conv",
       {"{runtime} runs fp32 convolutions as TF32 on tensor cores by default",
        "{runtime} 默认把 fp32 卷积放到张量核心上以 TF32 运行"}},
      {"reason.note.tf32_default_matmul",
       {"{runtime} runs fp32 matmuls as TF32 on tensor cores by default",
        "{runtime} 默认把 fp32 矩阵乘法放到张量核心上以 TF32 运行"}},
      {"reason.note.no_tensor_cores",
       {"no tensor cores on sm_{sm}: mixed precision stores FP16 and computes in {pipe}; it saves memory traffic and capacity, not math",
        "sm_{sm} 没有张量核心：混合精度以 FP16 存储、以 {pipe} 计算；它节省显存流量和容量，不节省计算"}},
      {"reason.note.fp16_slow",
       {"native FP16 math on sm_{sm} runs at {factor}x below FP32", "sm_{sm} 上的原生 FP16 运算比 FP32 慢 {factor} 倍"}},
      {"reason.note.fp16_pseudo_half",
       {"FP16 math on sm_{sm} runs {factor}x below FP32, so cuDNN/cuBLAS compute FP16 tensors in {pipe}: fp16 saves memory traffic and capacity, not math",
        "sm_{sm} 上的 FP16 运算比 FP32 慢 {factor} 倍，因此 cuDNN/cuBLAS 以 {pipe} 计算 FP16 张量：fp16 节省显存流量和容量，不节省计算"}},
      {"reason.weight_type.unknown",
       {"unknown weight type '{name}' (valid: {valid})", "未知的权重类型 '{name}'（可用：{valid}）"}},
      {"reason.weight_type.unknown_near",
       {"unknown weight type '{name}'; did you mean '{near}'? (valid: {valid})",
        "未知的权重类型 '{name}'，是否指 '{near}'？（可用：{valid}）"}},
      {"reason.runtime.needs_sm",
       {"{runtime} needs compute capability {min_cc} or newer; {gpu} is sm_{sm}",
        "{runtime} 需要计算能力 {min_cc} 或更高；{gpu} 是 sm_{sm}"}},
      {"reason.runtime.gguf_only",
       {"{runtime} runs GGUF weight types (f16 q8_0 q4_0 ... q6_k); '{precision}' is for the serving engines (vllm, "
        "tensorrt-llm, pytorch)",
        "{runtime} 只运行 GGUF 权重类型（f16 q8_0 q4_0 ... q6_k）；'{precision}' 适用于推理服务引擎（vllm、tensorrt-llm、pytorch）"}},
      {"reason.runtime.no_gguf",
       {"GGUF type '{precision}' runs on llama.cpp (--runtime llama.cpp); {runtime} takes fp16, bf16, fp32, int8, int4 or fp8",
        "GGUF 类型 '{precision}' 需用 llama.cpp 运行（--runtime llama.cpp）；{runtime} 支持 fp16、bf16、fp32、int8、int4 或 fp8"}},
      {"reason.serving.single_gpu",
       {"--mode {mode} predicts one GPU; tensor/pipeline parallel serving is not modelled",
        "--mode {mode} 只预测单个 GPU；未对张量并行/流水线并行推理服务建模"}},
      {"reason.memory.does_not_fit",
       {"does not fit: needs {needs_gib} GiB of {capacity_gib} GiB", "显存放不下：需要 {needs_gib} GiB，只有 {capacity_gib} GiB"}},
      {"reason.memory.no_batch_fits",
       {"model '{model}' does not fit on {gpu} even at batch 1", "模型 '{model}' 即使批大小为 1 也放不进 {gpu}"}},
      {"reason.memory.lora_no_batch_fits",
       {"model '{model}' does not fit on {gpu} for LoRA even at batch 1",
        "LoRA 微调时模型 '{model}' 即使批大小为 1 也放不进 {gpu}"}},
      {"reason.memory.positions_no_batch_fits",
       {"model '{model}' with {positions} positions does not fit on {gpu} even at batch 1",
        "模型 '{model}' 在 {positions} 个位置下即使批大小为 1 也放不进 {gpu}"}},
      {"reason.lora.data_parallel",
       {"data-parallel LoRA fine-tuning is not modelled: predict one GPU (--gpus 1)",
        "未对数据并行的 LoRA 微调建模：请预测单个 GPU（--gpus 1）"}},
      {"reason.data_parallel.mode",
       {"data parallelism applies to --mode train and infer, not {mode}", "数据并行只适用于 --mode train 和 infer，不适用于 {mode}"}},
      {"reason.interconnect.pcie_gen",
       {"{gpu} has a PCIe {gen}.0 host interface; --interconnect {interconnect} would run at PCIe {gen}.0 speed (use "
        "--interconnect {suggested})",
        "{gpu} 的主机接口是 PCIe {gen}.0；--interconnect {interconnect} 只能以 PCIe {gen}.0 的速度运行（请用 --interconnect "
        "{suggested}）"}},
      {"reason.interconnect.no_nvlink",
       {"{gpu} has no NVLink; --interconnect {interconnect} is not possible (use --interconnect {suggested})",
        "{gpu} 没有 NVLink，无法使用 --interconnect {interconnect}（请用 --interconnect {suggested}）"}},
      {"reason.interconnect.needs_sxm",
       {"{gpu} is an add-in card; --interconnect {interconnect} needs SXM modules on an NVLink baseboard (use "
        "nvlink-bridge or {suggested})",
        "{gpu} 是插卡式 GPU；--interconnect {interconnect} 需要装在 NVLink 基板上的 SXM 模块（请用 nvlink-bridge 或 {suggested}）"}},
      {"reason.interconnect.bridge_on_sxm",
       {"{gpu} is an SXM module; NVLink bridges are for add-in cards (use --interconnect {suggested})",
        "{gpu} 是 SXM 模块；NVLink 桥接器只用于插卡式 GPU（请用 --interconnect {suggested}）"}},
      {"reason.interconnect.no_nvswitch",
       {"{gpu} predates NVSwitch (SXM2 boards wire NVLink as a cube mesh); use --interconnect {suggested}",
        "{gpu} 早于 NVSwitch（SXM2 基板以立方体网格连接 NVLink）；请用 --interconnect {suggested}"}},
      {"reason.checkpointing.training_only",
       {"activation checkpointing only applies to training", "激活检查点（反向传播时重算）只适用于训练"}},
      {"reason.batch.already_largest", {"the batch is already the largest that fits", "当前批大小已是显存能容纳的最大值"}},
      {"reason.fusion.already_fused",
       {"runtime '{runtime}' already fuses (or has no compiler profile)", "运行时 '{runtime}' 已经做算子融合（或没有对应的编译器配置）"}},
      {"reason.layout.runtime_nhwc",
       {"runtime '{runtime}' already feeds tensor cores NHWC", "运行时 '{runtime}' 已经以 NHWC 布局向张量核心供数"}},
      {"reason.layout.no_convolutions",
       {"the model has no convolutions: layout does not matter", "模型没有卷积层：内存布局无关紧要"}},
      {"reason.layout.no_tensor_cores",
       {"no tensor-core convolutions on {gpu}: nothing to transpose", "{gpu} 上没有张量核心卷积：无需布局转置"}},
      {"reason.input.synthetic", {"synthetic data: no input pipeline", "合成数据：没有输入流水线"}},
      {"reason.input.not_jpeg",
       {"GPU decoding (DALI/nvJPEG) applies to JPEG datasets", "GPU 解码（DALI/nvJPEG）只适用于 JPEG 数据集"}},
  };
  return t;
}

}  // namespace

Lang parse_lang(std::string_view code) {
  if (code == "en") return Lang::kEn;
  if (code == "zh") return Lang::kZh;
  throw_unknown("language", code, {"en", "zh"});
}

std::string_view msg(std::string_view key, Lang lang) {
  const auto& t = table();
  auto it = t.find(key);
  if (it == t.end()) return key;
  return lang == Lang::kZh ? it->second.zh : it->second.en;
}

std::string reason_text(const ReasonCode& reason, Lang lang) {
  if (reason.id.empty()) return "";
  const std::string key = "reason." + reason.id;
  const auto& t = table();
  auto it = t.find(key);
  if (it == t.end()) return "";
  fmt::dynamic_format_arg_store<fmt::format_context> facts;
  for (const auto& [name, value] : reason.args) facts.push_back(fmt::arg(name.c_str(), value));
  try {
    return fmt::vformat(lang == Lang::kZh ? it->second.zh : it->second.en, facts);
  } catch (const fmt::format_error&) {
    return "";  // a fact the sentence names is missing: say nothing rather than half a sentence
  }
}

std::vector<std::string> reason_codes() {
  std::vector<std::string> codes;
  for (const auto& [key, text] : table())
    if (key.starts_with("reason.")) codes.emplace_back(key.substr(7));
  return codes;
}

}  // namespace perfcast
