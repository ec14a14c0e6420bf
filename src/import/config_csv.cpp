#include "import/config_csv.h"

// fast-cpp-csv-parser copies the file name with strncpy; GCC flags the bounded copy after inlining.
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "core/limits.h"

namespace perfcast {

const std::vector<std::string>& config_columns() {
  static const std::vector<std::string> cols{
      "gpu",          "model",    "runtime",         "mode",       "precision",      "batch",
      "seq",          "n_gpus",   "interconnect",    "data",       "optimizer_step", "runtime_version",
      "layout",       "host",     "host_cores",      "gpu_decode", "prefetch",       "context",
      "kv_precision", "strategy", "fused_optimizer", "grad_accum", "attention", "parallel", "optimizer", "checkpointing",
      "seq_mean", "conv_algo", "amp_o2", "harness", "embedding_precision", "llm_code", "instances", "cores", "numa_pages"};
  return cols;
}

namespace {

// A model file named by a relative path that does not exist from the working folder is looked up from the
// configurations file's folder and its parents, so that a file can name configs by repository path
// (data/validation/models/x.json) and be read from anywhere.
std::string model_path_near(const std::filesystem::path& csv, const std::string& model) {
  namespace fs = std::filesystem;
  const bool file = model.ends_with(".json") || model.ends_with(".json.gz") || model.ends_with(".onnx");
  if (!file || model.empty() || fs::path(model).is_absolute()) return model;
  std::error_code ec;
  if (fs::exists(model, ec)) return model;
  for (fs::path dir = fs::absolute(csv, ec).parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / model, ec)) return (dir / model).string();
    if (dir == dir.root_path()) break;
  }
  return model;
}

// A header column that is not one the reader knows but is a few edits from one ("precison", "modle") is a typo
// that would otherwise be ignored silently and the row predicted with that setting's default: an error naming
// it. Other extra columns (source, url, notes of a measurement file) stay allowed.
void check_header_typos(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::string header(64 * 1024, '\0');  // a header longer than this is the CSV reader's error, not this check's
  f.read(header.data(), static_cast<std::streamsize>(header.size()));
  header.resize(static_cast<std::size_t>(f.gcount()));
  header.resize(std::min(header.find('\n'), header.size()));
  const std::vector<std::string> known(kReaderColumns.begin(), kReaderColumns.end());
  // Columns of the serving measurement files (llm_serving.csv), which their own reader takes: not typos.
  static const std::vector<std::string> other{"engine", "engine_version", "tp", "pp", "request_rate", "input_len",
                                              "output_len", "num_requests", "length_dist", "max_batch", "url"};
  std::size_t start = 0;
  while (start <= header.size()) {
    std::size_t end = header.find(',', start);
    if (end == std::string::npos) end = header.size();
    std::string name = header.substr(start, end - start);
    const auto not_space = [](char c) { return c != ' ' && c != '\t' && c != '\r' && c != '"'; };
    name.erase(name.begin(), std::find_if(name.begin(), name.end(), not_space));
    name.erase(std::find_if(name.rbegin(), name.rend(), not_space).base(), name.end());
    if (!name.empty() && std::find(known.begin(), known.end(), name) == known.end() &&
        std::find(other.begin(), other.end(), name) == other.end()) {
      const std::string guess = nearest(name, known);
      // Names under 5 characters (role, url, tp) are a couple of edits from too many columns to call a typo.
      if (!guess.empty() && name.size() >= 5)
        throw InputError("configurations file '" + path.string() + "' has an unknown column '" + name.substr(0, 40) +
                         "'; did you mean '" + guess + "'?");
    }
    start = end + 1;
  }
}

}  // namespace

