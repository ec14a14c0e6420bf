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
      // Charts of the HTML pages (report/chart_page.cpp, web/charts.js).
      {"chart.no_library",
       {"Charts are not in this build (node_modules was missing when perfcast was built): tables only.",
        "此版本未包含图表（构建 perfcast 时缺少 node_modules）：仅显示表格。"}},
      {"chart.roofline", {"Roofline per pipe and precision", "屋顶线（按计算单元与精度）"}},
      {"chart.breakdown", {"Step time by op class and bound", "单步时间（按算子类别与瓶颈）"}},
      {"chart.host_gpu", {"Host dispatch against GPU time", "主机派发与 GPU 时间"}},
      {"chart.memory", {"Memory against capacity", "显存占用与容量"}},
      {"chart.latency", {"Request latency: median and 99th percentile", "请求延迟：中位数与第 99 百分位"}},
      {"chart.latency_note",
       {"time to first token, time per output token and end to end, over the simulated requests (log scale)",
        "首个 token 时间、每个输出 token 时间与端到端时间，取自模拟的请求（对数坐标）"}},
      {"chart.timeline", {"Timeline of one step", "单步时间线"}},
      {"chart.measured", {"Measured against predicted", "实测与预测"}},
      {"chart.pareto", {"Time against cost", "时间与成本"}},
      {"chart.scaling", {"Scaling efficiency over GPU count", "随 GPU 数量的扩展效率"}},
      {"chart.speedup", {"Speedup over the baseline (log scale)", "相对基线的加速比（对数坐标）"}},
      {"chart.classes", {"Measured against predicted, by op class", "按算子类别的实测与预测"}},
      {"chart.kernel_classes", {"Kernel time by class, per step", "每步内核时间（按类别）"}},
      {"chart.ops", {"Operators: measured against predicted", "算子：实测与预测"}},
      {"chart.ax.intensity", {"arithmetic intensity (FLOP/byte)", "算术强度（FLOP/字节）"}},
      {"chart.ax.tflops", {"achieved TFLOP/s", "实际 TFLOP/s"}},
      {"chart.ax.time_ms", {"time (ms)", "时间（ms）"}},
      {"chart.ax.gib", {"memory (GiB)", "显存（GiB）"}},
      {"chart.ax.hours", {"run time (hours)", "运行时间（小时）"}},
      {"chart.ax.usd", {"cost (USD, on demand)", "成本（美元，按需）"}},
      {"chart.ax.gpus", {"GPUs", "GPU 数量"}},
      {"chart.ax.efficiency", {"scaling efficiency", "扩展效率"}},
      {"chart.ax.speedup", {"speedup (x)", "加速比（倍）"}},
      {"chart.ax.measured", {"measured", "实测"}},
      {"chart.ax.predicted", {"predicted", "预测"}},
      {"chart.ax.throughput", {"samples/s", "样本/秒"}},
      // Language models in decode and generate: throughput in output tokens (compare's tokens_per_s).
      {"chart.ax.tokens", {"tokens/s", "词元/秒"}},
      {"chart.boards", {"W boards", "W 板卡"}},
      {"chart.package_tdp", {"W package TDP", "W 封装 TDP"}},
      {"chart.ax.share", {"share of the step (%)", "占单步时间（%）"}},
      {"chart.ax.kwh", {"energy of the run (kWh)", "运行能耗（kWh）"}},
      {"chart.energy", {"Energy of the run", "运行能耗"}},
      {"chart.energy_note",
       {"a GPU: its boards at their average power over the step; a CPU: its package at TDP for the whole run, the "
        "package only, not DRAM, fans or the rest of the server",
        "GPU：板卡按单步平均功率计；CPU：封装按 TDP 计整个运行期间，仅封装，不含内存、风扇及服务器其余部分"}},
      {"chart.capacity", {"capacity", "容量"}},
      {"chart.step", {"step", "单步"}},
      {"chart.dram", {"DRAM", "显存带宽"}},
      {"chart.front", {"Pareto front: nothing both faster and cheaper", "帕累托前沿：没有既更快又更便宜的选项"}},
      {"chart.size_note",
       {"one point per op: area = its time, colour = what bounds it; lines = the pipe's peak and DRAM bandwidth",
        "每个点是一个算子：面积 = 时间，颜色 = 瓶颈；直线 = 计算单元峰值与显存带宽"}},
      {"chart.band_note",
       {"the shaded band is within 2x of the measurement; the line is exact agreement",
        "阴影带为实测值的 2 倍以内；直线表示完全一致"}},
      {"verdict", {"Verdict", "结论"}},
      {"verdict.bound_in", {"bound by {} in {}: {} of the step", "瓶颈是 {}，主要在 {}：占单步时间的 {}"}},
      {"verdict.input",
       {"bound by the host input pipeline: {} cores prepare {:.0f} samples/s, the GPU could take {:.0f}/s",
        "瓶颈是主机输入流水线：{} 个 CPU 核每秒只能准备 {:.0f} 个样本，而 GPU 每秒可处理 {:.0f} 个"}},
      {"verdict.host",
       {"host-bound: the framework's CPU needs {:.2f} ms to issue {:.0f} kernels (Python, autograd and launches per "
        "op), the GPU needs {:.2f} ms and waits {:.2f} ms of the step; CUDA graphs, torch.compile or a larger batch cure it",
        "受主机限制：框架的 CPU 发出 {1:.0f} 个内核需要 {0:.2f} ms（每个算子的 Python、autograd 与启动），GPU 只需 {2:.2f} ms，"
        "单步中等待 {3:.2f} ms；CUDA graphs、torch.compile 或更大的批量可以解决"}},
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
      {"strategies", {"Strategies: the software ones combined first, then each alone, ranked by predicted gain",
                      "优化策略：首行为软件策略的组合，其余各项按预测收益排序"}},
      // No combination: fewer than two software strategies help together (advisor.cpp, "Combination").
      {"strategies_alone", {"Strategies: each alone, ranked by predicted gain (no two software ones gain more together)",
                            "优化策略：各项单独应用，按预测收益排序（没有两项软件策略合用收益更高）"}},
      {"combined", {"Combined", "组合"}},
      {"not_applicable", {"Not applicable here", "此处不适用"}},
      {"baseline_cost",
       {"  baseline rented: {} per million samples on the cheapest on-demand instance in the price catalog that holds "
        "its GPUs (whole instances)",
        "  基线租用成本：按价格目录中能容纳所用 GPU 的最便宜按需实例（整台计价），每百万样本 {}"}},
      {"capacity",
       {"memory capacity caps the batch at {}: a batch twice as large would run faster if it fit",
        "显存容量把批大小限制在 {}：若能放下两倍批大小会更快"}},
      {"pressure", {"memory in use: {:.0f}% of the card", "显存占用：{:.0f}%"}},
      {"anchored",
       {"From your measured {} {}: the top strategies' predicted speedups applied to it (80% interval), and the "
        "cost per million samples at that rate (the table's cost / (measured / predicted))",
        "以您实测的 {} {} 为基准：前几项策略的预测加速比乘以实测值（80% 区间），以及按该速率计的每百万样本成本"
        "（表中成本 /（实测 / 预测））"}},
      {"anchored_per_million", {" per 1M", " /百万"}},
      {"anchored_baseline", {"as measured", "实测"}},
      {"legend",
       {"Legend: share = part of the step time; roofline = achieved FLOP/s over the pipe's peak (compute-bound) or "
        "achieved bytes/s over DRAM peak (bandwidth-bound); speedup = predicted throughput over the baseline; "
        "memory = change in predicted device memory; energy = per sample against the baseline; cost = US dollars per "
        "million samples on whole instances: the cheapest on-demand instance type in data/cloud/prices.toml that holds "
        "the GPUs one node uses, one per node ('-' without a price). "
        "Each strategy is the same model re-predicted with one change.",
        "说明：占比 = 占单步时间的比例；屋顶线 = 实际 FLOP/s 与该计算单元峰值之比（计算受限）或实际带宽与显存峰值带宽之比"
        "（带宽受限）；加速比 = 预测吞吐量 / 基线；显存 = 预测显存的变化；能耗 = 每样本相对基线之比；成本 = 每百万样本的美元数"
        "（按 data/cloud/prices.toml 中能容纳单节点所用 GPU 的最便宜按需实例整台计价，每节点一台；无价格时为 '-'）。每个策略都是同一模型只改一处后重新预测的结果。"}},
      {"verdict_line", {"{}: {}.\n", "{}：{}。\n"}},
      {"precision_note", {"  ({})\n", "  （{}）\n"}},
      {"summary_line",
       {"{}: {} {} samples/s{}, {} {:.1f} ms, {} {} / {} ({})\n",
        "{}：{} {} 样本/秒{}，{} {:.1f} ms，{} {} / {}（{}）\n"}},
      {"summary_no_fit", {"{}: {}; {} {} / {}\n", "{}：{}；{} {} / {}\n"}},
      {"fits_separator", {"; ", "；"}},
      {"col.op_class", {"op_class", "算子类别"}},
      {"col.bound", {"bound", "瓶颈"}},
      {"col.time", {"time", "时间"}},
      {"col.share", {"share", "占比"}},
      {"col.roofline", {"roofline", "屋顶线"}},
      {"col.strategy", {"strategy", "策略"}},
      {"col.speedup", {"speedup", "加速比"}},
      {"col.memory", {"memory", "显存"}},
      {"col.energy", {"energy", "能耗"}},
      {"col.cost", {"cost", "成本"}},
      {"col.why", {"why", "原因"}},
      {"unit.x", {"x", "倍"}},
      {"unit.per_sample", {"/sample", "每样本"}},
      {"unit.per_million", {"/1M", "每百万"}},
      {"unit.usd_per_million", {"$ /1M samples", "$ / 百万样本"}},
      {"waiting", {"(waiting)", "（等待）"}},
      {"per_step", {"ms / step", "ms / 步"}},
      {"samples_per_s", {"samples/s", "样本/秒"}},
      {"bound.tensor_compute", {"tensor-core compute", "张量核心计算"}},
      {"bound.cuda_compute", {"CUDA-core compute", "CUDA 核心计算"}},
      {"bound.dram_bandwidth", {"DRAM bandwidth", "显存带宽"}},
      {"bound.latency", {"kernel launch latency", "内核启动延迟"}},
      {"bound.host_overhead", {"host dispatch", "主机派发开销"}},
      {"bound.input_pipeline", {"the input pipeline", "输入流水线"}},
      {"bound.host_to_device", {"host-to-device copies", "主机到设备拷贝"}},
      {"bound.communication", {"communication", "通信"}},
      {"bound.cpu_vector_compute", {"CPU vector (AVX) compute", "CPU 向量（AVX）计算"}},
      {"bound.cpu_matrix_compute", {"CPU matrix (AMX) compute", "CPU 矩阵（AMX）计算"}},
      {"and", {" and ", "和"}},

      // perfcast predict (report/prediction_report.cpp): the English is the report as it always read.
      {"p.title", {"perfcast prediction: {} on {} ({}), {} {} {}, batch {}", "perfcast 预测：{} 在 {}（{}）上，{} {} {}，批大小 {}"}},
      {"p.title_seq", {", seq {}", "，序列长度 {}"}},
      {"p.title_seq_mean", {" (mean {} real tokens, no padding)", "（平均 {} 个真实词元，无填充）"}},
      {"p.title_context", {", context {}", "，上下文 {}"}},
      {"p.note", {"  note: ", "  注："}},
      {"p.throughput", {"  throughput      {:>12} samples/s{}\n", "  吞吐量          {:>12} 样本/秒{}\n"}},
      {"p.tokens", {"   ({:.0f} tokens/s)", "（{:.0f} 词元/秒）"}},
      {"p.interval", {"  {:.0f}% interval  {} - {} {} (measured residuals of {} runs like this one: {})\n",
                      "  {:.0f}% 区间      {} - {} {}（同类 {} 次实测的残差：{}）\n"}},
      {"p.no_interval", {"  {:.0f}% interval  none: {}\n", "  {:.0f}% 区间      无：{}\n"}},
      {"p.thin_support", {"  thin support    few calibration rows resemble this setup (none has its {}): interval widened by {:.1f}%\n",
                          "  支持不足        校准数据少有类似配置（无一相同的 {}）：区间已放宽 {:.1f}%\n"}},
      {"p.thin_support_same", {"  thin support    few calibration rows resemble this setup (none has its {}); held-out rows this new needed no wider interval\n",
                               "  支持不足        校准数据少有类似配置（无一相同的 {}）；同样新的留出校准行无需更宽的区间\n"}},
      {"p.anchor", {"  you measured    {:>12} {} (measured / predicted {:+.0f}%; what-ifs scale from your number)\n",
                    "  您的实测        {:>12} {}（实测比预测 {:+.0f}%；假设分析以您的数值为基准）\n"}},
      {"p.anchor_no_fit", {"  you measured    {:>12} {} (the model predicts it does not fit: your number stands)\n",
                           "  您的实测        {:>12} {}（模型预测放不下：以您的数值为准）\n"}},
      {"p.interval_samples", {"samples/s", "样本/秒"}},
      {"p.interval_tokens", {"tokens/s", "词元/秒"}},
      {"p.throughput_no_fit", {"  throughput      {}\n", "  吞吐量          {}\n"}},
      {"p.does_not_fit", {"does not fit: needs {} of {}", "放不下：需要 {}，只有 {}"}},
      {"p.no_fit_rest",
       {"  no throughput, step time or bottleneck: the step would run out of memory (try --batch max, --checkpointing "
        "or a lower precision)",
        "  没有吞吐量、单步时间和瓶颈：该步会显存不足（可试 --batch max、--checkpointing 或更低的精度）"}},
      // Training at batch 1 already: --batch max would fail as well; with the weights alone past capacity,
      // checkpointing (which frees activations) cannot help either.
      {"p.no_fit_rest_train_no_batch",
       {"  no throughput, step time or bottleneck: the step would run out of memory at any batch (try --checkpointing, "
        "a lower precision or a GPU with more memory)",
        "  没有吞吐量、单步时间和瓶颈：该步在任何批量下都会显存不足（可试 --checkpointing、更低的精度或显存更大的 GPU）"}},
      {"p.no_fit_rest_state",
       {"  no throughput, step time or bottleneck: the weights, gradients and optimizer state alone need more memory "
        "than the GPU has, at any batch (try a GPU with more memory)",
        "  没有吞吐量、单步时间和瓶颈：仅权重、梯度和优化器状态就超过 GPU 显存，任何批量都放不下（可试显存更大的 GPU）"}},
      {"p.no_fit_rest_weights",
       {"  no throughput, step time or bottleneck: the weights alone need more memory than the GPU has (try a lower "
        "precision or a GPU with more memory)",
        "  没有吞吐量、单步时间和瓶颈：仅权重就超过 GPU 显存（可试更低的精度或显存更大的 GPU）"}},
      // Inference holds no gradients or saved activations: activation checkpointing does not apply.
      {"p.no_fit_rest_infer",
       {"  no throughput, step time or bottleneck: the pass would run out of memory (try --batch max, a lower "
        "precision or a GPU with more memory)",
        "  没有吞吐量、单步时间和瓶颈：该次前向会显存不足（可试 --batch max、更低的精度或显存更大的 GPU）"}},
      // No batch fits (batch 1 already, or the weights alone exceed memory): --batch max would fail as well.
      {"p.no_fit_rest_infer_no_batch",
       {"  no throughput, step time or bottleneck: the pass would run out of memory at any batch (try a lower "
        "precision or a GPU with more memory)",
        "  没有吞吐量、单步时间和瓶颈：该次前向在任何批量下都会显存不足（可试更低的精度或显存更大的 GPU）"}},
      {"p.no_fit_rest_parallel",
       {"  no throughput, step time or bottleneck: the step would run out of memory (try --zero 1-3 or --fsdp, "
        "--recompute selective or full, more GPUs for --tp/--pp, or plan --layouts for the layouts that fit)",
        "  没有吞吐量、单步时间和瓶颈：该步会显存不足（可试 --zero 1-3 或 --fsdp、--recompute selective 或 full、"
        "为 --tp/--pp 增加 GPU，或用 plan --layouts 找出放得下的布局）"}},
      {"p.step",
       {"  step time       {:>12.2f} ms   (GPU busy {:.2f} ms, host dispatch {:.2f} ms, {} launches)\n",
        "  单步时间        {:>12.2f} ms   （GPU 忙 {:.2f} ms，主机派发 {:.2f} ms，{} 次内核启动）\n"}},
      // A parallel layout counts the model's kernels only (schedule/llm_parallel.h ParallelStepCost::launches).
      {"p.model_launches", {"{} model-kernel", "{} 次模型内核"}},
      {"p.step_cpu",
       {"  step time       {:>12.2f} ms   (cores compute {:.2f} ms, framework dispatch {:.2f} ms, {} op calls)\n",
        "  单步时间        {:>12.2f} ms   （核心计算 {:.2f} ms，框架派发 {:.2f} ms，{} 次算子调用）\n"}},
      {"p.instances",
       {"  instances       {:>12}   processes of {} cores each, all at once: latency {:.2f} ms per batch of {} (one "
        "process's step), {:.1f} samples/s each; each has {:.1f} GB/s of DRAM and {} of L3 (its socket's / {})\n",
        "  实例            {:>12}   个进程，每个 {} 核，同时运行：每批 {:.2f} ms（批大小 {}，单进程单步），每个 {:.1f} "
        "样本/秒；每个分得 {:.1f} GB/s 内存带宽和 {} L3（所在插槽的 1/{}）\n"}},
      {"p.update", {"  update          {:>12}   {}\n", "  参数更新        {:>12}   {}\n"}},
      {"p.fused", {"fused", "融合"}},
      {"p.unfused", {"unfused", "未融合"}},
      {"p.fused_how", {"one kernel over weights, gradients, state", "一个内核处理权重、梯度和优化器状态"}},
      {"p.unfused_how", {"one pass over the tensors per operation", "每个运算各遍历一次张量"}},
      {"p.accum", {"; once per {} micro-batches", "；每 {} 个微批次一次"}},
      {"p.params", {"  parameters      {:>12.2f} M\n", "  参数量          {:>12.2f} M\n"}},
      {"p.work", {"  work per sample {:>12} GFLOP\n", "  每样本计算量    {:>12} GFLOP\n"}},
      {"p.parallel",
       {"  parallel training {} on {} GPUs: {:.0f} tokens/s per GPU, MFU {:.1f}% (= tokens/s/GPU x {:.3g} GFLOP/token / {:.0f} TFLOPS peak)\n"
        "    per step (ms): compute {:.1f} (recompute {:.1f}), pipeline bubble {:.1f} ({:.0f}%), TP comm {:.1f}, PP p2p {:.1f}, "
        "CP {:.1f}, EP all-to-all {:.1f}, DP exposed {:.1f} of {:.1f}, optimizer {:.1f}, host wait {:.1f}, FP8 scaling {:.1f}\n",
        "  并行训练 {}，{} 个 GPU：每 GPU {:.0f} tokens/s，MFU {:.1f}%（= 每 GPU tokens/s x {:.3g} GFLOP/token / 峰值 {:.0f} TFLOPS）\n"
        "    每步（毫秒）：计算 {:.1f}（重算 {:.1f}），流水线气泡 {:.1f}（{:.0f}%），TP 通信 {:.1f}，PP 点对点 {:.1f}，"
        "CP {:.1f}，EP all-to-all {:.1f}，DP 未重叠 {:.1f} / 共 {:.1f}，优化器 {:.1f}，等待主机 {:.1f}，FP8 缩放 {:.1f}\n"}},
      {"p.train_run",
       {"  to train {:.3g} tokens: {} on {} GPUs{}\n", "  训练 {:.3g} tokens：{} 个 GPU 上 {}{}\n"}},
      {"p.train_cost", {" = {} at {:.2f} USD/GPU-hour ({})", "，{}（每 GPU 小时 {:.2f} 美元，{}）"}},
      {"p.memory", {"  memory          {:>12}   of {} -> {}\n", "  显存            {:>12}   共 {} -> {}\n"}},
      {"p.fits", {"fits", "可容纳"}},
      {"p.no_fit", {"DOES NOT FIT", "放不下"}},
      {"p.memory_parts",
       {"    weights {}{}, gradients {}, optimizer {}, activations {}, workspace {}, runtime {}{}\n",
        "    权重 {}{}，梯度 {}，优化器状态 {}，激活 {}，工作区 {}，运行时 {}{}\n"}},
      {"p.masters", {" (+ fp32 masters {})", "（另有 fp32 主权重 {}）"}},
      {"p.memory_measures",
       {"    allocator peak {} (torch.cuda.max_memory_allocated), reserved {} (max_memory_reserved), device total {} "
        "(nvidia-smi used: reserved + runtime)\n",
        "    分配器峰值 {}（torch.cuda.max_memory_allocated），保留 {}（max_memory_reserved），设备总计 {}"
        "（nvidia-smi used：保留 + 运行时）\n"}},
      {"p.memory_measures_other",
       {"    allocator peak {}, reserved {} (the framework's caching allocator, costed as PyTorch's), device total {} "
        "(nvidia-smi used: reserved + runtime)\n",
        "    分配器峰值 {}，保留 {}（框架的缓存分配器，按 PyTorch 的计算），设备总计 {}"
        "（nvidia-smi used：保留 + 运行时）\n"}},
      {"p.buckets", {", communication buffers {}", "，通信缓冲区 {}"}},
      {"p.tables", {", embedding tables {}", "，嵌入表 {}"}},
      {"p.serving",
       {"  serving         {:>12.1f} ms to first token, {:.2f} ms per output token, KV cache {}\n",
        "  推理服务        {:>12.1f} ms 首词元延迟，每个输出词元 {:.2f} ms，KV 缓存 {}\n"}},
      {"p.input_copy",
       {"  input copy      {:>12.2f} ms per step from {} host memory{}\n", "  输入拷贝        {:>12.2f} ms 每步，来自{}主机内存{}\n"}},
      {"p.pinned", {"pinned", "锁页"}},
      {"p.pageable", {"pageable", "可分页"}},
      {"p.copy_blocking", {", blocking: added to every step", "，阻塞式：计入每一步"}},
      {"p.copy_bounds", {", prefetched, longer than the GPU step -> bounds the step", "，已预取，但比 GPU 计算更长 -> 限制单步时间"}},
      {"p.copy_beside", {", prefetched beside the step", "，已预取，与计算重叠"}},
      {"p.input",
       {"  input pipeline  {:>12.0f} samples/s on {} ({} cores, {:.2f} ms per sample per core, {}-bound){}\n",
        "  输入流水线      {:>12.0f} 样本/秒，主机 {}（{} 核，每核每样本 {:.2f} ms，受 {} 限制）{}\n"}},
      {"p.bounds_step", {" -> bounds the step", " -> 限制单步时间"}},
      {"p.scale",
       {"  scale-out       {:>12} GPUs ({} x {}), {}: {} over {}{}: efficiency {:.0f}%, all-reduce {:.2f} ms{}, exposed "
        "{:.2f} ms per step{}\n",
        "  多卡扩展        {:>12} 块 GPU（{} x {}），{}：{} 经 {}{}：扩展效率 {:.0f}%，all-reduce {:.2f} ms{}，每步未被掩盖 "
        "{:.2f} ms{}\n"}},
      {"p.scale_accum", {" once per {} micro-batches", "（每 {} 个微批次一次）"}},
      // The exposed time's parts, every one that is not zero (JSON scale_out.exposed_parts_ms): "(19.17 ms of it
      // waiting for the slowest GPU, 3.56 ms of compute slowed by the communication beside it, 2.73 ms copying
      // gradients into and out of buckets)".
      {"p.scale_parts", {" ({})", "（其中 {}）"}},
      {"p.scale_first_part", {"{:.2f} ms of it {}", "{:.2f} ms {}"}},
      {"p.scale_next_part", {", {:.2f} ms {}", "，{:.2f} ms {}"}},
      {"p.scale_collectives", {"in collectives the backward pass does not hide", "用于反向传播未能掩盖的集合通信"}},
      {"p.scale_stragglers", {"waiting for the slowest GPU", "等待最慢的 GPU"}},
      {"p.scale_overlap", {"of compute slowed by the communication beside it", "是计算被并行的通信拖慢"}},
      {"p.scale_replicas", {"of per-replica overhead", "是每个副本的额外开销"}},
      {"p.scale_buckets", {"copying gradients into and out of buckets", "把梯度拷入和拷出梯度桶"}},
      {"p.power",
       {"  power           {:>12.0f} W per GPU average (limit {:.0f} W, sustained clock {:.0f}% of boost), {} J per "
        "sample\n",
        "  功耗            {:>12.0f} W 每块 GPU 平均（上限 {:.0f} W，持续频率为加速频率的 {:.0f}%），每样本 {} J\n"}},
      {"p.site_energy",
       {"  server energy   {:>12} J per sample with the host ({:.0f} W beside the GPUs: {}, data/cloud/servers.toml); "
        "facility {} J (PUE {:.2f})\n",
        "  服务器能耗      {:>12} J 每样本，含主机（GPU 之外 {:.0f} W：{}，data/cloud/servers.toml）；数据中心 {} J（PUE {:.2f}）\n"}},
      // Which hardware the server energy counts (analysis/cloud.h powered_hardware; report/prediction_report.cpp).
      {"host.server", {"a {} server", "{} 服务器"}},
      {"host.generic",
       {"a generic server ({:.2f} W of host per W of GPU TDP, the median of data/cloud/servers.toml)",
        "通用服务器（每瓦 GPU TDP 对应 {:.2f} W 主机功率，data/cloud/servers.toml 的中位数）"}},
      {"host.gpu_share", {"the share of {} GPU{} of {}", "{0} 块 GPU 在{2}中所占的份额"}},
      {"host.whole", {"whole instances, {} GPU{} of {}{}", "整台实例，{0} 块 GPU，{2}{3}"}},
      {"host.idle", {", {} GPU{} idle at {:.0f} W each", "，其中 {0} 块 GPU 空闲，每块 {2:.0f} W"}},
      {"p.bottleneck", {"  bottleneck      {}\n", "  瓶颈            {}\n"}},
      {"p.bound_share", {"    {:<16} {:>6.1f}% of step\n", "    {:<16} 占单步 {:>6.1f}%\n"}},
      {"p.top_ops", {"top ops by time (forward + backward + update)", "耗时最多的算子（前向 + 反向 + 更新）"}},
      {"p.col.op", {"op", "算子"}},
      {"p.col.kind", {"kind", "类型"}},
      {"p.col.time", {"time", "时间"}},
      {"p.col.share", {"share", "占比"}},
      {"p.col.bound", {"bound", "瓶颈"}},
      {"p.col.achieved", {"achieved", "实际"}},
      // perfcast compare (cli/cmd_compare.cpp).
      {"cmp.no_run", {"no run size (give --dataset-size)", "没有运行规模（请给出 --dataset-size）"}},
      {"cmp.no_row", {"no row predicted, so no run to size", "没有可预测的行，无法计算运行规模"}},
      {"cmp.run", {"{:g} epoch{} = {:.0f} sample{}", "{0:g} 个 epoch = {2:.0f} 个样本"}},
      {"cmp.title",
       {"perfcast compare: {}, {} {} {}, batch {} per GPU; run: {}\n\n", "perfcast 对比：{}，{} {} {}，每块 GPU 批大小 {}；运行：{}\n\n"}},
      {"cmp.max", {"max", "最大"}},
      {"cmp.col.gpu", {"device", "设备"}},
      {"cmp.col.count", {"count", "数量"}},
      {"cmp.col.precision", {"precision", "精度"}},
      // Per GPU: with --batch max each row's own largest batch (the title says only "max").
      {"cmp.col.batch", {"batch", "批大小"}},
      {"cmp.col.samples", {"samples/s", "样本/秒"}},
      {"cmp.col.step", {"step ms", "单步 ms"}},
      // Decode and generate: output tokens per second and ms per output token (predict's words for these modes).
      {"cmp.col.tokens", {"tokens/s", "词元/秒"}},
      {"cmp.col.ms_per_token", {"ms/token", "ms/词元"}},
      {"cmp.tokens_unit", {"tokens/s", "词元/秒"}},
      // Several GPUs against one that places the embedding tables otherwise (one GPU: in host memory, over PCIe).
      {"cmp.scaling_na", {"n/a", "不适用"}},
      {"cmp.scaling_baseline",
       {"  {0} x {1}: scaling n/a: one GPU holds the embedding tables in host memory and reads them over PCIe, no "
        "like-for-like baseline; {1} GPUs run {2:.1f}x one GPU's {3:.1f} samples/s (efficiency {4:.0f}% against one "
        "GPU with this run's table placement)\n",
        "  {0} x {1}：扩展效率不适用：单个 GPU 把嵌入表放在主机内存中并经 PCIe 读取，不是同等条件的基准；{1} 个 GPU 的吞吐量是单个 "
        "GPU（{3:.1f} 样本/秒）的 {2:.1f} 倍（按本次运行的嵌入表放置，相对单个 GPU 的效率为 {4:.0f}%）\n"}},
      {"cmp.col.scaling", {"scaling", "扩展效率"}},
      {"cmp.col.time", {"time", "时间"}},
      {"cmp.col.cost", {"cost", "成本"}},
      {"cmp.col.energy", {"GPU energy", "GPU 能耗"}},
      {"cmp.col.server_energy", {"server", "服务器"}},
      {"cmp.col.facility_energy", {"facility", "数据中心"}},
      {"cmp.col.power", {"power", "功率"}},
      {"cmp.col.mem_free", {"mem free", "剩余显存"}},
      {"cmp.col.best", {"best precision", "最快精度"}},
      {"cmp.priced",
       {"  {}: priced on {} x {} ({} GPU{} each) at {} per hour on demand, {} GPU{} paid\n",
        "  {0}：按 {1} 台 {2}（每台 {3} 块 GPU）计价，按需每小时 {5}，共付费 {6} 块 GPU\n"}},
      {"cmp.host",
       {"  {}: server energy counts {} ({:.0f} W of host); facility: server x PUE {:.2f}\n",
        "  {}：服务器能耗计入{}（主机 {:.0f} W）；数据中心：服务器 x PUE {:.2f}\n"}},
      {"cmp.gpu_over_cpu",
       {"{} over {}: {:.1f}x ({:.1f} vs {:.2f} samples/s); the claim \"thousands of times faster than a traditional "
        "CPU\" (>= {:.0f}x) is {}\n",
        "{} 相对 {}：{:.1f} 倍（{:.1f} 对 {:.2f} 样本/秒）；“比传统 CPU 快数千倍”（>= {:.0f} 倍）的说法{}\n"}},
      {"cmp.cpu_energy",
       {"  {}: power and energy are the CPU package's TDP, {:.0f} W ({} socket{} x {:.0f} W, data/cpus), held for the whole "
        "run: the package only, not DRAM, fans or the rest of the server\n",
        "  {0}：功率与能耗按 CPU 封装的 TDP 计，{1:.0f} W（{2} 个插槽 x {4:.0f} W，data/cpus），按整个运行期间满载计：仅封装，"
        "不含内存、风扇及服务器其余部分\n"}},
      {"cmp.cpu_no_price",
       {"  {}: no cost: the price catalog ({}) has no instance with this CPU\n",
        "  {}：无成本：价格目录（{}）中没有使用此 CPU 的实例\n"}},
      {"cmp.claim_high", {"{:.0f}x too high for this workload", "对此负载高估了 {:.0f} 倍"}},
      {"cmp.claim_holds", {"met for this workload", "对此负载成立"}},
      {"cmp.legend",
       {"\nbatch: samples per GPU per step (with --batch max, the largest that fits on that row's device); scaling: throughput / (GPUs x one GPU); GPU energy: GPU boards, or a CPU's package at TDP; server: the GPUs + "
        "the host (the server's maximum system power less its GPUs' TDP, data/cloud/servers.toml, an upper bound) of the "
        "instances rented, powered whole as they are billed (GPUs the run leaves idle at their power at rest), or with no "
        "instance the GPUs' share of their server; facility: server x PUE (the provider's, data/cloud/providers.toml, or "
        "--pue); power: all GPUs, average over the step (a CPU: its package's TDP); mem "
        "free: per GPU (a CPU: its host memory left, all sockets); cost: whole instances of the cheapest type that holds one node's GPUs; "
        "best precision: the fastest, but FP32 unless it gains more than the measured precision what-ifs' 80% spread "
        "(data/intervals.toml; --precision best runs the fastest).\nprices: {} (list "
        "prices with dates and sources in the file)\n",
        "\n批大小：每块 GPU 每步的样本数（--batch max 时为该行设备能容纳的最大值）；扩展效率：吞吐量 /（GPU 数 x 单卡吞吐量）；GPU 能耗：GPU 板卡，或 CPU 封装按 TDP 计；服务器：所租实例整台的 GPU 加主机"
        "（服务器最大系统功率减去 GPU 的 TDP，data/cloud/servers.toml，为上限；本次运行未用的 GPU 按静息功率计），无实例时为这些 GPU "
        "在其服务器中所占份额；数据中心：服务器 x PUE（云厂商公布值，data/cloud/providers.toml，或 --pue）；功率：全部 GPU，按单步平均（CPU：封装 TDP）；剩余显存：每块 GPU（CPU：主机内存剩余量，全部插槽）；成本：按能容纳单节点"
        "全部 GPU 的最便宜实例类型整台计价；最佳精度：最快者，但除非其增益超过实测精度对比的 80% 区间（data/intervals.toml）否则为 FP32"
        "（--precision best 取最快者）。\n价格：{}（文件中有各价格的日期和来源）\n"}},
      // perfcast plan (cli/cmd_plan.cpp).
      {"plan.title",
       {"perfcast plan: {}, {} {} {}, batch {} per GPU; run: {:.0f} sample{} ({:g} epoch{}); deadline {}{}\n",
        "perfcast 规划：{0}，{1} {2} {3}，每块 GPU 批大小 {4}；运行：{5:.0f} 个样本（{7:g} 个 epoch）；期限 {9}{10}\n"}},
      {"plan.budget", {", budget {}", "，预算 {}"}},
      {"plan.prices",
       {"prices: {} ({} instance types, up to {} GPUs; {} options evaluated)\n\n",
        "价格：{}（{} 种实例类型，最多 {} 块 GPU；共评估 {} 个方案）\n\n"}},
      {"plan.none", {"no option meets the deadline of {}{}.\n", "没有方案能在 {} 内完成{}。\n"}},
      {"plan.within_budget", {" within the budget of {}", "且不超过预算 {}"}},
      {"plan.fastest", {"fastest option: ", "最快方案："}},
      {"plan.cheapest", {"cheapest option: ", "最便宜方案："}},
      {"plan.meeting",
       {"{} option{} meet{} the deadline{}, cheapest first ({}); per GPU type its cheapest and, when 10% faster, its "
        "fastest:\n",
        "{0} 个方案满足期限{3}，按成本从低到高（{4}）；每种 GPU 列出最便宜的方案，以及快 10% 以上时最快的方案：\n"}},
      {"plan.and_budget", {" and budget", "和预算"}},
      {"plan.spot", {"spot where known", "有竞价价格时按竞价"}},
      {"plan.on_demand", {"on demand", "按需"}},
      {"plan.col.rank", {"rank", "排名"}},
      {"plan.col.instance", {"instance", "实例"}},
      {"plan.col.count", {"count", "台数"}},
      {"plan.col.gpus", {"GPUs", "GPU 数"}},
      {"plan.col.precision", {"precision", "精度"}},
      {"plan.col.batch", {"batch", "批大小"}},
      {"plan.col.samples", {"samples/s", "样本/秒"}},
      {"plan.col.scaling", {"scaling", "扩展效率"}},
      {"plan.col.comm", {"comm", "通信"}},
      {"plan.col.time", {"time", "时间"}},
      {"plan.col.on_demand", {"on demand", "按需"}},
      {"plan.col.spot", {"spot", "竞价"}},
      {"plan.col.energy", {"GPU energy", "GPU 能耗"}},
      {"plan.col.server_energy", {"server", "服务器"}},
      {"plan.col.facility_energy", {"facility", "数据中心"}},
      {"plan.cheapest_mark", {"  <- cheapest", "  <- 最便宜"}},
      {"plan.more", {"  ... {} more options meet it (--top 0 lists all)\n", "  ……另有 {} 个方案满足期限（--top 0 全部列出）\n"}},
      {"plan.fastest_overall", {"\nfastest overall: ", "\n总体最快："}},
      {"plan.scaling_title",
       {"\nwhere adding instances stops paying (scaling efficiency below {:.0f}%):\n",
        "\n增加实例何时不再划算（扩展效率低于 {:.0f}%）：\n"}},
      {"plan.single",
       {"  {:<24} used alone (no network between instances in the catalog){}\n", "  {:<24} 只能单独使用（价格目录中该实例之间没有网络）{}\n"}},
      {"plan.single_scale", {"; its {} GPUs scale at {:.0f}%", "；其 {} 块 GPU 的扩展效率为 {:.0f}%"}},
      {"plan.always",
       {"  {0:<24} still pays at {1} instance{2} ({3} GPU{4}), the most evaluated\n",
        "  {0:<24} 在评估的最大规模 {1} 台（{3} 块 GPU）仍然划算\n"}},
      {"plan.below",
       {"  {0:<24} below the threshold already at 1 instance ({1} GPU{3}: {2:.0f}%)\n",
        "  {:<24} 单台时已低于阈值（{} 块 GPU：{:.0f}%）\n"}},
      {"plan.pays",
       {"  {0:<24} pays up to {1} instance{2} ({3} GPU{6}); at {4} scaling is {5:.1f}%\n",
        "  {0:<24} 最多 {1} 台划算（{3} 块 GPU）；{4} 台时扩展效率为 {5:.1f}%\n"}},
      {"plan.skipped", {"\nskipped:\n", "\n已跳过：\n"}},
      {"plan.legend",
       {"\nscaling: throughput / (GPUs x one GPU of the type); comm: share of the step waiting on gradient reduction; "
        "GPU energy: GPU boards;\nserver: GPUs + the host beside them (CPUs, DRAM, NICs, fans: the server's maximum system "
        "power less its GPUs' TDP, data/cloud/servers.toml, an upper bound), of each instance whole, as compare counts a "
        "rented instance; facility: server x PUE (the provider's, "
        "data/cloud/providers.toml, or --pue);\non demand / spot: price x instances x the hours billed (the provider's "
        "minimum and increment, data/cloud/providers.toml);\n"
        "spot: the catalog's spot or interruptible price for the same hours; interruptions are not "
        "modelled (a reclaimed instance loses the work since its last checkpoint and waits for capacity), so the time "
        "and the deadline hold for instances that run to the end.\n",
        "\n批大小：每块 GPU 每步的样本数（--batch max 时为该行设备能容纳的最大值）；扩展效率：吞吐量 /（GPU 数 x 同型号单卡吞吐量）；通信：单步中等待梯度归约的比例；GPU 能耗：GPU 板卡；\n"
        "服务器：GPU 加上主机（CPU、内存、网卡、风扇：服务器最大系统功率减去 GPU 的 TDP，data/cloud/servers.toml，为上限），按整台实例计，与 compare 相同；"
        "数据中心：服务器 x PUE（云厂商公布值，data/cloud/providers.toml，或 --pue）；\n"
        "按需 / 竞价：价格 x 实例数 x 计费时长（云厂商的最短计费时长与计费粒度，data/cloud/providers.toml）；\n"
        "竞价：价格目录中同样时长的竞价（可中断）价格；未对中断建模（被回收的实例会丢失上次检查点之后的工作并等待容量），"
        "因此时间与期限只对一直运行到结束的实例成立。\n"}},
      {"plan.option",
       {"{} x{} ({} GPU{}, {}): {} at {} samples/s, {} on demand{}, {:.1f} kWh GPUs, {:.1f} kWh server, {:.1f} kWh "
        "facility (PUE {:.2f})",
        "{0} x{1}（{2} 块 GPU，{4}）：{5}，{6} 样本/秒，按需 {7}{8}，GPU {9:.1f} kWh，服务器 {10:.1f} kWh，数据中心 {11:.1f} kWh"
        "（PUE {12:.2f}）"}},
      {"plan.spot_part", {", {} spot", "，竞价 {}"}},
      // predict --mode serve (report/serving_report.cpp).
      {"srv.title",
       {"perfcast serving: {} on {} x {} (tp {} x pp {}, {}), {} {}, {} KV cache\n",
        "perfcast 服务预测：{0} 在 {1} x {2} 上（tp {3} x pp {4}，{5}），{6} {7}，{8} KV 缓存\n"}},
      {"srv.workload",
       {"workload: {} requests, {} arrivals, input {} / output {} tokens ({}), seed {}, prefix-cache hit {:.0f}%\n",
        "负载：{} 个请求，{} 到达，输入 {} / 输出 {} 词元（{}），随机种子 {}，前缀缓存命中 {:.0f}%\n"}},
      {"srv.poisson", {"Poisson {:.3g}/s", "泊松 {:.3g}/秒"}},
      {"srv.all_at_once", {"all-at-once", "同时"}},
      {"srv.memory",
       {"memory per GPU: {} weights + {} context/workspace/step buffers, {} KV cache of {}\n",
        "每块 GPU 显存：权重 {} + 上下文/工作区/单步缓冲区 {}，KV 缓存 {}，共 {}\n"}},
      {"srv.kv",
       {"KV cache: {} blocks of {} tokens = {} tokens; holds {} requests of {} tokens at once; batch limit {}\n",
        "KV 缓存：{} 块，每块 {} 词元 = {} 词元；可同时容纳 {} 个 {} 词元的请求；批大小上限 {}\n"}},
      {"srv.decode_step",
       {"decode step at the mean batch: {:.2f} ms (all-reduces {:.2f} ms)\n",
        "平均批大小下的解码单步：{:.2f} ms（all-reduce {:.2f} ms）\n"}},
      {"srv.power", {"power: {}\n", "功耗：{}\n"}},
      {"srv.power_note",
       {"not predicted for --mode serve: its engine steps keep GPU time and launches, not each kernel's cost that the "
        "power rule prices; predict --mode decode --batch N gives the power and energy of decoding at one batch size",
        "--mode serve 不预测功耗：其引擎单步只保留 GPU 时间和内核启动，没有功耗规则所需的每个内核的开销；"
        "predict --mode decode --batch N 给出某一批大小下解码的功耗与能耗"}},
      {"srv.throughput",
       {"{}throughput   {:>10.1f} output tokens/s  {:>8.2f} requests/s  {:>10.1f} total tokens/s\n",
        "{}吞吐量       {:>10.1f} 输出词元/秒  {:>8.2f} 请求/秒  {:>10.1f} 总词元/秒\n"}},
      {"srv.ttft", {"{}TTFT         {:>10.1f} ms p50  {:>10.1f} ms p99\n", "{}首词元延迟   {:>10.1f} ms p50  {:>10.1f} ms p99\n"}},
      {"srv.tpot", {"{}TPOT         {:>10.2f} ms p50  {:>10.2f} ms p99\n", "{}每词元延迟   {:>10.2f} ms p50  {:>10.2f} ms p99\n"}},
      {"srv.e2e", {"{}end to end   {:>10.1f} ms p50  {:>10.1f} ms p99\n", "{}端到端       {:>10.1f} ms p50  {:>10.1f} ms p99\n"}},
      {"srv.batch",
       {"{}batch        {:>10.1f} running on average, {} at most, {} preemptions, {} steps{}\n",
        "{}批大小       {:>10.1f} 平均运行中，最多 {}，抢占 {} 次，{} 步{}\n"}},
      {"srv.truncated", {" (stopped at the step limit)", "（在步数上限处停止）"}},
      {"srv.none", {"none", "无"}},
      {"srv.targets", {"latency targets (p99): TTFT {}, TPOT {}\n", "延迟目标（p99）：首词元 {}，每词元 {}\n"}},
      {"srv.max_rate", {"  highest request rate meeting them: {:.3g} requests/s\n", "  满足目标的最高请求速率：{:.3g} 请求/秒\n"}},
      {"srv.best_batch", {"  best batch limit at the offered rate: {}\n", "  给定速率下最佳的批大小上限：{}\n"}},
      {"srv.no_batch", {"  no batch limit meets them at the offered rate", "  给定速率下没有批大小上限能满足目标"}},
      {"srv.give_rate", {" (all requests at once: give --request-rate)", "（请求同时到达：请给出 --request-rate）"}},
      {"srv.replicas",
       {"  the offered {:g} requests/s within them: {} copies of this layout ({} GPUs), each taking {:.3g} requests/s of "
        "the stream\n",
        "  在目标内承担给定的 {:g} 请求/秒：此布局 {} 份（{} 块 GPU），每份承担 {:.3g} 请求/秒\n"}},
      {"srv.legend",
       {"legend: TTFT = arrival to first output token; TPOT = (last token - first token) / (output tokens - 1), per "
        "request;\n        output tokens/s = all output tokens / (last token - first arrival); p50/p99 over the requests\n",
        "说明：首词元延迟（TTFT）= 从到达到第一个输出词元；每词元延迟（TPOT）=（最后词元 - 第一个词元）/（输出词元数 - 1），按请求计；\n"
        "      输出词元/秒 = 全部输出词元 /（最后词元 - 最早到达）；p50/p99 取自全部请求\n"}},
      {"srv.note", {"note: ", "注："}},
      // perfcast plan --layouts (cli/cmd_plan.cpp): the column texts keep the widths of kLayoutColumns.
      {"lay.title",
       {"Training layouts for {} on {} {} GPU{} ({} per node x {} node{}), {} precision, seq {}{}\n",
        "{0} 的训练布局：{2} 上 {1} 块 GPU（每节点 {4} 块 x {5} 个节点），{7} 精度，序列长度 {8}{9}\n"}},
      {"lay.tokens", {", {:.3g} tokens to train", "，训练 {:.3g} 个词元"}},
      {"lay.col.layout", {"layout", "布局"}},
      {"lay.col.gpus", {"GPUs", "GPU 数"}},
      {"lay.col.tokens", {"tok/s/GPU", "词元/秒/卡"}},
      {"lay.col.mfu", {"MFU", "MFU"}},
      {"lay.col.step", {"step", "单步"}},
      {"lay.col.mem", {"mem/GPU", "显存/卡"}},
      {"lay.col.power", {"power", "功率"}},
      {"lay.col.cost_per_tok", {"cost/tok", "词元成本"}},
      {"lay.col.time", {"time", "时间"}},
      {"lay.col.gpu_hours", {"GPU-hours", "GPU 小时"}},
      {"lay.col.cost", {"cost", "成本"}},
      {"lay.col.energy", {"energy", "GPU 能耗"}},
      {"lay.col.server", {"server", "服务器"}},
      {"lay.col.facility", {"facility", "数据中心"}},
      {"lay.col.priced", {"priced on (on demand)", "计价实例（按需）"}},
      {"lay.unit.per_m_tok", {"per M tok", "每百万词元"}},
      {"lay.unit.usd", {"USD", "美元"}},
      {"lay.priced", {"{} at {}/GPU-h", "{}，每 GPU 小时 {}"}},
      {"lay.none", {"  no layout fits in memory at this GPU count\n", "  此 GPU 数量下没有能放进显存的布局\n"}},
      {"lay.fit", {"{} layouts fit in memory; fastest first:\n", "{} 个布局能放进显存；从快到慢：\n"}},
      {"lay.by_count", {"\nFastest layout per node count (deadline {}{}):\n", "\n每种节点数下最快的布局（期限 {}{}）：\n"}},
      {"lay.what.deadline", {"the deadline", "期限"}},
      {"lay.what.deadline_budget", {"the deadline and the budget", "期限和预算"}},
      {"lay.by.cost", {"at the lowest on-demand cost", "按需成本最低"}},
      {"lay.by.time", {"soonest", "最早完成"}},
      {"lay.by.gpu_hours", {"with the fewest GPU-hours", "GPU 小时最少"}},
      {"lay.why.flag", {" (--rank-by)", "（--rank-by）"}},
      {"lay.why.cost",
       {" (ranked by cost: every count has a price; --rank-by gpu-hours or time to change)",
        "（按成本排序：每种数量都有价格；--rank-by gpu-hours 或 time 可改变）"}},
      {"lay.why.gpu_hours",
       {" (ranked by GPU-hours: not every count has a price in data/cloud/prices.toml)",
        "（按 GPU 小时排序：data/cloud/prices.toml 并非每种数量都有价格）"}},
      {"lay.meets", {"meets {} {}{}:\n", "满足{0}且{1}{2}：\n"}},
      {"lay.none_meets", {"no count up to {} GPUs meets {}\n", "不超过 {} 块 GPU 的数量都不满足{}\n"}},
      {"lay.legend",
       {"\nMFU = tokens/s/GPU x (6 x active parameters + 12 x layers x hidden x seq) / the precision's dense peak; "
        "time = train tokens / (tokens/s/GPU x GPUs); cost = time x GPUs x the cheapest on-demand price per GPU-hour "
        "in data/cloud/prices.toml (over several nodes, of an instance type with a network between instances), the "
        "instance named beside it, of the time billed (the provider's minimum and increment, data/cloud/providers.toml); "
        "cost/tok = that price per GPU-hour / (tokens/s/GPU x 3600 s) x 1e6, per million tokens, before the billing minimum; "
        "GPU-hours = time x GPUs; mem/GPU: GiB, what must fit in the card's memory; power: average board power per GPU "
        "over the step (the kernels at their draw, pipeline bubble and exposed communication at the clocks-up wait "
        "power); energy = power x GPUs x time, the GPU boards; server: + the GPUs' share of their server's host "
        "(data/cloud/servers.toml, an upper bound; the rule predict uses, as the cost bills the GPU-hours used); "
        "facility = server x PUE (the priced instance's provider's, data/cloud/providers.toml, or --pue)\n",
        "\nMFU = 每卡词元/秒 x（6 x 激活参数量 + 12 x 层数 x 隐藏维度 x 序列长度）/ 该精度的稠密峰值；"
        "时间 = 训练词元数 /（每卡词元/秒 x GPU 数）；成本 = 时间 x GPU 数 x data/cloud/prices.toml 中最便宜的每 GPU 小时按需价格"
        "（多节点时为实例之间有网络的实例类型），即旁边所列实例，按计费时长计（云厂商的最短计费时长与计费粒度，"
        "data/cloud/providers.toml）；词元成本 = 该每 GPU 小时价格 /（每卡词元/秒 x 3600 秒）x 1e6，即每百万词元，未计最短计费时长；"
        "GPU 小时 = 时间 x GPU 数；显存/卡：GiB，须放进显卡显存的量；功率：每块 GPU 在单步内的平均板卡功率"
        "（内核按其功耗，流水线气泡与未重叠的通信按保持高频的等待功率）；GPU 能耗 = 功率 x GPU 数 x 时间，即 GPU 板卡；"
        "服务器：+ 这些 GPU 在其服务器主机中所占份额（data/cloud/servers.toml，为上限；与 predict 规则相同，因为成本按所用 GPU 小时计）；"
        "数据中心 = 服务器 x PUE（计价实例所属云厂商的值，data/cloud/providers.toml，或 --pue）\n"}},
      {"p.legend",
       {"  legend: bound = what limits the kernel: tensor_compute/cuda_compute (achievable pipe rate x tile and\n"
        "  wave efficiency), dram_bandwidth (bytes / achievable bandwidth), latency (launch floor and gaps),\n"
        "  host_overhead (framework dispatch slower than the GPU). TFLOP/s achieved = FLOPs / time.",
        "  说明：瓶颈 = 限制该内核的因素：tensor_compute/cuda_compute（可达到的计算单元速率 x 分块与波次效率），\n"
        "  dram_bandwidth（字节数 / 可达到的带宽），latency（启动下限与间隔），host_overhead（框架派发比 GPU 慢）。\n"
        "  实际 TFLOP/s = FLOP 数 / 时间。"}},

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
      {"reason.note.int8_gemm_only",
       {"{runtime} runs INT8 only in the GEMMs torch._int_mm / torchao quantize; activations stay FP16",
        "{runtime} 只在 torch._int_mm / torchao 量化的 GEMM 中使用 INT8；激活值保持 FP16"}},
      {"reason.note.fp16_slow",
       {"native FP16 math on sm_{sm} runs at {factor}x below FP32", "sm_{sm} 上的原生 FP16 运算比 FP32 慢 {factor} 倍"}},
      {"reason.note.half_without_fast_fp16",
       {"{runtime} builds FP16 kernels only on GPUs with fast FP16; FP16 on sm_{sm} runs {factor}x below FP32, so the "
        "engine stays FP32: {precision} gains nothing here",
        "{runtime} 只在具备快速 FP16 的 GPU 上生成 FP16 内核；sm_{sm} 上的 FP16 比 FP32 慢 {factor} 倍，因此引擎保持 "
        "FP32：{precision} 在这里没有收益"}},
      {"reason.note.fp16_pseudo_half",
       {"FP16 math on sm_{sm} runs {factor}x below FP32, so cuDNN/cuBLAS compute FP16 tensors in {pipe}: fp16 saves memory traffic and capacity, not math",
        "sm_{sm} 上的 FP16 运算比 FP32 慢 {factor} 倍，因此 cuDNN/cuBLAS 以 {pipe} 计算 FP16 张量：fp16 节省显存流量和容量，不节省计算"}},
      {"reason.precision.no_int8_convolution",
       {"precision 'int8' is not supported by {runtime} for convolutions on {gpu}: it has no CUDA INT8 convolution "
        "kernels (engines that run whole INT8 networks: {engines}; ONNX Runtime and Torch-TensorRT through TensorRT)",
        "{runtime} 在 {gpu} 上不支持以精度 'int8' 运行卷积：它没有 CUDA INT8 卷积内核（运行完整 INT8 网络的引擎：{engines}；"
        "ONNX Runtime 与 Torch-TensorRT 经由 TensorRT）"}},
      {"reason.power.limit_range",
       {"--power-limit {limit} is outside the range {gpu} accepts: {min} to {max}",
        "--power-limit {limit} 超出 {gpu} 可设定的范围：{min} 至 {max}"}},
      {"reason.scale.gpus_per_node",
       {"--gpus {gpus} per node is more than a server with {interconnect} holds ({max} GPUs)",
        "每个节点 --gpus {gpus} 超过了一台 {interconnect} 服务器能容纳的数量（{max} 块 GPU）"}},
      {"reason.scale.nodes",
       {"--nodes {nodes} is more servers than the largest clusters built ({max})",
        "--nodes {nodes} 超过了已建成的最大集群的服务器数（{max}）"}},
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
       {"--mode {mode} predicts one GPU; tensor/pipeline parallel serving is --mode serve",
        "--mode {mode} 只预测单个 GPU；张量并行/流水线并行推理服务请用 --mode serve"}},
      {"reason.serving.no_engine_profile",
       {"runtime '{runtime}' has no continuous-batching profile ([serving] in data/runtimes/{runtime}.toml); --engine takes vllm, tensorrt-llm or sglang",
        "运行时 '{runtime}' 没有连续批处理配置（data/runtimes/{runtime}.toml 的 [serving]）；--engine 可选 vllm、tensorrt-llm 或 sglang"}},
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
      {"reason.fusion.llm_serves_on_tensorrt_llm",
       {"a TensorRT engine built from the model graph has no KV cache or in-flight batching: a language model is "
        "served by TensorRT-LLM, its own runtime (the tensorrt-llm strategy)",
        "由模型图构建的 TensorRT 引擎没有 KV 缓存和动态批处理：语言模型由独立的运行时 TensorRT-LLM 提供服务（见 tensorrt-llm 策略）"}},
      {"reason.fusion.llm_not_tensorrt",
       {"a TensorRT engine built from the model graph has no KV cache or in-flight batching: a language model is "
        "served by TensorRT-LLM, its own runtime",
        "由模型图构建的 TensorRT 引擎没有 KV 缓存和动态批处理：语言模型由独立的运行时 TensorRT-LLM 提供服务"}},
      {"reason.layout.runtime_picks_by_precision",
       {"runtime '{runtime}' picks the layout by precision: NHWC for FP16 graphs, NCHW for FP32 and TF32 ones (mixed "
        "precision changes it, channels-last does not)",
        "运行时 '{runtime}' 按精度选择布局：FP16 图用 NHWC，FP32 与 TF32 图用 NCHW（混合精度会改变布局，channels-last 不会）"}},
      {"reason.layout.runtime_nhwc",
       {"runtime '{runtime}' already feeds tensor cores NHWC", "运行时 '{runtime}' 已经以 NHWC 布局向张量核心供数"}},
      {"reason.layout.no_convolutions",
       {"the model has no convolutions: layout does not matter", "模型没有卷积层：内存布局无关紧要"}},
      {"reason.conv_algo.no_convolutions",
       {"no cuDNN convolutions: no algorithm to choose", "没有 cuDNN 卷积：无需选择算法"}},
      {"reason.conv_algo.already_autotuned",
       {"runtime '{runtime}' already times cuDNN's convolution algorithms", "运行时 '{runtime}' 已经为 cuDNN 卷积算法逐一计时"}},
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
