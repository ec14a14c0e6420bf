// Parameter counts, MACs and shapes of the dense-prediction and sequence models against published figures.
// Where a paper prints no total, the expectation is computed by hand in the comment from the paper's layers.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "graph/op_arithmetic.h"
#include "import/zoo/zoo.h"
#include "zoo_test_helpers.h"

namespace perfcast {
namespace {

using zoo_test::build;
using zoo_test::macs_of;
using zoo_test::op_named;
using zoo_test::params_of;


// Parameters of the ops whose names start with `prefix`.
double params_under(const Graph& g, const std::string& prefix) {
  double p = 0;
  for (const auto& op : g.ops)
    if (op.name.rfind(prefix, 0) == 0) p += static_cast<double>(op.params);
  return p;
}

// Per-sample MACs of the matmul ops whose names start with `prefix`.
double matmul_macs_under(const Graph& g, const std::string& prefix) {
  double m = 0;
  for (const auto& op : g.ops)
    if (op.kind == OpKind::kMatmul && op.name.rfind(prefix, 0) == 0)
      m += static_cast<double>(op.mm.batch * op.mm.m * op.mm.n * op.mm.k * op.repeats);
  return m / static_cast<double>(g.batch);
}


constexpr const char* kIds[] = {"ssd300", "unet2d", "unet3d", "nodule3d", "bert_base", "bert_large",
                                "bert_base_squad", "bert_large_squad", "gpt2", "gpt2_medium", "gpt2_large",
                                "gpt2_xl", "transformer_base", "gnmt"};

TEST(ZooDenseSeq, RegisteredWithMetadataAndEndInALoss) {
  for (const char* id : kIds) {
    const ZooModel& m = find_zoo_model(id);
    EXPECT_FALSE(m.family.empty()) << id;
    EXPECT_FALSE(m.description.empty()) << id;
    EXPECT_FALSE(m.citation.empty()) << id;
    const Graph g = m.build({2, 0});
    ASSERT_FALSE(g.ops.empty()) << id;
    EXPECT_EQ(g.ops.back().kind, OpKind::kLoss) << id;
    EXPECT_EQ(g.batch, 2) << id;
    EXPECT_EQ(g.params(), m.build({1, 0}).params()) << id << ": parameters do not depend on the batch";
  }
  EXPECT_EQ(find_zoo_model("ssd300").family, "detection");
  EXPECT_EQ(find_zoo_model("unet2d").family, "segmentation");
  EXPECT_EQ(find_zoo_model("nodule3d").family, "cnn3d");
  EXPECT_EQ(find_zoo_model("gnmt").family, "rnn");
  EXPECT_EQ(find_zoo_model("gpt2").family, "transformer");
}

// ---- SSD300 ----------------------------------------------------------------------------------------------------

TEST(ZooDenseSeq, Ssd300Parameters) {
  // Published: VGG-16 SSD300 for VOC (21 classes) has 26,285,486 parameters (torchinfo summary of the
  // ssd.pytorch model: VGG 14,714,688 + L2Norm 512 + fc6/fc7 5,769,216 + extras 2,459,520 + heads 3,341,550).
  // The conf heads scale with the class count: sum over sources of boxes*(9*C_src + 1) per class
  // = 4*4609 + 6*9217 + 6*4609 + 6*2305 + 4*2305 + 4*2305 = 133,662, so COCO (81) adds 60 * 133,662 = 8,019,720:
  // 26,285,486 + 8,019,720 = 34,305,206.
  const double p = params_of("ssd300");
  EXPECT_NEAR(p, 34'305'206, 34'305'206 * 0.01);
  EXPECT_NEAR(p - 60 * 133'662, 26'285'486, 26'285'486 * 0.01);  // the published VOC figure
}

TEST(ZooDenseSeq, Ssd300MacsAndBoxes) {
  // Published: 31.43 G mult-adds for the VOC SSD300 (same torchinfo summary; 31.44 GFLOPs in torchstat).
  // COCO adds the extra conf-head MACs sum(H*W*9*C_src*boxes) * 60 = (38^2*9*512*4 + 19^2*9*1024*6
  // + 10^2*9*512*6 + 5^2*9*256*6 + 3^2*9*256*4 + 1*9*256*4) * 60 = 2,986,813,440.
  EXPECT_NEAR(macs_of("ssd300"), 31.43e9 + 2'986'813'440.0, (31.43e9 + 2'986'813'440.0) * 0.01);
  const Graph g = build("ssd300");
  // 8732 default boxes (Liu et al. 2016, Sec. 2.2/3: 38^2*4 + 19^2*6 + 10^2*6 + 5^2*6 + 3^2*4 + 4), 81 classes.
  const Op& conf = op_named(g, "conf.view");
  ASSERT_EQ(conf.out_shape.size(), 3U);
  EXPECT_EQ(conf.out_shape[1], 8732);
  EXPECT_EQ(conf.out_shape[2], 81);
  // fc6 is the dilated 3x3 conv at 19x19 (Liu et al. 2016, Sec. 3 "atrous").
  EXPECT_EQ(op_named(g, "vgg.fc6").conv.dilation[0], 6);
  EXPECT_EQ(op_named(g, "vgg.fc6").out_shape[2], 19);
}

// ---- U-Nets ----------------------------------------------------------------------------------------------------

TEST(ZooDenseSeq, Unet2dParametersAndShape) {
  // Published: 31,030,658 parameters for the original U-Net (1 input channel, 2 classes), as counted by the
  // widely reproduced Keras summary of the paper's configuration (Ronneberger et al. 2015, Fig. 1).
  EXPECT_NEAR(params_of("unet2d"), 31'030'658, 31'030'658 * 0.01);
  // Ronneberger et al. 2015, Fig. 1: 572x572 in, 388x388 segmentation map out.
  const Graph g = build("unet2d");
  const Op& out = op_named(g, "final");
  EXPECT_EQ(out.out_shape[1], 2);
  EXPECT_EQ(out.out_shape[2], 388);
  EXPECT_EQ(out.out_shape[3], 388);
  // Fig. 1: 32x32 after the fourth pooling, 28x28 after the two unpadded 1024-channel convs.
  EXPECT_EQ(op_named(g, "down4.conv2").out_shape[2], 28);
  EXPECT_EQ(op_named(g, "down4.conv2").out_shape[1], 1024);
}

TEST(ZooDenseSeq, Unet3dParametersAndShape) {
  // Published: "The architecture has 19069955 parameters in total" (Cicek et al. 2016, Sec. 2). That total is
  // reproduced exactly by 3 input channels, biases on the 3x3x3 convs and the final 1x1x1 conv, no bias on the
  // three up-convolutions and no batch-norm parameters:
  //   3x3x3 convs 2,624 + 55,360 | 110,656 + 221,312 | 442,496 + 884,992 | 1,769,728 + 3,539,456
  //               | 5,308,672 + 1,769,728 | 1,327,232 + 442,496 | 331,840 + 110,656        = 16,317,248
  //   up-convs 512^2*8 + 256^2*8 + 128^2*8 = 2,097,152 + 524,288 + 131,072                  =  2,752,512
  //   final 1x1x1 64->3                                                                       =        195
  //   total                                                                                     19,069,955
  // The graph keeps batch-norm scale and shift on the 14 normalised convs: 2 * (32+64+64+128+128+256+256+512
  // +256+256+128+128+64+64) = 4,672 more, 19,074,627 in all.
  const double p = params_of("unet3d");
  EXPECT_NEAR(p, 19'069'955, 19'069'955 * 0.01);
  EXPECT_DOUBLE_EQ(p, 19'069'955 + 4'672);
  // Cicek et al. 2016, Fig. 1: 132x132x116 in, 44x44x28 out with 3 labels.
  const Graph g = build("unet3d");
  const Op& out = op_named(g, "final");
  ASSERT_EQ(out.out_shape.size(), 5U);
  EXPECT_EQ(out.out_shape[1], 3);
  EXPECT_EQ(out.out_shape[2], 44);
  EXPECT_EQ(out.out_shape[3], 44);
  EXPECT_EQ(out.out_shape[4], 28);
}

// ---- nodule3d (grt123 detector) -----------------------------------------------------------------------------------

TEST(ZooDenseSeq, Nodule3dParametersAndShape) {
  // Liao et al. 2019 print no total; by hand from the reference code (lfz/DSB2017 training/detector/res18.py,
  // PostRes in layers.py; 3x3x3 convs with bias, BN = 2 per channel, 1x1x1 conv+BN shortcut when widths differ):
  //   preBlock  conv 1->24 (672) + BN 48 + conv 24->24 (15,576) + BN 48                       =    16,344
  //   PostRes(24,32) 49,440; PostRes(32,32) 55,488; PostRes(32,64) 168,512; PostRes(64,64) 221,568
  //   forw1 49,440+55,488 = 104,928; forw2 168,512+221,568 = 390,080; forw3 = forw4 = 3*221,568 = 664,704
  //                                                                                          = 1,824,416
  //   path1, path2  deconv 64->64 2^3 (32,832) + BN 128, twice                                 =    65,920
  //   back3  PostRes(128,64) 340,544 + 2 * 221,568                                             =   783,680
  //   back2  PostRes(131,128) 913,024 + 2 * PostRes(128,128) 885,504                           = 2,684,032
  //   output conv 128->64 (8,256) + conv 64->15 (975)                                          =     9,231
  //   total                                                                                      5,383,623
  EXPECT_NEAR(params_of("nodule3d"), 5'383'623, 5'383'623 * 0.01);
  EXPECT_DOUBLE_EQ(params_of("nodule3d"), 5'383'623);
  // Output: 32^3 positions (stride 4 on a 128^3 crop) x 3 anchors x 5 (Liao et al. 2019, Sec. III-B).
  const Graph g = build("nodule3d");
  const Op& out = op_named(g, "output.conv2");
  EXPECT_EQ(out.out_shape[1], 15);
  EXPECT_EQ(out.out_shape[2], 32);
  EXPECT_EQ(out.out_shape[4], 32);
}

// ---- BERT ------------------------------------------------------------------------------------------------------

TEST(ZooDenseSeq, BertParameters) {
  // HF bert-base-uncased: BertModel (encoder + pooler) 109,482,240; BertForPreTraining (with the MLM transform,
  // the tied decoder's 30,522 bias and the NSP classifier) 110,106,428. Devlin et al. 2019 quote "110M".
  const Graph base = build("bert_base");
  EXPECT_NEAR(static_cast<double>(base.params()), 110'106'428, 110'106'428 * 0.01);
  EXPECT_NEAR(static_cast<double>(base.params()) - params_under(base, "cls."), 109'482'240, 109'482'240 * 0.01);
  // HF bert-large-uncased: BertModel 335,141,888; BertForPreTraining 336,226,108. Devlin et al. 2019: "340M".
  const Graph large = build("bert_large");
  EXPECT_NEAR(static_cast<double>(large.params()), 336'226'108, 336'226'108 * 0.01);
  EXPECT_NEAR(static_cast<double>(large.params()) - params_under(large, "cls."), 335'141'888, 335'141'888 * 0.01);
}

TEST(ZooDenseSeq, BertSquadParameters) {
  // HF BertForQuestionAnswering = BertModel without its pooler + qa_outputs (H x 2 + 2):
  // bert-base-uncased 109,482,240 - 590,592 + 1,538 = 108,893,186; bert-large-uncased 335,141,888 - 1,049,600 +
  // 2,050 = 334,094,338 (the totals Hugging Face's fine-tuning examples print for these models).
  const Graph base = build("bert_base_squad");
  EXPECT_EQ(base.params(), 108'893'186);
  EXPECT_EQ(base.seq, 384) << "SQuAD's max_seq_length in the reference fine-tuning scripts";
  const Graph large = build("bert_large_squad");
  EXPECT_EQ(large.params(), 334'094'338);
  // Without the 30522-way MLM decoder the work per token is the encoder's plus two logits.
  const Graph pre = build("bert_base", 1, 384);
  EXPECT_LT(matmul_macs_under(base, ""), 0.85 * matmul_macs_under(pre, ""));
}

TEST(ZooDenseSeq, LargerGpt2Parameters) {
  // HF gpt2-medium / gpt2-large / gpt2-xl (LM head tied to wte): 354,823,168 / 774,030,080 / 1,557,611,200,
  // the 355M / 774M / 1558M of Radford et al. 2019.
  EXPECT_EQ(build("gpt2_medium").params(), 354'823'168);
  EXPECT_EQ(build("gpt2_large").params(), 774'030'080);
  EXPECT_EQ(build("gpt2_xl").params(), 1'557'611'200);
}

TEST(ZooDenseSeq, BertMacs) {
  const Graph g = build("bert_base");
  ASSERT_EQ(g.seq, 128);
  const double seq = 128;
  // Encoder MACs per token = its non-embedding weights: 12 * (4*768^2 + 2*768*3072) = 84,934,656, the ~85M
  // non-embedding parameters of BERT-base (Kaplan et al. 2020, C_forward ~ 2N FLOPs per token).
  EXPECT_NEAR(matmul_macs_under(g, "encoder.") / seq, 85e6, 85e6 * 0.02);
  // Whole step, closed form: tokens x (encoder + MLM transform 768^2 + tied decoder 768*30522) plus the pooler
  // 768^2 and NSP 768*2 on the [CLS] token only.
  const double expected = seq * (84'934'656.0 + 589'824.0 + 768.0 * 30522.0) + 589'824.0 + 1'536.0;
  EXPECT_NEAR(conv_linear_macs(g), expected, expected * 0.001);
  // Attention: 12 bidirectional layers with 12 heads of 64 (Devlin et al. 2019, Sec. 3).
  int attn = 0;
  for (const auto& op : g.ops)
    if (op.kind == OpKind::kAttention) {
      ++attn;
      EXPECT_EQ(op.attn.heads, 12);
      EXPECT_EQ(op.attn.head_dim, 64);
      EXPECT_FALSE(op.attn.causal);
    }
  EXPECT_EQ(attn, 12);
}

// ---- GPT-2 -----------------------------------------------------------------------------------------------------

TEST(ZooDenseSeq, Gpt2ParametersAndMacs) {
  // HF gpt2 (the released 124M model): 124,439,808 parameters with the LM head tied to wte.
  EXPECT_NEAR(params_of("gpt2"), 124'439'808, 124'439'808 * 0.01);
  const Graph g = build("gpt2");
  ASSERT_EQ(g.seq, 1024);
  // Kaplan et al. 2020, Table 1: forward = 2N (N = 85,056,000 non-embedding parameters) + 2 d_model n_vocab
  // (de-embedding) FLOPs per token besides attention, i.e. N + 768*50257 = 123,653,376 MACs per token.
  EXPECT_NEAR(conv_linear_macs(g) / 1024.0, 123'653'376, 123'653'376 * 0.01);
  // The attention term: 12 causal layers, 12 heads of 64, over the full 1024-token context.
  int attn = 0;
  for (const auto& op : g.ops)
    if (op.kind == OpKind::kAttention) {
      ++attn;
      EXPECT_TRUE(op.attn.causal);
      EXPECT_EQ(op.attn.heads, 12);
      EXPECT_EQ(op.attn.head_dim, 64);
      EXPECT_EQ(op.attn.q_len, 1024);
      EXPECT_EQ(op.attn.kv_len, 1024);
    }
  EXPECT_EQ(attn, 12);
}

// ---- Transformer base ------------------------------------------------------------------------------------------

TEST(ZooDenseSeq, TransformerBaseParametersAndMacs) {
  // By hand from Vaswani et al. 2017 Table 3 (base) with the shared 37000 BPE vocabulary (Sec. 5.1) and one
  // table for both embeddings and the pre-softmax projection (Sec. 3.4):
  //   shared table 37000*512 = 18,944,000
  //   encoder layer: attention 4*(512^2+512) = 1,050,624, FFN 1,050,624 + 1,049,088, 2 LN 2,048 = 3,152,384; x6
  //   decoder layer: 2 attentions 2,101,248, FFN 2,099,712, 3 LN 3,072 = 4,204,032; x6
  //   total 18,944,000 + 18,914,304 + 25,224,192 = 63,082,496
  const double p = params_of("transformer_base");
  EXPECT_NEAR(p, 63'082'496, 63'082'496 * 0.01);
  // Vaswani et al. 2017 Table 3 prints 65 x 10^6 for the base model; the stated hyperparameters give 63.1M
  // (3% less), a gap the paper does not explain, so the published figure is held to 5%.
  EXPECT_NEAR(p, 65e6, 65e6 * 0.05);
  // Every weight (the tied table as output projection included) is used once per target/source token:
  // forward MACs per token ~ parameters. Exact: 6*(4d^2 + 2 d d_ff) + 6*(8d^2 + 2 d d_ff) + d*V = 62,984,192.
  const Graph g = build("transformer_base");
  ASSERT_EQ(g.seq, 128);
  EXPECT_NEAR(conv_linear_macs(g) / 128.0, 62'984'192, 62'984'192 * 0.001);
  EXPECT_NEAR(conv_linear_macs(g) / 128.0, p, p * 0.01);
}

// ---- GNMT ------------------------------------------------------------------------------------------------------

TEST(ZooDenseSeq, GnmtParametersAndMacs) {
  // Published: 160,671,297 trainable parameters for GNMT v2 with 4+4 layers, hidden 1024 (MLBench blog
  // "NLP Translation tasks, results discussion", 2020-10-02, using the MLPerf/NVIDIA PyTorch GNMT). By hand:
  //   shared embedding 32320*1024 = 33,095,680
  //   encoder: bi-LSTM 2 * 8,396,800 + LSTM(2048) 12,591,104 + 2 LSTM(1024) 16,793,600 = 46,178,304
  //   decoder: LSTM 8,396,800 + attention (W_q, W_k 2,097,152, v 1,024, normalize bias 1,024, scalar 1)
  //            + 3 LSTM(2048) 37,773,312 + classifier 1024*32320 + 32320 = 33,128,000
  // The graph has all of it but the 1 normalize_scalar: 160,671,296.
  const double p = params_of("gnmt");
  EXPECT_NEAR(p, 160'671'297, 160'671'297 * 0.01);
  EXPECT_DOUBLE_EQ(p, 160'671'296);
  // Closed form per token with S = T = 50: each LSTM weight once per token (encoder 44 H^2, decoder 44 H^2),
  // W_q and W_k (2 H^2), the classifier H*V, and the additive attention's v projection and context bmm
  // (2 * S * H per target token) = 90 H^2 + H V + 2 S H = 127,569,920 MACs, i.e. ~ the non-embedding parameters
  // (160,671,297 - 33,095,680 = 127,575,617).
  const Graph g = build("gnmt");
  ASSERT_EQ(g.seq, 50);
  EXPECT_NEAR(conv_linear_macs(g) / 50.0, 127'569'920, 127'569'920 * 0.001);
  EXPECT_NEAR(conv_linear_macs(g) / 50.0, 127'575'617, 127'575'617 * 0.01);
}

// ---- sequence length handling -----------------------------------------------------------------------------------

TEST(ZooDenseSeq, SequenceModelsTakeSeq) {
  struct Default {
    const char* id;
    std::int64_t seq;
  };
  for (const Default d : {Default{"bert_base", 128}, Default{"bert_large", 128}, Default{"gpt2", 1024},
                          Default{"transformer_base", 128}, Default{"gnmt", 50}}) {
    const ZooModel& m = find_zoo_model(d.id);
    EXPECT_TRUE(m.sequence) << d.id;
    EXPECT_EQ(m.default_seq, d.seq) << d.id;
    const Graph g0 = m.build({1, 0});
    EXPECT_TRUE(g0.is_sequence) << d.id;
    EXPECT_EQ(g0.seq, d.seq) << d.id;
    const Graph g = m.build({1, 64});
    EXPECT_EQ(g.seq, 64) << d.id;
    EXPECT_EQ(g.params(), g0.params()) << d.id << ": parameters do not depend on the sequence length";
    EXPECT_GT(g.input_bytes_per_sample, 0) << d.id;
  }
  for (const char* id : {"ssd300", "unet2d", "unet3d", "nodule3d"}) EXPECT_FALSE(find_zoo_model(id).sequence) << id;
  // Learned position tables bound the length.
  EXPECT_THROW(build("bert_base", 1, 513), InputError);
  EXPECT_THROW(build("gpt2", 1, 1025), InputError);
  EXPECT_NO_THROW(build("bert_base", 1, 512));
  // Tokens per sample scale the linear MACs linearly for the encoder-only model.
  EXPECT_NEAR(matmul_macs_under(build("bert_base", 1, 256), "encoder.") /
                  matmul_macs_under(build("bert_base", 1, 128), "encoder."),
              2.0, 1e-9);
}

}  // namespace
}  // namespace perfcast
