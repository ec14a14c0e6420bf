// The importer's own shape rules: broadcasting and convolution/pooling windows (GraphBuild::rule_shapes, the
// per-op fallback for outputs ONNX shape inference leaves open, is defined in onnx_shape_rules.cpp).
#pragma once

#ifdef PERFCAST_HAVE_ONNX

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "import/onnx/onnx_common.h"

namespace perfcast::onnx_import {

// The numpy-style broadcast of several shapes, nullopt when they are incompatible.
std::optional<Shape> broadcast(const std::vector<Shape>& shapes);
// Output spatial size of a convolution or pooling window along one axis (ONNX rules).
std::int64_t window_out(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d, std::int64_t pb,
                        std::int64_t pe, const std::string& auto_pad, bool ceil_mode);
// Padding at the start of one axis, after auto_pad.
std::int64_t pad_begin(std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t s, std::int64_t d,
                       std::int64_t explicit_pad, const std::string& auto_pad);

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
