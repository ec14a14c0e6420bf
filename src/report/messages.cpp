#include "report/messages.h"

#include <map>

#include "core/error.h"

namespace perfcast {

namespace {

struct Text {
  std::string_view en;
  std::string_view zh;
};

const std::map<std::string_view, Text>& table() {
  static const std::map<std::string_view, Text> t{
      {"title", {"perfcast advice: {} on {} ({}), {} {} {}, batch {}", "perfcast 建议：{} 在 {}（{}）上，{} {} {}，批大小 {}"}},
      {"verdict", {"Verdict", "结论"}},
      {"verdict.bound_in", {"bound by {} in {}: {} of the step", "瓶颈是 {}，主要在 {}：占单步时间的 {}"}},
      {"verdict.input",
       {"bound by the host input pipeline: {} cores prepare {:.0f} samples/s, the GPU could take {:.0f}/s",
        "瓶颈是主机输入流水线：{} 个 CPU 核每秒只能准备 {:.0f} 个样本，而 GPU 每秒可处理 {:.0f} 个"}},
      {"verdict.host",
       {"launch-bound: the framework needs {:.2f} ms to dispatch {:.0f} kernels, the GPU needs {:.2f} ms",
        "受启动开销限制：框架派发 {1:.0f} 个内核需要 {0:.2f} ms，而 GPU 只需 {2:.2f} ms"}},
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
      {"capacity",
       {"memory capacity caps the batch at {}: a batch twice as large would run faster if it fit",
        "显存容量把批大小限制在 {}：若能放下两倍批大小会更快"}},
      {"pressure", {"memory in use: {:.0f}% of the card", "显存占用：{:.0f}%"}},
      {"legend",
       {"Legend: share = part of the step time; roofline = achieved FLOP/s over the pipe's peak (compute-bound) or "
        "achieved bytes/s over DRAM peak (bandwidth-bound); speedup = predicted throughput over the baseline; "
        "memory = change in predicted device memory. Each strategy is the same model re-predicted with one change.",
        "说明：占比 = 占单步时间的比例；屋顶线 = 实际 FLOP/s 与该计算单元峰值之比（计算受限）或实际带宽与显存峰值带宽之比"
        "（带宽受限）；加速比 = 预测吞吐量 / 基线；显存 = 预测显存的变化。每个策略都是同一模型只改一处后重新预测的结果。"}},
      {"bound.tensor_compute", {"tensor-core compute", "张量核心计算"}},
      {"bound.cuda_compute", {"CUDA-core compute", "CUDA 核心计算"}},
      {"bound.dram_bandwidth", {"DRAM bandwidth", "显存带宽"}},
      {"bound.latency", {"kernel launch latency", "内核启动延迟"}},
      {"bound.host_overhead", {"host dispatch", "主机派发开销"}},
      {"bound.input_pipeline", {"the input pipeline", "输入流水线"}},
      {"bound.host_to_device", {"host-to-device copies", "主机到设备拷贝"}},
      {"bound.communication", {"communication", "通信"}},
      {"and", {" and ", "和"}},
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

}  // namespace perfcast
