#include "import/serving_csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>

#include "core/error.h"
#include "core/limits.h"
#include "import/utf8_bom.h"

namespace perfcast {

namespace {

// One CSV record (RFC 4180 quoting: "" inside quotes is a quote); fields may not span lines.
std::vector<std::string> split_record(const std::string& line, bool* ok) {
  std::vector<std::string> out(1);
  bool quoted = false;
  *ok = true;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        out.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.emplace_back();
    } else if (ch != '\r') {
      out.back() += ch;
    }
  }
  if (quoted) *ok = false;
  return out;
}

}  // namespace

std::vector<ServingRow> read_serving_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read serving measurements '" + path.string() + "'");
  std::string line;
  if (!std::getline(in, line)) throw InputError("'" + path.string() + "' is empty");
  line = std::string(without_utf8_bom(line));
  bool ok = true;
  const std::vector<std::string> header = split_record(line, &ok);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  const std::vector<std::string> required{"engine", "gpu", "model", "precision", "tp", "pp", "input_len", "output_len",
                                          "metric", "measured"};
  for (const auto& c : required)
    if (!col.count(c)) throw InputError("'" + path.string() + "' has no column '" + c + "'");
  std::vector<ServingRow> rows;
  int n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line == "\r") continue;
    if (static_cast<std::int64_t>(rows.size()) >= input_limits().max_config_rows)
      throw InputError("'" + path.string() + "' has more rows than data/limits.toml max_config_rows");
    const std::vector<std::string> f = split_record(line, &ok);
    if (!ok || f.size() != header.size())
      throw InputError("'" + path.string() + "' line " + std::to_string(n) + ": " + std::to_string(f.size()) +
                       " fields, the header has " + std::to_string(header.size()));
    auto get = [&](const char* name) { return col.count(name) ? f[col.at(name)] : std::string(); };
    ServingRow r;
    r.line = n;
    r.source = get("source");
    r.url = get("url");
    r.engine = get("engine");
    r.engine_version = get("engine_version");
    r.gpu = get("gpu");
    r.model = get("model");
    r.precision = get("precision");
    r.kv_precision = get("kv_precision");
    r.tp = get("tp");
    r.pp = get("pp");
    r.input_len = get("input_len");
    r.output_len = get("output_len");
    r.length_dist = get("length_dist");
    r.num_requests = get("num_requests");
    r.request_rate = get("request_rate");
    r.max_batch = get("max_batch");
    r.metric = get("metric");
    r.notes = get("notes");
    const std::string m = get("measured");
    const auto [ptr, ec] = std::from_chars(m.data(), m.data() + m.size(), r.measured);
    if (ec != std::errc() || ptr != m.data() + m.size() || !(r.measured > 0) || !std::isfinite(r.measured))
      throw InputError("'" + path.string() + "' line " + std::to_string(n) + ": measured must be a positive number, got '" +
                       m + "'");
    rows.push_back(std::move(r));
  }
  return rows;
}

bool is_serving_measurements(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  line = std::string(without_utf8_bom(line));
  bool ok = true;
  const std::vector<std::string> header = split_record(line, &ok);
  auto has = [&](const char* c) { return std::find(header.begin(), header.end(), c) != header.end(); };
  return has("input_len") && has("output_len") && has("engine");
}

}  // namespace perfcast
