// DeepSpeed ZeRO's host work per micro-batch (schedule/deepspeed_host.h), checked against the calls DeepSpeed's
// source makes, each priced at 1 us so that the result counts calls.
#include <gtest/gtest.h>

#include "schedule/deepspeed_host.h"

namespace perfcast {
namespace {

LayerTimes one_module_per_layer() {
  LayerTimes t;
  t.deepspeed = true;
  t.module_calls_per_layer = 1;
  return t;
}

TEST(DeepSpeedHost, Zero3RunsFourForwardHooksAndTwoFunctionAppliesPerModuleCallInForward) {
  // parameter_offload.py _register_deepspeed_module registers two forward pre-hooks and two forward hooks on every
  // module (all four run in forward), two of which apply an autograd Function (pre_bwd_fn, post_bwd_fn).
  LayerTimes t = one_module_per_layer();
  t.host_module_call_us = 1;
  ParallelLayout l;
  l.zero = 3;
  const DeepSpeedHostCost c = deepspeed_host(t, l, 10, llm_training_constants());
  EXPECT_DOUBLE_EQ(c.forward_us, 10 * (4 + 2));
  EXPECT_DOUBLE_EQ(c.backward_us, 0);
}

TEST(DeepSpeedHost, Zero3RunsTheTwoFunctionsBackwardPerModuleCallAndReplaysForwardHooksUnderFullRecompute) {
  // The two applied Functions' backward run once per module call in backward; full recomputation replays the
  // checkpointed blocks' forward, hooks included, inside backward.
  LayerTimes t = one_module_per_layer();
  t.host_backward_op_us = 1;
  ParallelLayout l;
  l.zero = 3;
  EXPECT_DOUBLE_EQ(deepspeed_host(t, l, 10, llm_training_constants()).backward_us, 10 * 2);
  t.host_backward_op_us = 0;
  t.host_module_call_us = 1;
  l.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(deepspeed_host(t, l, 10, llm_training_constants()).backward_us, 10 * (4 + 2));
}

TEST(DeepSpeedHost, OnlyDeepSpeedsZeroRunsTheHooks) {
  // FSDP and runtimes whose --zero is not DeepSpeed's run none of DeepSpeed's hooks.
  LayerTimes t = one_module_per_layer();
  t.host_module_call_us = 1;
  t.gathered_tensors_per_layer = 1;
  ParallelLayout l;
  l.zero = 3;
  l.fsdp = true;
  EXPECT_DOUBLE_EQ(deepspeed_host(t, l, 10, llm_training_constants()).forward_us, 0);
  l.fsdp = false;
  t.deepspeed = false;
  EXPECT_DOUBLE_EQ(deepspeed_host(t, l, 10, llm_training_constants()).allgather_launches, 0);
}

}  // namespace
}  // namespace perfcast
