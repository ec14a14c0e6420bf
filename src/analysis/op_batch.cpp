#include "analysis/op_batch.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "analysis/single_op.h"
#include "core/echoed_values.h"
#include "core/error.h"

namespace perfcast {

namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.push_back(cur), cur.clear();
    else if (c != '\r') cur += c;
  }
  out.push_back(cur);
  return out;
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return o + "\"";
}

std::int64_t int_field(const std::map<std::string, std::string>& row, const std::string& key, std::int64_t fallback) {
  const auto it = row.find(key);
  if (it == row.end() || it->second.empty()) return fallback;
  std::int64_t v = 0;
  const auto r = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (r.ec != std::errc() || r.ptr != it->second.data() + it->second.size())
    throw InputError(key + " is not an integer: '" + it->second.substr(0, 40) + "'");
  return v;
}

std::string text(const std::map<std::string, std::string>& row, const std::string& key, const std::string& fallback) {
  const auto it = row.find(key);
  return it == row.end() || it->second.empty() ? fallback : it->second;
}

// a_trans / b_trans: N or T (or empty), checked and passed through; the model costs either layout the same.
void check_trans(const std::map<std::string, std::string>& row, const std::string& key) {
  const std::string v = text(row, key, "N");
  if (v != "N" && v != "n" && v != "T" && v != "t")
    throw InputError(key + " must be N or T, got '" + v.substr(0, 20) + "'");
}

}  // namespace

OpBatchResult predict_op_configs(const std::string& csv_text) {
  std::istringstream in(csv_text);
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) break;
  }
  header = split(line);
  // A column a few edits from one the reader takes ("precison") would be passed through and the rows costed at
  // that setting's default: an error naming it. Other extra columns (a measured time, a kernel name) pass through.
  static const std::vector<std::string> known{
      "gpu",    "op",     "precision", "direction", "m",        "n",        "k",        "a_trans", "b_trans",
      "batch_count", "conv_n", "conv_c", "conv_h", "conv_w", "conv_k", "conv_r", "conv_s", "pad_h",
      "pad_w",  "stride_h", "stride_w", "rows",   "cols",     "function", "runtime", "conv_algo",
      "conv_d", "conv_t", "pad_d", "stride_d"};
  for (const auto& name : header) {
    if (name.empty() || std::find(known.begin(), known.end(), name) != known.end()) continue;
    const std::string guess = nearest(name, known);
    if (!guess.empty() && name.size() >= 5)  // shorter names (role, url) are too near too many columns
      throw InputError("op --configs: unknown column '" + name.substr(0, 40) + "'; did you mean '" + guess + "'?");
  }
  for (const char* need : {"gpu", "op"})
    if (std::find(header.begin(), header.end(), need) == header.end())
      throw InputError(std::string("op --configs: the header has no '") + need + "' column");
  OpBatchResult res;
  std::ostringstream out;
  out << line << ",predicted_us,algorithm,bound,status\n";
  std::map<std::string, OpContext> contexts;
  std::size_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const auto f = split(line);
    std::string predicted, algorithm, bound, status = "ok";
    try {
      if (f.size() != header.size())
        throw InputError(fmt::format("{} fields, the header has {}", f.size(), header.size()));
      std::map<std::string, std::string> row;
      for (std::size_t i = 0; i < header.size(); ++i) row[header[i]] = f[i];
      OpSpec s;
      s.op = text(row, "op", "");
      s.direction = text(row, "direction", "fwd");
      s.m = int_field(row, "m", 0), s.n = int_field(row, "n", 0), s.k = int_field(row, "k", 0);
      s.batch_count = int_field(row, "batch_count", 1);
      check_trans(row, "a_trans"), check_trans(row, "b_trans");
      s.conv_n = int_field(row, "conv_n", 0), s.conv_c = int_field(row, "conv_c", 0);
      s.conv_h = int_field(row, "conv_h", 0), s.conv_w = int_field(row, "conv_w", 0);
      s.conv_k = int_field(row, "conv_k", 0), s.conv_r = int_field(row, "conv_r", 0), s.conv_s = int_field(row, "conv_s", 0);
      s.pad_h = int_field(row, "pad_h", 0), s.pad_w = int_field(row, "pad_w", 0);
      s.stride_h = int_field(row, "stride_h", 1), s.stride_w = int_field(row, "stride_w", 1);
      s.conv_d = int_field(row, "conv_d", 0), s.conv_t = int_field(row, "conv_t", 0);
      s.pad_d = int_field(row, "pad_d", 0), s.stride_d = int_field(row, "stride_d", 1);
      s.rows = int_field(row, "rows", 0), s.cols = int_field(row, "cols", 0);
      s.function = text(row, "function", "add");
      const bool training = s.direction != "fwd";
      const std::string conv_algo = text(row, "conv_algo", "");
      check_conv_algo(conv_algo);
      const std::string key = text(row, "gpu", "") + "|" + text(row, "runtime", "pytorch") + "|" +
                              text(row, "precision", "fp32") + (training ? "|train" : "") + "|" + conv_algo;
      auto it = contexts.find(key);
      if (it == contexts.end()) {
        OpContext c = op_context(text(row, "gpu", ""), text(row, "runtime", "pytorch"), text(row, "precision", "fp32"),
                                 0, training);
        c.conv_autotune = conv_autotune_for(conv_algo, c.runtime);
        it = contexts.emplace(key, std::move(c)).first;
      }
      const OpPrediction p = predict_op(s, it->second);
      predicted = fmt::format("{:.2f}", p.cost.time_us);
      algorithm = std::string(p.cost.algorithm);
      if (p.cost.tile_m > 0) algorithm += fmt::format(" {}x{}", p.cost.tile_m, p.cost.tile_n);
      if (p.cost.split_k > 1) algorithm += fmt::format(" split-k {}", p.cost.split_k);
      bound = std::string(bound_name(p.cost.bound));
      ++res.ok;
    } catch (const UnsupportedError& e) {
      status = std::string("unsupported: ") + clip_echoed_values(e.what());
      ++res.failed;
    } catch (const InputError& e) {
      status = fmt::format("error: line {}: {}", line_no, clip_echoed_values(e.what()));
      ++res.failed;
    }
    out << line << "," << predicted << "," << csv_escape(algorithm) << "," << bound << "," << csv_escape(status) << "\n";
  }
  res.csv = out.str();
  return res;
}

}  // namespace perfcast