void for_each_config_row(const std::filesystem::path& path, bool with_measurements,
                         const std::function<void(ConfigRow&&)>& fn) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError("cannot read configurations file '" + path.string() + "': is a directory, not a CSV file");
  if (!std::filesystem::is_regular_file(path)) throw InputError("cannot read configurations file '" + path.string() + "'");
  check_header_typos(path);
  // A line with nothing but blanks (an editor's trailing newlines, a spreadsheet's empty row) is no row. The reader
  // reports it as a row that lacks columns; a second pass over the file, kept in step, tells the two apart (lines
  // the reader has already taken, so each is within its line-length limit).
  std::ifstream side(path);
  std::uint64_t side_line = 0;
  std::string side_text;
  const auto blank_line = [&](std::uint64_t n) {
    while (side_line < n && std::getline(side, side_text)) ++side_line;
    return side_line == n && std::all_of(side_text.begin(), side_text.end(),
                                         [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
  };
  try {
    io::CSVReader<kReaderColumns.size(), io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>> in(path.string());
    std::apply([&](auto... names) { in.read_header(io::ignore_extra_column | io::ignore_missing_column, names...); },
               kReaderColumns);
    for (const char* required : {"gpu", "model"})
      if (!in.has_column(required))
        throw InputError("configurations file '" + path.string() + "' has no '" + required + "' column");
    ConfigRow r;
    std::string value, memory_value;
    std::int64_t count = 0;  // rows handed on (the error rows of the reader included only in the limit below)
    // A row the reader cannot split (a column too many or too few, an unclosed quote) is that row's error, kept
    // with its line; the reader has consumed the line, so the next row reads on.
    const auto next_row = [&]() {
      for (;;) {
        const auto before = in.get_file_line();
        try {
          return in.read_row(r.gpu, r.model, r.runtime, r.mode, r.precision, r.batch, r.seq, r.n_gpus, r.interconnect,
                             r.data, r.optimizer_step, r.metric, value, r.runtime_version, r.layout, r.host,
                             r.host_cores, r.gpu_decode, r.prefetch, r.context, r.kv_precision, r.strategy,
                             r.fused_optimizer, r.grad_accum, r.attention, r.parallel, r.notes, r.source,
                             r.optimizer, r.checkpointing, memory_value, r.memory_measure, r.oom, r.seq_mean,
                             r.conv_algo, r.amp_o2, r.harness, r.embedding_precision, r.llm_code, r.instances,
                             r.cores, r.numa_pages);
        } catch (const io::error::too_many_columns&) {
          r = ConfigRow{};
          r.error = "the row has more columns than the header";
        } catch (const io::error::too_few_columns&) {
          r = ConfigRow{};
          if (in.get_file_line() != before && blank_line(in.get_file_line())) continue;
          r.error = "the row has fewer columns than the header";
        } catch (const io::error::escaped_string_not_closed&) {
          r = ConfigRow{};
          r.error = "a quoted field is not closed";
        }
        if (in.get_file_line() == before) throw InputError("malformed configurations file '" + path.string() + "'");
        r.line = static_cast<int>(in.get_file_line());
        r.error = "line " + std::to_string(r.line) + ": " + r.error;
        fn(std::move(r));
        r = ConfigRow{};
      }
    };
    while (next_row()) {
      r.line = static_cast<int>(in.get_file_line());
      r.measured.reset();
      if (with_measurements && !value.empty()) {
        try {
          r.measured = std::stod(value);
        } catch (const std::exception&) {
        }
        if (!r.measured || !std::isfinite(*r.measured) || *r.measured <= 0)
          throw InputError(path.string() + " line " + std::to_string(r.line) + ": measured value '" +
                           value.substr(0, 40) + "' is not a positive number");
      }
      r.memory_mib.reset();
      if (with_measurements && !memory_value.empty()) {
        try {
          r.memory_mib = std::stod(memory_value);
        } catch (const std::exception&) {
        }
        if (!r.memory_mib || !std::isfinite(*r.memory_mib) || *r.memory_mib <= 0)
          throw InputError(path.string() + " line " + std::to_string(r.line) + ": memory_mib '" +
                           memory_value.substr(0, 40) + "' is not a positive number");
      }
      if (!with_measurements) {
        r.metric.clear();
        r.memory_measure.clear();
        r.oom.clear();
      }
      r.model = model_path_near(path, r.model);
      if (++count > input_limits().max_config_rows)
        throw InputError("configurations file '" + path.string() + "' has more than " +
                         std::to_string(input_limits().max_config_rows) + " rows (data/limits.toml max_config_rows)");
      fn(std::move(r));
      r = ConfigRow{};  // columns missing from the file are not assigned by read_row: start each row empty
    }
  } catch (io::error::base& e) {
    // Errors in the header carry no line number yet (the library reports "line -1"): the header is line 1.
    if (auto* at = dynamic_cast<io::error::with_file_line*>(&e); at && at->file_line < 1) at->set_file_line(1);
    throw InputError("malformed configurations file: " + std::string(e.what()));
  }
}

std::vector<ConfigRow> read_config_csv(const std::filesystem::path& path, bool with_measurements) {
  std::vector<ConfigRow> rows;
  for_each_config_row(path, with_measurements, [&](ConfigRow&& r) { rows.push_back(std::move(r)); });
  return rows;
}

std::string setup_key(const ConfigRow& r, const std::vector<std::string_view>& skip) {
  // The row's text of each reader column a key can hold.
  const std::pair<std::string_view, const std::string*> fields[] = {
      {"gpu", &r.gpu},
      {"model", &r.model},
      {"runtime", &r.runtime},
      {"mode", &r.mode},
      {"precision", &r.precision},
      {"batch", &r.batch},
      {"seq", &r.seq},
      {"n_gpus", &r.n_gpus},
      {"interconnect", &r.interconnect},
      {"data", &r.data},
      {"optimizer_step", &r.optimizer_step},
      {"runtime_version", &r.runtime_version},
      {"layout", &r.layout},
      {"host", &r.host},
      {"host_cores", &r.host_cores},
      {"gpu_decode", &r.gpu_decode},
      {"prefetch", &r.prefetch},
      {"context", &r.context},
      {"kv_precision", &r.kv_precision},
      {"strategy", &r.strategy},
      {"fused_optimizer", &r.fused_optimizer},
      {"grad_accum", &r.grad_accum},
      {"attention", &r.attention},
      {"parallel", &r.parallel},
      {"optimizer", &r.optimizer},
      {"checkpointing", &r.checkpointing},
      {"seq_mean", &r.seq_mean},
      {"instances", &r.instances},
      {"cores", &r.cores},
      {"numa_pages", &r.numa_pages},
      {"conv_algo", &r.conv_algo},
      {"harness", &r.harness},
      {"llm_code", &r.llm_code},
      {"metric", &r.metric}};
  std::string k;
  for (const std::string_view name : kReaderColumns) {
    if (std::find(kSetupKeyExclusions.begin(), kSetupKeyExclusions.end(), name) != kSetupKeyExclusions.end() ||
        std::find(skip.begin(), skip.end(), name) != skip.end())
      continue;
    const auto f = std::find_if(std::begin(fields), std::end(fields), [&](const auto& x) { return x.first == name; });
    if (f == std::end(fields))
      throw std::logic_error("setup_key: reader column '" + std::string(name) + "' is neither in the key nor excluded");
    k += *f->second + "|";
  }
  return k;
}

}  // namespace perfcast
