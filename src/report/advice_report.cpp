#include "report/advice_report.h"

#include <fmt/format.h>

#include "analysis/cloud.h"
#include "analysis/intervals.h"
#include "cost/precision.h"
#include "report/prediction_report.h"

namespace perfcast {

namespace {

std::string bound_text(Bound b, Lang lang) { return std::string(msg("bound." + std::string(bound_name(b)), lang)); }

std::string pct(double x) { return fmt::format("{:.0f}%", 100.0 * x); }

// Memory traffic by bytes per element, from `from` to `to`, in Chinese (advisor.cpp's traffic_change).
std::string traffic_change_zh(double from, double to) {
  if (to == from) return fmt::format("张量仍为每元素 {:g} 字节，显存流量不变", from);
  const double r = to / from;
  const std::string how = r == 0.5    ? "减半"
                          : r == 0.25 ? "降至四分之一"
                          : r < 1     ? "降至 " + pct(r)
                                      : fmt::format("增至 {:g} 倍", r);
  return fmt::format("张量每元素 {:g} 字节（原为 {:g}），显存流量{}", to, from, how);
}

// advise's precision line in Chinese: the same account (precision_account) as the English one.
std::string precision_reason_zh(const Prediction& base, const Prediction& p) {
  const PrecisionAccount a = precision_account(base, p);
  const std::string note = p.precision_note_code.id.empty() ? p.precision_note : reason_text(p.precision_note_code, Lang::kZh);
  switch (a.kind) {
    case PrecisionAccount::Kind::kNote:
      if (p.precision_note_code.id == kNoteHalfWithoutFastFp16) return note;
      return fmt::format("{}；基线中 {} 的时间受显存带宽限制，这部分会缩短", note, pct(a.dram_share));
    case PrecisionAccount::Kind::kDp4a:
      return "sm_61 的 dp4a 以 4 倍 FP32 速率执行 INT8 点积，激活也缩小 4 倍";
    case PrecisionAccount::Kind::kSmallGain: {
      std::string out = fmt::format("张量核心上的矩阵乘法和卷积 {:.2f} -> {:.2f} ms", a.math_ms_base, a.math_ms);
      if (a.cast_ms > 0) out += fmt::format("；类型转换和损失缩放增加 {:.2f} ms 内核时间", a.cast_ms);
      out += fmt::format("；每步内核启动 {:.0f} -> {:.0f} 次，主机派发 {:.2f} -> {:.2f} ms", a.launches_base,
                         a.launches, a.host_ms_base, a.host_ms);
      if (a.lookup_ms > 0)
        out += fmt::format("；嵌入查找（{:.2f} ms，占步长 {}）保留 FP32 表，不变", a.lookup_ms, pct(a.lookup_share));
      return out;
    }
    case PrecisionAccount::Kind::kTf32:
      return "卷积和矩阵乘法改用张量核心（TF32 运算）；张量仍以 FP32 存放，显存流量不变";
    case PrecisionAccount::Kind::kTensorCores:
      return fmt::format("卷积和矩阵乘法改用张量核心（{}）；{}", note.empty() ? "更高的运算速率" : note,
                         traffic_change_zh(a.base_elem_bytes, a.elem_bytes));
    case PrecisionAccount::Kind::kStorage:
      return "低精度存储：" + traffic_change_zh(a.base_elem_bytes, a.elem_bytes);
  }
  return {};
}

// The one-line reason in Chinese, composed from the strategy's own numbers, or for a strategy that does not apply
// from its reason code and facts; only a message without a code (free text from deep in the library) keeps the
// English after a Chinese lead-in.
std::string reason_zh(const StrategyResult& st, const Prediction& base) {
  if (!st.applicable) {
    const std::string zh = reason_text(st.reason_code, Lang::kZh);
    return "不适用：" + (zh.empty() ? st.reason : zh);
  }
  if (!st.prediction) return st.reason;
  const Prediction& p = *st.prediction;
  const std::string& id = st.id;
  if (st.category == "precision" && p.llm)
    return fmt::format("权重 {:.2f} -> {:.2f} GiB；每次前向都要读取全部权重（{}）", base.memory.weights / 1073741824.0,
                       p.memory.weights / 1073741824.0, p.precision_note);
  if (st.category == "precision") return precision_reason_zh(base, p);
  if (st.category == "runtime+precision") {
    // Against the runtime switch alone (analysis/advisor.cpp add_engine_precision), with what the pair costs.
    const std::string& prec = p.request.precision;
    const bool scaled = prec == "int8" || prec == "fp8";
    return fmt::format("{} 以 {} 运行：{:.0f} 样本/秒。代价：{}", p.runtime.name, prec, p.samples_per_s,
                       scaled ? "需用几百个代表性输入做校准以得到每个张量的缩放系数（或用量化感知训练的模型）、检查精度，"
                                "并为每种 GPU 和输入形状构建引擎"
                              : "为每种 GPU 和输入形状构建引擎");
  }
  if (id == "checkpointing")
    return fmt::format("反向传播时重算前向：激活显存 {:.1f} -> {:.1f} GiB", base.memory.activations / 1073741824.0,
                       p.memory.activations / 1073741824.0);
  if (id == "checkpointing+larger-batch" && p.request.batch <= base.request.batch)
    return fmt::format("批大小 {} 放不下；启用重算后可容纳批大小 {}", base.request.batch, p.request.batch);
  if (id == "checkpointing+larger-batch")
    return fmt::format("重算节省的显存可把批大小从 {} 提高到 {}", base.request.batch, p.request.batch);
  if (st.category == "batch" && p.request.grad_accum > 1)
    return fmt::format("可容纳批大小 {}；累积 {} 个微批次再更新一次（每次更新至少 {} 个样本）", p.request.batch,
                       p.request.grad_accum, base.request.batch);
  if (st.category == "batch")
    return fmt::format("可容纳的最大批大小为 {}（原为 {}）", p.request.batch, base.request.batch);
  if (st.category == "fusion")
    return fmt::format("把逐元素算子融合进上游内核：每步显存流量 {:.1f} -> {:.1f} GB，内核启动 {:.0f} -> {:.0f} 次，主机派发 {:.2f} -> {:.2f} ms",
                       base.step.bytes / 1e9, p.step.bytes / 1e9, base.step.launches, p.step.launches,
                       base.step.host_us / 1e3, p.step.host_us / 1e3);
  if (st.category == "layout") return "NHWC 布局：张量核心卷积省去布局转置";
  if (st.category == "conv-algo")
    return "cuDNN 为每个卷积的各算法计时并选用最快者（torch.backends.cudnn.benchmark = True，--conv-algo autotune）";
  if (st.category == "launch")
    return fmt::format("{:.0f} 次内核启动：主机派发 {:.2f} ms，GPU 计算 {:.2f} ms", base.step.launches, base.step.host_us / 1e3,
                       base.step.gpu_us / 1e3);
  if (id == "data-loader-workers" && p.input)
    return fmt::format("{} 个主机核心每秒可准备 {:.0f} 个样本", p.input->cores, p.input->host_samples_per_s);
  if (id == "fused-optimizer")
    return fmt::format(
        "优化器更新合并为一个融合内核（torch.optim fused=True、apex FusedAdam）：每步显存流量 {:.1f} -> {:.1f} GB",
        base.step.bytes / 1e9, p.step.bytes / 1e9);
  if (id == "gpu-decode") return "在 GPU 上解码和增强 JPEG（DALI/nvJPEG），释放主机 CPU";
  if (id == "pinned-memory") return "锁页内存使主机到设备的拷贝速率翻倍";
  if (id == "prefetch")
    return fmt::format("每批 {:.1f} ms 的阻塞拷贝改为从锁页内存预取（{:.1f} ms），与上一步计算重叠",
                       base.input ? base.input->h2d_ms : 0.0, p.input ? p.input->h2d_ms : 0.0);
  if (st.category == "hardware")
    return fmt::format("{}：{:.0f} GB 显存，带宽 {:.0f} GB/s，FP32 {:.1f} TFLOPS{}", p.device.name, p.device.memory_gb,
                       p.device.mem_bw_gbps, p.device.peak(Pipe::kFp32),
                       p.primary == Bound::kInputPipeline
                           ? fmt::format("；受主机输入流水线限制，每秒 {:.0f} 个样本", p.samples_per_s)
                           : std::string());
  if (st.category == "scale-out" && p.scale)
    return fmt::format("{} 块 {}，经 {}（{}）数据并行：扩展效率 {:.0f}%，每步等待梯度 {:.1f} ms{}{}", p.scale->gpus_total,
                       p.device.id, p.scale->interconnect, p.scale->strategy, 100.0 * p.scale->efficiency,
                       p.scale->exposed_comm_ms,
                       base.memory.embedding_tables <= 0 && p.memory.embedding_tables > 0
                           ? fmt::format("；嵌入表从主机内存移入 GPU（每块 {:.1f} GiB）",
                                         p.memory.embedding_tables / (1024.0 * 1024.0 * 1024.0))
                           : std::string(),
                       p.primary == Bound::kInputPipeline
                           ? fmt::format("；受主机输入流水线限制，每秒 {:.0f} 个样本", p.samples_per_s)
                           : std::string());
  if (st.category == "instances" && p.cpu_instances)
    return fmt::format("{} 个进程，每个 {} 核，批大小 {}（每插槽 {} 个）：总计 {:.1f} 样本/秒；每批延迟 {:.2f} -> {:.2f} ms。"
                       "每个进程线程更少，每个算子的 OpenMP 派生/汇合开销更小；各进程共享所在插槽的内存带宽（每个 {:.1f} GB/s）和 L3",
                       p.cpu_instances->instances, p.cpu_instances->cores_per_instance, p.request.batch,
                       p.cpu_instances->instances_per_socket, p.samples_per_s, base.step_us / 1e3,
                       p.cpu_instances->latency_ms, p.cpu_instances->dram_gbps_per_instance);
  if (st.category == "combined")
    return fmt::format("组合后：批大小 {}，{}，{}{}", p.request.batch, p.request.precision, p.request.runtime,
                       p.request.instances > 1 ? fmt::format("，{} 个进程", p.request.instances) : "");
  return st.reason;
}

}  // namespace

std::string advice_verdict(const Advice& a, Lang lang) {
  const Prediction& p = a.baseline;
  std::string v;
  if (p.primary == Bound::kInputPipeline && p.input) {
    v = fmt::format(fmt::runtime(msg("verdict.input", lang)), p.input->cores, p.input->host_samples_per_s,
                    static_cast<double>(p.request.batch) / (p.step.step_us * 1e-6));
  } else if (p.primary == Bound::kHostToDevice && p.input) {
    v = fmt::format(fmt::runtime(msg("verdict.h2d", lang)), p.input->h2d_ms,
                    msg(p.input->serial_copy ? "h2d.blocking" : "h2d.prefetched", lang), p.step_us / 1e3);
  } else if (p.primary == Bound::kHost) {
    v = fmt::format(fmt::runtime(msg("verdict.host", lang)), p.step.host_us / 1e3, p.step.launches, p.step.gpu_us / 1e3,
                    p.step.gpu_wait_us / 1e3);
  } else {
    // The op classes that carry most of the primary bound.
    std::vector<const OpClassShare*> top;
    double share = 0;
    for (const auto& c : a.breakdown)
      if (c.bound == p.primary && top.size() < 2) {
        top.push_back(&c);
        share += c.share;
      }
    std::string names;
    for (const auto* c : top) names += (names.empty() ? "" : std::string(msg("and", lang))) + c->op_class;
    v = fmt::format(fmt::runtime(msg("verdict.bound_in", lang)), bound_text(p.primary, lang), names, pct(share));
  }
  if (!p.memory.fits)
    v += std::string(msg("fits_separator", lang)) + fmt::format(fmt::runtime(msg("verdict.fits_no", lang)), format_bytes(p.memory.total),
                            format_bytes(p.memory.capacity));
  return v;
}

std::string advice_title(const Advice& a, Lang lang) {
  const Prediction& p = a.baseline;
  const auto& r = p.request;
  return fmt::format(fmt::runtime(msg("title", lang)), p.model_id, titled_device(p), p.device.name, runtime_label(r), mode_name(r.mode),
                     r.precision, r.batch) +
         (r.data != "synthetic" ? fmt::format(fmt::runtime(msg("title_data", lang)), r.data) : "");
}

std::string advice_text(const Advice& a, Lang lang) {
  const Prediction& p = a.baseline;
  std::string s = advice_title(a, lang) + "\n\n";
  const auto m = [lang](std::string_view key) { return fmt::runtime(msg(key, lang)); };
  s += fmt::format(m("verdict_line"), msg("verdict", lang), advice_verdict(a, lang));
  if (!p.precision_note.empty()) {
    const std::string translated = lang == Lang::kZh ? reason_text(p.precision_note_code, lang) : "";
    s += fmt::format(m("precision_note"), translated.empty() ? p.precision_note : translated);
  }
  s += "\n";
  // A baseline that does not fit has no throughput: it would run out of memory.
  if (p.memory.fits)
    s += fmt::format(m("summary_line"), msg("summary", lang), msg("throughput", lang), format_samples_per_s(p.samples_per_s),
                     p.tokens_per_s ? fmt::format(m("p.tokens"), *p.tokens_per_s) : "", msg("step", lang),
                     p.step_us / 1e3, msg("memory", lang), format_bytes(p.memory.total),
                     format_bytes(p.memory.capacity), msg("fits", lang));
  else
    s += fmt::format(m("summary_no_fit"), msg("summary", lang), does_not_fit_text(p, lang), msg("memory", lang),
                     format_bytes(p.memory.total), format_bytes(p.memory.capacity));
  if (p.anchor) {
    const std::string_view unit = msg(p.anchor->unit == "tokens_per_s" ? "p.interval_tokens" : "p.interval_samples", lang);
    s += p.anchor->predicted > 0
             ? fmt::format(m("p.anchor"), format_samples_per_s(p.anchor->measured), unit,
                            (p.anchor->factor() - 1) * 100)
             : fmt::format(m("p.anchor_no_fit"), format_samples_per_s(p.anchor->measured), unit);
  }
  s += "  " + fmt::format(m("pressure"), 100.0 * a.memory_pressure) + "\n";
  if (a.capacity_limited_batch)
    s += "  " + fmt::format(m("capacity"), *a.capacity_limited_batch) + "\n";

  // Bound cells: the id in English (as in JSON), the translated name in Chinese.
  const auto bound_cell = [lang](Bound b) {
    return lang == Lang::kZh ? bound_text(b, lang) : std::string(bound_name(b));
  };
  s += fmt::format("\n{}\n", msg("breakdown", lang));
  s += fmt::format("  {:<18} {:<22} {:>9} {:>7} {:>10} {:>10} {:>9}\n", msg("col.op_class", lang), msg("col.bound", lang),
                   msg("col.time", lang), msg("col.share", lang), "GFLOP", "GB", msg("col.roofline", lang));
  s += fmt::format("  {:<18} {:<22} {:>9} {:>7} {:>10} {:>10} {:>9}\n", "", "", "ms", "%", "", "", "%");
  int shown = 0;
  for (const auto& c : a.breakdown) {
    if (shown++ >= 12) break;
    s += fmt::format("  {:<18} {:<22} {:>9.2f} {:>7.1f} {:>10.1f} {:>10.2f} {:>9.0f}\n", c.op_class.substr(0, 18),
                     bound_cell(c.bound), c.time_ms, 100.0 * c.share, c.flops / 1e9, c.bytes / 1e9,
                     100.0 * c.roofline_fraction);
  }
  for (int i : {static_cast<int>(Bound::kHost), static_cast<int>(Bound::kInputPipeline),
                static_cast<int>(Bound::kHostToDevice), static_cast<int>(Bound::kCommunication)})
    if (p.bound_us[i] > 0)
      s += fmt::format("  {:<18} {:<22} {:>9.2f} {:>7.1f}\n", msg("waiting", lang), bound_cell(static_cast<Bound>(i)),
                       p.bound_us[i] / 1e3, 100.0 * p.bound_us[i] / p.step_us);

  auto reason = [&](const StrategyResult& st) { return lang == Lang::kZh ? reason_zh(st, p) : st.reason; };
  auto strategy_row = [&](const StrategyResult& st) {
    const double mem = st.memory_delta_bytes / 1073741824.0;
    return fmt::format("  {:<40} {:>8.2f}x {:>+9.2f} {:>8} {:>8}  {}\n", st.id.substr(0, 40), st.speedup, mem,
                       st.energy_ratio ? fmt::format("{:.2f}x", *st.energy_ratio) : "-",
                       st.usd_per_million_samples ? format_usd(*st.usd_per_million_samples) : "-", reason(st));
  };
  s += fmt::format("\n{}\n", msg(a.combinations.empty() ? "strategies_alone" : "strategies", lang));
  if (a.baseline_usd_per_million_samples)
    s += fmt::format(fmt::runtime(msg("baseline_cost", lang)), format_usd(*a.baseline_usd_per_million_samples)) + "\n";
  s += fmt::format("  {:<40} {:>9} {:>9} {:>8} {:>8}  {}\n", msg("col.strategy", lang), msg("col.speedup", lang),
                   msg("col.memory", lang), msg("col.energy", lang), msg("col.cost", lang), msg("col.why", lang));
  s += fmt::format("  {:<40} {:>9} {:>9} {:>8} {:>8}  {}\n", "", msg("unit.x", lang), "GiB", msg("unit.per_sample", lang),
                   msg("unit.per_million", lang), "");
  for (const auto& c : a.combinations) s += strategy_row(c);
  for (const auto& st : a.strategies)
    if (st.applicable) s += strategy_row(st);
  // Anchored on the user's measurement: the what-ifs' predicted ratios applied to the measured throughput.
  if (p.anchor) {
    const std::string_view unit = msg(p.anchor->unit == "tokens_per_s" ? "p.interval_tokens" : "p.interval_samples", lang);
    s += fmt::format("\n{}\n", fmt::format(m("anchored"), format_samples_per_s(p.anchor->measured), unit));
    // A rented hour costs the same whatever its throughput: the cost per sample scales as predicted / measured.
    const auto anchored_cost = [&](const std::optional<double>& usd) {
      const auto cost = p.anchor->anchored_cost(usd);
      return cost ? "  " + format_usd(*cost) + std::string(msg("anchored_per_million", lang)) : std::string();
    };
    if (p.anchor->anchored_cost(a.baseline_usd_per_million_samples))
      s += fmt::format("  {:<40} {:>12} {}{}\n", msg("anchored_baseline", lang), format_samples_per_s(p.anchor->measured),
                       unit, anchored_cost(a.baseline_usd_per_million_samples));
    // The combined strategy first, as in the table above (its band, as in JSON, from its category's pairs); then the
    // top five single ones.
    const auto anchored_row = [&](const StrategyResult& st) {
      const auto spread = what_if_spread(st.category);
      const double rate = p.anchor->measured * st.speedup;
      s += fmt::format("  {:<40} {:>12} {}{}{}\n", st.id.substr(0, 40), format_samples_per_s(rate), unit,
                       spread ? fmt::format("  ({} - {})", format_samples_per_s(rate / spread->spread),
                                            format_samples_per_s(rate * spread->spread))
                              : "",
                       anchored_cost(st.usd_per_million_samples));
    };
    for (const auto& c : a.combinations)
      if (c.applicable) anchored_row(c);
    int shown = 0;
    for (const auto& st : a.strategies)
      if (st.applicable && shown++ < 5) anchored_row(st);
  }
  s += fmt::format("\n{}\n", msg("not_applicable", lang));
  for (const auto& st : a.strategies)
    if (!st.applicable) s += fmt::format("  {:<40} {}\n", st.id.substr(0, 40), reason(st));
  s += fmt::format("\n{}\n", msg("legend", lang));
  return s;
}

nlohmann::json advice_json(const Advice& a, Lang lang) {
  nlohmann::json j;
  j["verdict"] = advice_verdict(a, lang);
  j["baseline"] = prediction_json(a.baseline);
  j["memory_pressure"] = a.memory_pressure;
  j["baseline_usd_per_million_samples"] =
      a.baseline_usd_per_million_samples ? nlohmann::json(*a.baseline_usd_per_million_samples) : nlohmann::json(nullptr);
  if (a.baseline.anchor) {
    const auto cost = a.baseline.anchor->anchored_cost(a.baseline_usd_per_million_samples);
    j["anchored_baseline_usd_per_million_samples"] = cost ? nlohmann::json(*cost) : nlohmann::json(nullptr);
  }
  j["capacity_limited_batch"] = a.capacity_limited_batch ? nlohmann::json(*a.capacity_limited_batch) : nlohmann::json(nullptr);
  j["breakdown"] = nlohmann::json::array();
  for (const auto& c : a.breakdown)
    j["breakdown"].push_back({{"op_class", c.op_class},
                              {"bound", bound_name(c.bound)},
                              {"time_ms", c.time_ms},
                              {"share", c.share},
                              {"flops", rounded_count_json(c.flops)},
                              {"bytes", rounded_count_json(c.bytes)},
                              {"roofline_fraction", c.roofline_fraction}});
  auto strategy = [&](const StrategyResult& st) {
    nlohmann::json x{{"id", st.id},
                     {"category", st.category},
                     {"applicable", st.applicable},
                     {"reason", st.reason},
                     {"reason_in_language", lang == Lang::kZh ? reason_zh(st, a.baseline) : st.reason},
                     {"reason_code",
                      st.reason_code.id.empty() ? nlohmann::json(nullptr) : nlohmann::json(st.reason_code.id)},
                     {"reason_args", st.reason_code.args},
                     {"speedup", st.applicable ? nlohmann::json(st.speedup) : nlohmann::json(nullptr)},
                     {"memory_delta_bytes", rounded_count_json(st.memory_delta_bytes)},
                     {"energy_ratio", st.energy_ratio ? nlohmann::json(*st.energy_ratio) : nlohmann::json(nullptr)},
                     {"cost_ratio", st.cost_ratio ? nlohmann::json(*st.cost_ratio) : nlohmann::json(nullptr)},
                     {"usd_per_million_samples",
                      st.usd_per_million_samples ? nlohmann::json(*st.usd_per_million_samples) : nlohmann::json(nullptr)}};
    // The what-if's own interval (analysis/intervals.h): measured pairs that differ in the same kind of input.
    const auto spread = st.applicable ? what_if_spread(st.category) : std::nullopt;
    x["speedup_low"] = spread ? nlohmann::json(st.speedup / spread->spread) : nlohmann::json(nullptr);
    x["speedup_high"] = spread ? nlohmann::json(st.speedup * spread->spread) : nlohmann::json(nullptr);
    if (a.baseline.anchor && st.applicable) {
      x["anchored"] = a.baseline.anchor->measured * st.speedup;
      const auto cost = a.baseline.anchor->anchored_cost(st.usd_per_million_samples);
      x["anchored_usd_per_million_samples"] = cost ? nlohmann::json(*cost) : nlohmann::json(nullptr);
    }
    if (st.prediction) {
      x["samples_per_s"] = st.prediction->samples_per_s;
      x["batch"] = st.prediction->request.batch;
      x["grad_accum"] = st.prediction->request.grad_accum;
      x["precision"] = st.prediction->request.precision;
      x["runtime"] = st.prediction->request.runtime;
      x["gpu"] = st.prediction->device.id;
    }
    return x;
  };
  j["strategies"] = nlohmann::json::array();
  for (const auto& st : a.strategies) j["strategies"].push_back(strategy(st));
  j["combinations"] = nlohmann::json::array();
  for (const auto& st : a.combinations) j["combinations"].push_back(strategy(st));
  return j;
}

}  // namespace perfcast
