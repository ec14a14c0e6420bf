// Shared helpers of the ONNX importer: element types, attributes, node labels, constant tensor values.
#include "import/onnx/onnx_common.h"

#ifdef PERFCAST_HAVE_ONNX

#include <cstring>

namespace perfcast::onnx_import {

std::int64_t numel(const Shape& s) {
  std::int64_t p = 1;
  for (auto d : s)
    if (__builtin_mul_overflow(p, d, &p))
      throw InputError(fmt::format("a tensor of shape {} has more elements than 64 bits count", shape_text(s)));
  return p;
}

std::string shape_text(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ",")); }

bool is_float_type(int t) {
  return t == ox::TensorProto::FLOAT || t == ox::TensorProto::FLOAT16 || t == ox::TensorProto::DOUBLE ||
         t == ox::TensorProto::BFLOAT16 || (t >= 17 && t <= 20) || t == 23;  // FLOAT8 variants, FLOAT4E2M1
}
// Integer types quantized weights use (int8/uint8 and the 4-bit types).
bool is_weight_int_type(int t) {
  return t == ox::TensorProto::INT8 || t == ox::TensorProto::UINT8 || t == 21 || t == 22;
}
bool is_int_type(int t) {
  return t == ox::TensorProto::INT64 || t == ox::TensorProto::INT32 || t == ox::TensorProto::INT16 ||
         t == ox::TensorProto::INT8 || t == ox::TensorProto::UINT8 || t == ox::TensorProto::UINT16 ||
         t == ox::TensorProto::UINT32 || t == ox::TensorProto::UINT64;
}
int elem_bytes(int t) {
  switch (t) {
    case ox::TensorProto::DOUBLE:
    case ox::TensorProto::INT64:
    case ox::TensorProto::UINT64:
    case ox::TensorProto::COMPLEX64:
      return 8;
    case ox::TensorProto::FLOAT:
    case ox::TensorProto::INT32:
    case ox::TensorProto::UINT32:
      return 4;
    case ox::TensorProto::FLOAT16:
    case ox::TensorProto::BFLOAT16:
    case ox::TensorProto::INT16:
    case ox::TensorProto::UINT16:
      return 2;
    case ox::TensorProto::COMPLEX128:
      return 16;
    default:
      return 1;
  }
}

