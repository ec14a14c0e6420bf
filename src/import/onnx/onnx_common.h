// Shared pieces of the ONNX importer: tensor-type and attribute helpers, small constant values and the Value a
// tensor name stands for while a graph is built.
#pragma once

#ifdef PERFCAST_HAVE_ONNX

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "graph/builder.h"

namespace perfcast::onnx_import {

namespace ox = ::onnx;
using Shape = std::vector<std::int64_t>;

// ---------------------------------------------------------------------------------------------- small helpers

// Number of elements of a shape (1 for a scalar); InputError when the product overflows 64 bits.
std::int64_t numel(const Shape& s);
// A shape as "[d0,d1,...]" for messages.
std::string shape_text(const Shape& s);
// True for the floating-point ONNX element types (float8 and float4 variants included).
bool is_float_type(int t);
// Integer types quantized weights use (int8/uint8 and the 4-bit types).
bool is_weight_int_type(int t);
// True for the ONNX integer element types.
bool is_int_type(int t);
// Bytes per element of an ONNX element type (1 for unknown and sub-byte types).
int elem_bytes(int t);
// The attribute `name` of a node, or nullptr.
const ox::AttributeProto* find_attr(const ox::NodeProto& n, std::string_view name);
// An integer attribute, `def` when absent.
std::int64_t attr_int(const ox::NodeProto& n, std::string_view name, std::int64_t def);
// An integer-list attribute, empty when absent.
std::vector<std::int64_t> attr_ints(const ox::NodeProto& n, std::string_view name);
// A string attribute, `def` when absent.
std::string attr_string(const ox::NodeProto& n, std::string_view name, std::string def);
// "node 'name' (OpType)" for messages.
std::string node_label(const ox::NodeProto& n);
// The op type as reported in notes: custom domains keep their prefix.
std::string qualified_type(const ox::NodeProto& n);
// True when a node carries a graph attribute (If, Loop, Scan).
bool has_subgraph(const ox::NodeProto& n);
// A possibly negative axis made non-negative for a tensor of `rank`.
std::int64_t norm_axis(std::int64_t axis, std::size_t rank);
// Input positions that never hold learned parameters (shapes, axes, indices, quantization scales, running
// statistics, initial states).
bool non_learned_input(const std::string& op, int index);

// ---------------------------------------------------------------------------------------------- constants

// Values of a small constant tensor (shape arithmetic needs them; weights keep only their shape).
struct ConstData {
  bool real = false;
  std::vector<std::int64_t> i;
  std::vector<double> f;
  std::size_t size() const { return real ? f.size() : i.size(); }
  double at(std::size_t k) const { return real ? f[k] : static_cast<double>(i[k]); }
  std::int64_t iat(std::size_t k) const { return real ? static_cast<std::int64_t>(f[k]) : i[k]; }
  std::vector<std::int64_t> ints() const {
    std::vector<std::int64_t> out(size());
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = iat(k);
    return out;
  }
};

constexpr std::int64_t kMaxConstElems = 1 << 16;

// The values of a small initializer or Constant tensor, nullopt when it is large, external or of another type.
std::optional<ConstData> tensor_data(const ox::TensorProto& t);

// ---------------------------------------------------------------------------------------------- values

// What a tensor name stands for while building: an activation (output of op `id`, -1 = graph input) or a
// constant (folded; `roots` are the initializers it derives from, for parameter counting).
struct Value {
  bool is_const = false;
  int id = -1;
  Shape shape;
  int dtype = ox::TensorProto::FLOAT;
  std::optional<ConstData> data;
  std::vector<int> roots;
  Tensor tensor() const { return Tensor{id, shape}; }
};

// An initializer or Constant-node tensor that may hold learned parameters.
struct Root {
  std::string name;
  std::int64_t elems = 0;
  int dtype = 0;
  std::size_t rank = 0;
};
}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
