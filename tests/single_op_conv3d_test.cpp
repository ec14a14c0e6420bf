// `perfcast op --op conv3d`: a 3D convolution through the graph builder's conv (the path the zoo's nodule3d
// Conv3d layers take). Its FLOPs are the textbook count 2 x N x Cout x Cin x kd x kh x kw x Do x Ho x Wo
// (one multiply and one add per filter tap per output element), counted by hand below.
#include <gtest/gtest.h>

#include <string>

#include "analysis/single_op.h"
#include "cli_runner.h"
#include "core/error.h"

namespace perfcast {
namespace {

OpSpec conv3d(std::int64_t n, std::int64_t c, std::int64_t d, std::int64_t h, std::int64_t w, std::int64_t k,
              std::int64_t t, std::int64_t r, std::int64_t s) {
  OpSpec o;
  o.op = "conv3d";
  o.conv_n = n, o.conv_c = c, o.conv_d = d, o.conv_h = h, o.conv_w = w;
  o.conv_k = k, o.conv_t = t, o.conv_r = r, o.conv_s = s;
  return o;
}

TEST(SingleOpConv3d, FlopsAreTwoMultiplyAddsPerFilterTapPerOutput) {
  const OpContext ctx = op_context("a100-sxm4-40gb", "pytorch", "fp32");
  // 3x3x3, padding 1, stride 1: the output keeps the 16 x 32 x 32 volume.
  OpSpec same = conv3d(2, 32, 16, 32, 32, 64, 3, 3, 3);
  same.pad_d = same.pad_h = same.pad_w = 1;
  EXPECT_DOUBLE_EQ(predict_op(same, ctx).cost.flops, 2.0 * 2 * 64 * 32 * 3 * 3 * 3 * (16 * 32 * 32));
  // Stride 2 in every dimension, no padding: Do = (16 - 3) / 2 + 1 = 7, Ho = Wo = (32 - 3) / 2 + 1 = 15.
  OpSpec strided = conv3d(1, 8, 16, 32, 32, 16, 3, 3, 3);
  strided.stride_d = strided.stride_h = strided.stride_w = 2;
  EXPECT_DOUBLE_EQ(predict_op(strided, ctx).cost.flops, 2.0 * 1 * 16 * 8 * 27 * (7 * 15 * 15));
  // A depth-1 filter over depth-1 input is the 2D convolution of the same plane.
  OpSpec flat = conv3d(4, 16, 1, 28, 28, 32, 1, 3, 3);
  flat.pad_h = flat.pad_w = 1;
  OpSpec as2d;
  as2d.op = "conv2d";
  as2d.conv_n = 4, as2d.conv_c = 16, as2d.conv_h = 28, as2d.conv_w = 28, as2d.conv_k = 32, as2d.conv_r = 3,
  as2d.conv_s = 3, as2d.pad_h = as2d.pad_w = 1;
  EXPECT_DOUBLE_EQ(predict_op(flat, ctx).cost.flops, predict_op(as2d, ctx).cost.flops);
}

class SingleOpConv3dCli : public test::ScratchDirTest {};

TEST(SingleOpConv3d, BadShapesAreRefused) {
  const OpContext ctx = op_context("a100-sxm4-40gb", "pytorch", "fp32");
  EXPECT_THROW(predict_op(conv3d(1, 8, 2, 8, 8, 8, 3, 3, 3), ctx), InputError);  // filter deeper than the input
  EXPECT_THROW(predict_op(conv3d(1, 8, 0, 8, 8, 8, 1, 3, 3), ctx), InputError);  // no depth
}

TEST_F(SingleOpConv3dCli, AnotherOpsShapeFlagIsRefused) {
  const auto r = run("op --gpu a100-sxm4-40gb --op conv3d --conv-n 1 --conv-c 8 --conv-d 8 --conv-h 8 "
                               "--conv-w 8 --conv-k 8 --conv-t 3 --conv-r 3 --conv-s 3 --m 4");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--m does not apply to --op conv3d"), std::string::npos) << r.err;
}

TEST_F(SingleOpConv3dCli, TheCliReportsTheHandCountedWork) {
  const auto r = run("op --gpu h100-sxm5-80gb --op conv3d --conv-n 2 --conv-c 32 --conv-d 16 --conv-h 32 "
                               "--conv-w 32 --conv-k 64 --conv-t 3 --conv-r 3 --conv-s 3 --pad-d 1 --pad-h 1 --pad-w 1 "
                               "--json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"op\": \"conv3d\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"flops\": 3623878656"), std::string::npos) << r.out;  // 2*2*64*32*27*16*32*32
}

}  // namespace
}  // namespace perfcast
