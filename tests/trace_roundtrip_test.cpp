// A zoo CNN written out as the operator events PyTorch's profiler records for its forward pass (aten::conv2d,
// aten::batch_norm, aten::relu_, aten::add_, pooling, aten::linear, with record_shapes input dims), read back as a
// trace model: the same parameters (ResNet-50: 25,557,032, torchvision's count) and the same predicted step,
// whether the trace carries Concrete Inputs (PyTorch >= 2.1) or the geometry has to come from the next op's shape.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/predict.h"
#include "cli_runner.h"
#include "import/model_source.h"
#include "import/zoo/zoo.h"

namespace {

using nlohmann::json;
using namespace perfcast;

std::string int_list(const std::array<std::int64_t, 3>& v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The forward ops of `g` as Kineto cpu_op events inside one ProfilerStep.
json trace_of(const Graph& g, bool concrete_inputs) {
  json ev = json::array();
  double ts = 1;
  const auto in_shape = [&](const Op& op) {
    const int id = op.inputs.empty() ? -1 : op.inputs[0];
    if (id >= 0) return g.ops[static_cast<std::size_t>(id)].out_shape;
    return std::vector<std::int64_t>{g.batch, 3, 224, 224};
  };
  const auto push = [&](const std::string& name, json dims, json concrete = nullptr) {
    json e = {{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", 1}, {"tid", 1}, {"ts", ts}, {"dur", 5}};
    e["args"] = {{"Input Dims", dims}};
    if (concrete_inputs && !concrete.is_null()) e["args"]["Concrete Inputs"] = concrete;
    ev.push_back(e);
    ts += 10;
  };
  for (const Op& op : g.ops) {
    const auto x = in_shape(op);
    switch (op.kind) {
      case OpKind::kConv: {
        const auto& c = op.conv;
        json w = {c.c_out, c.c_in / c.groups, c.kernel[0], c.kernel[1]};
        push("aten::conv2d", {x, w, c.bias ? json{c.c_out} : json::array()},
             {"", "", "", int_list(c.stride, 2), int_list(c.pad, 2), int_list(c.dilation, 2), std::to_string(c.groups)});
        break;
      }
      case OpKind::kNorm: push("aten::batch_norm", {x, {x[1]}, {x[1]}, {x[1]}, {x[1]}}); break;
      case OpKind::kElementwise:
        if (op.inputs.size() == 2) push("aten::add_", {x, x, json::array()});
        else push("aten::relu_", {x});
        break;
      case OpKind::kPool:
        if (op.out_shape[2] == 1) push("aten::adaptive_avg_pool2d", {x, json::array()}, {"", "[1, 1]"});
        else push("aten::max_pool2d", {x}, {"", "[3, 3]", "[2, 2]", "[1, 1]", "[1, 1]", "False"});
        break;
      case OpKind::kMatmul:
        push("aten::linear", {x, {op.mm.n, op.mm.k}, op.mm.bias ? json{op.mm.n} : json::array()});
        break;
      case OpKind::kLoss: push("aten::cross_entropy_loss", {x, {x[0]}}); break;
      default:
        if (op.is_view) push("aten::flatten", {x});
        break;
    }
  }
  json doc = {{"schemaVersion", 1}, {"traceEvents", ev}};
  doc["traceEvents"].push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#3"}, {"pid", 1},
                                {"tid", 1}, {"ts", 0}, {"dur", ts + 10}});
  return doc;
}

class TraceRoundTrip : public test::ScratchDirTest {};

TEST_F(TraceRoundTrip, ResNet50TraceIsResNet50) {
  const Graph zoo = find_zoo_model("resnet50").build({32, 0});
  for (bool concrete : {true, false}) {
    const auto path = dir_ / (concrete ? "resnet50_concrete.json" : "resnet50_shapes_only.json");
    test::write_text(path, trace_of(zoo, concrete).dump());
    const ModelSource m = model_from_trace(path.string());
    EXPECT_EQ(m.natural_batch, 32);
    EXPECT_TRUE(m.uncosted.empty()) << m.uncosted.front();
    const Graph g = m.build({32, 0});
    EXPECT_EQ(g.params(), 25'557'032) << (concrete ? "with" : "without") << " Concrete Inputs";
    PredictRequest r;
    r.gpu = "v100-sxm2-16gb";
    r.batch = 64;  // another batch than the traced one
    r.model = "resnet50";
    const double zoo_ms = predict(r).step_us;
    r.model = path.string();
    const double trace_ms = predict(r).step_us;
    // Max pooling without Concrete Inputs comes back as a 2x2 window (the size ratio): a few microseconds.
    EXPECT_NEAR(trace_ms / zoo_ms, 1.0, 0.01) << (concrete ? "with" : "without") << " Concrete Inputs";
  }
}

}  // namespace
