#include "schedule/deepspeed_host.h"

namespace perfcast {

DeepSpeedHostCost deepspeed_host(const LayerTimes& t, const ParallelLayout& l, double layers,
                                 const LlmTrainingConstants& c) {
  DeepSpeedHostCost out;
  if (!t.deepspeed || l.zero < 1 || l.fsdp) return out;
  const double modules = layers * t.module_calls_per_layer + t.module_calls_other;
  const double tensors = layers * t.param_tensors_per_layer + t.param_tensors_other;
  // ZeRO-3 gathers and releases only the tensors above the persistence threshold; the gradient hooks run for all.
  const double gathered = layers * t.gathered_tensors_per_layer + t.gathered_tensors_other;
  if (l.zero >= 3) {
    // Per module call, in forward: its four hooks (fetch, release, and the two that apply the backward Functions)
    // and the two Function applies; in backward: the two Functions' backward nodes. Full recomputation replays the
    // checkpointed blocks' forward, hooks and applies included, inside backward.
    const double forward_hooks = c.zero3_forward_hook_calls_per_module_call * t.host_module_call_us +
                                 c.zero3_function_applies_per_module_call * (t.host_module_call_us + t.host_autograd_op_us);
    const double backward_hooks = c.zero3_backward_hook_calls_per_module_call * t.host_backward_op_us;
    const double replayed = l.recompute == Recompute::kFull ? layers * t.module_calls_per_layer : 0.0;
    // Per gathered parameter tensor: a fetch (one collective launch and its buffer) forward and again backward, the
    // gathered tensor's views and wait, its release after each. Under full recomputation the replay's fetch takes the
    // place of backward's: the replayed parameters are used again by the block's backward right after, well inside
    // stage3_max_reuse_distance, so __params_to_release keeps them and backward finds them available.
    const double fetch = t.host_library_call_us + c.zero3_inline_ops_per_fetch * t.host_inline_op_us +
                         (c.zero3_inline_ops_per_gathered_tensor + c.zero3_inline_ops_per_released_tensor) * t.host_inline_op_us;
    const double fetches = gathered * c.zero3_fetches_per_param_tensor / 2.0 * fetch;  // half forward, half backward
    out.forward_us += modules * forward_hooks + fetches;
    out.backward_us += modules * backward_hooks + replayed * forward_hooks + fetches;
    out.allgather_launches = gathered * c.zero3_fetches_per_param_tensor;
  }
  if (l.zero >= 2 || l.overlap_grad_reduce)
    // A gradient hook per parameter tensor in backward, copying into the reduce bucket (one kernel).
    out.backward_us += tensors * (t.host_module_call_us + c.grad_hook_inline_ops_per_param_tensor * t.host_inline_op_us + t.host_launch_us);
  return out;
}

}  // namespace perfcast
