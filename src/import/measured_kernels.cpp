#include "import/measured_kernels.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "import/gzip_file.h"

namespace perfcast {

namespace {

// A measurement file is a few MB; the whole shared collection is 7 MB compressed.
constexpr std::size_t kMaxFileBytes = std::size_t{512} << 20;

// Splits one CSV line; fields in double quotes may hold commas (kernel signatures do).
std::vector<std::string_view> split_line(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i <= line.size()) {
    if (i < line.size() && line[i] == '"') {
      const std::size_t close = line.find('"', i + 1);
      const std::size_t end = close == std::string_view::npos ? line.size() : close;
      out.push_back(line.substr(i + 1, end - i - 1));
      i = line.find(',', end);
      if (i == std::string_view::npos) break;
      ++i;
      continue;
    }
    const std::size_t comma = line.find(',', i);
    const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
    out.push_back(line.substr(i, end - i));
    if (comma == std::string_view::npos) break;
    i = comma + 1;
  }
  return out;
}

std::optional<MeasuredOp> op_of(std::string_view name) {
  static const std::map<std::string_view, MeasuredOp> kOps = {
      {"bmm", MeasuredOp::kBmm},       {"linear", MeasuredOp::kLinear}, {"conv", MeasuredOp::kConv},
      {"add", MeasuredOp::kBinary},    {"mul", MeasuredOp::kBinary},    {"div", MeasuredOp::kBinary},
      {"pow", MeasuredOp::kBinary},    {"addu", MeasuredOp::kUnary},    {"mulu", MeasuredOp::kUnary},
      {"divu", MeasuredOp::kUnary},    {"powu", MeasuredOp::kUnary},    {"relu", MeasuredOp::kUnary},
      {"gelu", MeasuredOp::kUnary},    {"tanh", MeasuredOp::kUnary},    {"softmax", MeasuredOp::kSoftmax},
      {"ln", MeasuredOp::kLayerNorm}};
  const auto it = kOps.find(name);
  if (it == kOps.end()) return std::nullopt;
  return it->second;
}

std::int64_t to_int(std::string_view s, const std::string& path, std::size_t line) {
  std::int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || v < 0)
    throw InputError("measured kernels '" + path + "' line " + std::to_string(line) + ": not a count: '" +
                     std::string(s.substr(0, 40)) + "'");
  return v;
}

}  // namespace

std::string_view measured_op_name(MeasuredOp op) {
  static constexpr std::array<std::string_view, static_cast<int>(MeasuredOp::kCount)> kNames = {
      "bmm", "linear", "conv", "elementwise_binary", "elementwise_unary", "softmax", "layernorm"};
  return kNames[static_cast<int>(op)];
}

std::vector<MeasuredKernel> read_measured_kernels(const std::string& path) {
  const std::string text = read_maybe_gzip(path, kMaxFileBytes, "measured kernels");
  std::vector<MeasuredKernel> out;
  std::size_t pos = 0, line_no = 0;
  std::map<std::string, std::size_t> col;
  auto need = [&](const char* name) {
    const auto it = col.find(name);
    if (it == col.end()) throw InputError("measured kernels '" + path + "': no column '" + name + "'");
    return it->second;
  };
  std::size_t c_op = 0, c_lat = 0, c_dev = 0, c_kernel = 0;
  std::optional<std::size_t> c_kernels, c_grid_z, c_precision;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const auto f = split_line(line);
    if (col.empty()) {
      for (std::size_t i = 0; i < f.size(); ++i) col[std::string(f[i])] = i;
      c_op = need("OPName");
      c_lat = need("Latency");
      c_dev = need("Device");
      c_kernel = need("Kernel Name");
      if (col.count("Kernels")) c_kernels = col["Kernels"];
      if (col.count("Grid z")) c_grid_z = col["Grid z"];
      if (col.count("Precision")) c_precision = col["Precision"];
      continue;
    }
    if (f.size() != col.size())
      throw InputError("measured kernels '" + path + "' line " + std::to_string(line_no) + ": " +
                       std::to_string(f.size()) + " fields, the header has " + std::to_string(col.size()));
    const auto op = op_of(f[c_op]);
    if (!op) continue;
    MeasuredKernel k;
    k.op = *op;
    k.op_name = std::string(f[c_op]);
    k.device = std::string(f[c_dev]);
    if (c_precision) k.precision = std::string(f[*c_precision]);
    double ms = 0;
    const auto r = std::from_chars(f[c_lat].data(), f[c_lat].data() + f[c_lat].size(), ms);
    if (r.ec != std::errc() || !(ms > 0))
      throw InputError("measured kernels '" + path + "' line " + std::to_string(line_no) + ": bad latency");
    k.latency_us = ms * 1e3;
    k.kernel = std::string(f[c_kernel]);
    if (c_kernels) k.kernels = std::string(f[*c_kernels]);
    // A row whose call was not profiled (tools/device_session/sweep_to_neusight.py) has no grid: 0, as without the column.
    if (c_grid_z && !f[*c_grid_z].empty()) k.grid_z = to_int(f[*c_grid_z], path, line_no);
    auto get = [&](const char* name) { return to_int(f[need(name)], path, line_no); };
    switch (k.op) {
      case MeasuredOp::kBmm:
      case MeasuredOp::kLinear:
        k.b = get("B"), k.m = get("M"), k.n = get("N"), k.k = get("K");
        break;
      case MeasuredOp::kConv:
        k.b = get("B"), k.conv_c = get("Input_Channel"), k.conv_k = get("Output_Channel");
        k.conv_r = get("Kernel_Szie"), k.conv_hw = get("Input_Size"), k.conv_stride = get("Stride");
        k.conv_pad = get("Padding");
        break;
      default:
        k.b = get("B"), k.m = get("H");
        break;
    }
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<MeasuredKernel> read_measured_kernel_dir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw InputError("measured kernels: '" + dir + "' is not a folder");
  std::vector<std::string> files;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string p = it->path().string();
    if (it->is_regular_file(ec) && (p.ends_with(".csv") || p.ends_with(".csv.gz"))) files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  std::vector<MeasuredKernel> out;
  for (const auto& f : files) {
    auto part = read_measured_kernels(f);
    out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return out;
}

}  // namespace perfcast
