// Where a two-socket CPU process's pages live (--numa-pages, the `numa_pages` column): first-touch (numactl
// --membind, --localalloc, or kernel.numa_balancing = 0) against Linux's automatic NUMA balancing, checked against the
// kernel's documented behaviour, the datasheets' channel rates and the command line's handling of the flag.
#include <gtest/gtest.h>

#include <string>

#include "analysis/predict.h"
#include "cli_runner.h"
#include "cost/cpu_cost.h"
#include "device/cpu_catalog.h"
#include "runtime/cpu_runtime.h"

namespace perfcast {
namespace {

const CpuSpec& part(const std::string& id) {
  const CpuSpec* c = cpu_by_id(id);
  EXPECT_NE(c, nullptr) << id;
  return *c;
}

// VGG-19's fc6 at batch 1: 25088 x 4096 FP32 weights (411 MB, far above two Gold 6148's caches) read once per call.
MatmulGeometry fc6() {
  MatmulGeometry g;
  g.batch = 1;
  g.m = 1;
  g.k = 25088;
  g.n = 4096;
  return g;
}

// Intel ARK, Xeon Gold 6148: six channels of DDR4-2666 per socket (6 x 2666 MT/s x 8 B = 128 GB/s). Pages on the node
// of the thread that first wrote them are read at no more than one socket's channels; pages that Linux's automatic
// NUMA balancing moved to their readers ('Memory is moved automatically to nodes that access it often', the kernel's
// sysctl documentation for kernel.numa_balancing) are read by each socket from its own node, at no more than both
// sockets' channels and faster than from one node; and none of them crosses the socket link.
TEST(CpuNuma, BalancedPagesStreamFromEverySocketsChannels) {
  CpuSpec two = part("xeon-gold-6148-2s");
  const auto& rt = find_cpu_runtime("paddle");
  const MatmulGeometry g = fc6();
  const double bytes = 25088.0 * 4096 * 4;
  const double flops = 2.0 * 25088 * 4096;
  const double one_socket_us = bytes / (6 * 2666 * 8.0 / 1e3 * 1e3);
  ASSERT_FALSE(two.pages_balanced);
  const CpuCostModel local(two, rt, cpu_cost_constants(), "fp32");
  const KernelCost k_local = local.gemm(g, flops, bytes, rt.matmul_efficiency, bytes);
  EXPECT_GE(k_local.memory_us, one_socket_us * (1 - 1e-9));
  EXPECT_GT(local.cross_socket_us(g, 0.0, bytes), 0.0);
  two.pages_balanced = true;
  const CpuCostModel balanced(two, rt, cpu_cost_constants(), "fp32");
  const KernelCost k_bal = balanced.gemm(g, flops, bytes, rt.matmul_efficiency, bytes);
  EXPECT_GE(k_bal.memory_us, one_socket_us / 2 * (1 - 1e-9));
  EXPECT_LT(k_bal.memory_us, k_local.memory_us);
  EXPECT_EQ(balanced.cross_socket_us(g, 0.0, bytes), 0.0);
}

// One socket is one NUMA node: there is nowhere for balancing to move a page, so the setting changes nothing.
TEST(CpuNuma, OneSocketIsTheSameEitherWay) {
  PredictRequest r;
  r.gpu = "xeon-gold-6148";
  r.model = "vgg19";
  r.runtime = "paddle";
  r.mode = Mode::kInfer;
  r.batch = 1;
  const double first_touch = predict(r).step.step_us;
  r.numa_pages = "balanced";
  EXPECT_DOUBLE_EQ(predict(r).step.step_us, first_touch);
  r.gpu = "xeon-gold-6148-2s";
  const double two_balanced = predict(r).step.step_us;
  r.numa_pages = "first-touch";
  EXPECT_LT(two_balanced, predict(r).step.step_us);
  r.numa_pages = "";
  EXPECT_DOUBLE_EQ(predict(r).step.step_us, predict([&] {
                     PredictRequest f = r;
                     f.numa_pages = "first-touch";
                     return f;
                   }()).step.step_us);
}

class CpuNumaCli : public test::ScratchDirTest {};

TEST_F(CpuNumaCli, BadValuesAreOneLineErrors) {
  const auto typo = run("predict --device xeon-gold-6148-2s --model vgg19 --runtime paddle --mode infer --batch 1 "
                        "--numa-pages balance");
  EXPECT_EQ(typo.code, 2) << typo.out;
  EXPECT_EQ(test::lines_of(typo.err).size(), 1u) << typo.err;
  EXPECT_NE(typo.err.find("balanced"), std::string::npos) << typo.err;
  const auto gpu = run("predict --gpu a100-sxm4-40gb --model resnet50 --mode infer --numa-pages balanced");
  EXPECT_EQ(gpu.code, 2) << gpu.out;
  EXPECT_NE(gpu.err.find("not a CPU"), std::string::npos) << gpu.err;
}

TEST_F(CpuNumaCli, ColumnReachesThePrediction) {
  test::write_text(dir_ / "rows.csv",
                   "gpu,model,runtime,mode,batch,numa_pages\n"
                   "xeon-gold-6148-2s,vgg19,paddle,infer,1,first-touch\n"
                   "xeon-gold-6148-2s,vgg19,paddle,infer,1,balanced\n"
                   "xeon-gold-6148-2s,vgg19,paddle,infer,1,interleave\n");
  // The bad cell is that row's error (the run exits 1, as for any failed row); the good rows run.
  const auto r = run("predict --configs rows.csv");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("2 ok, 1 failed"), std::string::npos) << r.err;
  EXPECT_NE((r.out + r.err).find("interleave"), std::string::npos) << r.out << r.err;
  const auto lines = test::lines_of(r.out);
  ASSERT_GE(lines.size(), 3u) << r.out;
  const auto header = lines[0];
  // predicted_samples_per_s is the first column after the configuration columns, which end at numa_pages.
  const auto throughput = [](const std::string& line) {
    const auto at = line.find(line.find(",balanced,") != std::string::npos ? ",balanced," : ",first-touch,");
    EXPECT_NE(at, std::string::npos) << line;
    const auto from = line.find(',', at + 1) + 1;
    return std::stod(line.substr(from, line.find(',', from) - from));
  };
  ASSERT_NE(header.find("numa_pages,predicted_samples_per_s"), std::string::npos) << header;
  EXPECT_GT(throughput(lines[2]), throughput(lines[1]));
}

}  // namespace
}  // namespace perfcast
