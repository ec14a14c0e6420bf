#include "schedule/l2_reuse.h"

#include <algorithm>

#include "cost/l2_hit.h"

namespace perfcast {

void apply_l2_reuse(std::vector<OpCost>& entries, const std::vector<EntryOrigin>& origin, const std::vector<Op>& ops,
                    const KernelCostModel& km, double act_bytes) {
  const L2HitRamp ramp = l2_hit_ramp(km);
  if (km.l2_bytes_per_us() <= 0 || ramp.full_bytes <= 0 || ramp.zero_bytes <= 0) return;
  // Serves `tensor` bytes of entry e's reads from L2 when the kernel at `last` wrote them just before it.
  const auto serve = [&](OpCost& e, int last, double tensor) {
    const OpCost& p = entries[static_cast<std::size_t>(last)];
    const double produced = p.cost.bytes / std::max(1.0, p.cost.launches);
    const double consumed = e.cost.bytes / e.cost.launches;
    // Each launch reads the input (batch norm's statistics and apply kernels both do).
    e.cost = km.read_from_l2(e.cost, l2_reuse_share(produced, consumed, ramp.full_bytes, ramp.zero_bytes) * tensor);
  };
  std::vector<int> consumers(ops.size(), 0);
  for (const Op& op : ops)
    for (std::size_t j = 0; j < op.inputs.size(); ++j)
      if (op.inputs[j] >= 0 && std::find(op.inputs.begin(), op.inputs.begin() + static_cast<std::ptrdiff_t>(j),
                                         op.inputs[j]) == op.inputs.begin() + static_cast<std::ptrdiff_t>(j))
        ++consumers[static_cast<std::size_t>(op.inputs[j])];
  // The entry whose kernel wrote each op's output (-1: not written in this pass yet).
  std::vector<int> writer(ops.size(), -1);
  int last = -1;  // the entry whose kernel ran last
  for (std::size_t k = 0; k < entries.size() && k < origin.size(); ++k) {
    OpCost& e = entries[k];
    const EntryOrigin& from = origin[k];
    if (from.op >= 0) {
      const auto i = static_cast<std::size_t>(from.op);
      const Op& op = ops[i];
      const bool one_kernel = e.fusion == Fusion::kNone && e.cost.launches > 0 && e.cost.kernels == 1 && op.repeats == 1;
      if (from.forward) {
        const int first_in = op.inputs.empty() ? -1 : op.inputs[0];
        if (e.fusion == Fusion::kHorizontal) {
          // Written by the kernel of the first GEMM of its group (over the concatenated weights).
          writer[i] = writer[parallel_gemm_siblings(ops, i).front()];
        } else if (e.fusion != Fusion::kNone) {
          // Fused into its producer's kernel, folded into it, or a view: the output is what that kernel wrote.
          writer[i] = first_in >= 0 ? writer[static_cast<std::size_t>(first_in)] : -1;
        } else if (e.cost.launches > 0) {
          double tensor = 0;
          if (last >= 0 && one_kernel)
            for (std::size_t j = 0; j < op.inputs.size(); ++j) {
              const int in = op.inputs[j];
              if (in < 0 || std::find(op.inputs.begin(), op.inputs.begin() + static_cast<std::ptrdiff_t>(j), in) !=
                                op.inputs.begin() + static_cast<std::ptrdiff_t>(j))
                continue;  // the graph input, or an input named twice (x * x reads x once)
              const Op& producer = ops[static_cast<std::size_t>(in)];
              if (writer[static_cast<std::size_t>(in)] == last && producer.repeats == 1)
                tensor += static_cast<double>(producer.out_elems) * act_bytes;
            }
          if (tensor > 0) serve(e, last, tensor);
          // A kernel of several writes its output last (the output transpose, Winograd's output transform).
          writer[i] = static_cast<int>(k);
        }
      } else if (last >= 0 && one_kernel && consumers[i] == 1) {
        // Backward: the gradient of this op's output is the input gradient the kernel just before wrote, when
        // that kernel is the backward of its only consumer. The activations it saved come from DRAM.
        const EntryOrigin& p = origin[static_cast<std::size_t>(last)];
        if (!p.forward && p.op >= 0) {
          const auto& in = ops[static_cast<std::size_t>(p.op)].inputs;
          if (std::find(in.begin(), in.end(), static_cast<int>(i)) != in.end())
            serve(e, last, static_cast<double>(op.out_elems) * act_bytes);
        }
      }
    }
    if (e.cost.launches > 0) last = static_cast<int>(k);
  }
}

}  // namespace perfcast