const ox::AttributeProto* find_attr(const ox::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
std::int64_t attr_int(const ox::NodeProto& n, std::string_view name, std::int64_t def) {
  const auto* a = find_attr(n, name);
  return a ? a->i() : def;
}
std::vector<std::int64_t> attr_ints(const ox::NodeProto& n, std::string_view name) {
  const auto* a = find_attr(n, name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}
std::string attr_string(const ox::NodeProto& n, std::string_view name, std::string def) {
  const auto* a = find_attr(n, name);
  return a ? a->s() : def;
}

std::string node_label(const ox::NodeProto& n) {
  const std::string& name = n.name().empty() ? (n.output_size() > 0 ? n.output(0) : std::string("?")) : n.name();
  return fmt::format("node '{}' ({})", name, n.op_type());
}

// The op type as reported in notes: custom domains keep their prefix.
std::string qualified_type(const ox::NodeProto& n) {
  if (n.domain().empty() || n.domain() == "ai.onnx") return n.op_type();
  return n.domain() + "." + n.op_type();
}

bool has_subgraph(const ox::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.type() == ox::AttributeProto::GRAPH || a.type() == ox::AttributeProto::GRAPHS) return true;
  return false;
}

std::int64_t norm_axis(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

namespace {

template <typename T>
void read_raw(const std::string& raw, std::size_t count, std::vector<T>& out) {
  out.resize(count);
  std::memcpy(out.data(), raw.data(), count * sizeof(T));
}

}  // namespace

std::optional<ConstData> tensor_data(const ox::TensorProto& t) {
  if (t.data_location() == ox::TensorProto::EXTERNAL) return std::nullopt;
  Shape dims(t.dims().begin(), t.dims().end());
  const std::int64_t n = numel(dims);
  if (n < 0 || n > kMaxConstElems) return std::nullopt;
  const auto count = static_cast<std::size_t>(n);
  ConstData d;
  const std::string& raw = t.raw_data();
  const bool has_raw = t.has_raw_data();
  auto raw_ok = [&](std::size_t width) { return has_raw && raw.size() == count * width; };
  switch (t.data_type()) {
    case ox::TensorProto::FLOAT: {
      d.real = true;
      std::vector<float> v;
      if (raw_ok(4)) read_raw(raw, count, v);
      else if (static_cast<std::size_t>(t.float_data_size()) == count) v.assign(t.float_data().begin(), t.float_data().end());
      else return std::nullopt;
      d.f.assign(v.begin(), v.end());
      return d;
    }
    case ox::TensorProto::DOUBLE: {
      d.real = true;
      if (raw_ok(8)) read_raw(raw, count, d.f);
      else if (static_cast<std::size_t>(t.double_data_size()) == count) d.f.assign(t.double_data().begin(), t.double_data().end());
      else return std::nullopt;
      return d;
    }
    case ox::TensorProto::INT64: {
      if (raw_ok(8)) read_raw(raw, count, d.i);
      else if (static_cast<std::size_t>(t.int64_data_size()) == count) d.i.assign(t.int64_data().begin(), t.int64_data().end());
      else return std::nullopt;
      return d;
    }
    case ox::TensorProto::INT32: {
      std::vector<std::int32_t> v;
      if (raw_ok(4)) read_raw(raw, count, v);
      else if (static_cast<std::size_t>(t.int32_data_size()) == count) v.assign(t.int32_data().begin(), t.int32_data().end());
      else return std::nullopt;
      d.i.assign(v.begin(), v.end());
      return d;
    }
    case ox::TensorProto::BOOL:
    case ox::TensorProto::UINT8:
    case ox::TensorProto::INT8: {
      if (raw_ok(1)) {
        d.i.resize(count);
        for (std::size_t k = 0; k < count; ++k)
          d.i[k] = t.data_type() == ox::TensorProto::INT8 ? static_cast<std::int64_t>(static_cast<std::int8_t>(raw[k]))
                                                          : static_cast<std::int64_t>(static_cast<std::uint8_t>(raw[k]));
      } else if (static_cast<std::size_t>(t.int32_data_size()) == count) {
        d.i.assign(t.int32_data().begin(), t.int32_data().end());
      } else {
        return std::nullopt;
      }
      return d;
    }
    default:
      return std::nullopt;
  }
}

bool non_learned_input(const std::string& op, int index) {
  static const std::map<std::string, std::set<int>, std::less<>> kPositions{
      {"Reshape", {1}},        {"Expand", {1}},          {"Tile", {1}},          {"Slice", {1, 2, 3, 4}},
      {"Squeeze", {1}},        {"Unsqueeze", {1}},       {"Pad", {1, 2, 3}},     {"Resize", {1, 2, 3}},
      {"Upsample", {1}},       {"DequantizeLinear", {1, 2}}, {"QuantizeLinear", {1, 2}}, {"Clip", {1, 2}},
      {"Gather", {1}},         {"GatherElements", {1}},  {"GatherND", {1}},      {"ScatterND", {1}},
      {"ReduceMean", {1}},     {"ReduceSum", {1}},       {"ReduceMax", {1}},     {"ReduceMin", {1}},
      {"ReduceProd", {1}},     {"ReduceL2", {1}},        {"Split", {1}},         {"TopK", {1}},
      {"Where", {0}},          {"BatchNormalization", {3, 4}}, {"LSTM", {4, 5, 6}}, {"GRU", {4, 5}},
      {"RNN", {4, 5}},         {"Dropout", {1, 2}},      {"OneHot", {1, 2}},     {"ConstantOfShape", {0}},
      {"Range", {0, 1, 2}},    {"CumSum", {1}},          {"Trilu", {1}},         {"Mod", {1}},
  };
  const auto it = kPositions.find(op);
  return it != kPositions.end() && it->second.count(index) > 0;
}

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
