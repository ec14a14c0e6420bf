#include "import/config_csv.h"

// fast-cpp-csv-parser copies the file name with strncpy; GCC flags the bounded copy after inlining.
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>

#include <filesystem>
#include <regex>

#include "core/error.h"

namespace perfcast {

const std::vector<std::string>& config_columns() {
  static const std::vector<std::string> cols{"gpu",    "model",        "runtime", "mode",          "precision", "batch",
                                             "seq",    "n_gpus",       "interconnect", "data", "optimizer_step",
                                             "runtime_version"};
  return cols;
}

std::string runtime_version_in_notes(const std::string& notes) {
  static const std::regex patterns[] = {
      std::regex(R"((?:TensorFlow|PyTorch|MXNet|TensorRT)\s+v?(\d+\.\d+(?:\.\d+)?))"),
      std::regex(R"(TF in log:\s*(\d+\.\d+))"),
  };
  std::smatch m;
  for (const auto& re : patterns)
    if (std::regex_search(notes, m, re)) return m[1].str();
  static const std::regex system_tag(R"(TF(\d)_(\d+))");  // lambdal system names: ..._TF2_3
  if (std::regex_search(notes, m, system_tag)) return m[1].str() + "." + m[2].str();
  return "";
}

std::vector<ConfigRow> read_config_csv(const std::filesystem::path& path, bool with_measurements) {
  if (!std::filesystem::is_regular_file(path)) throw InputError("cannot read configurations file '" + path.string() + "'");
  std::vector<ConfigRow> rows;
  try {
    io::CSVReader<15, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>> in(path.string());
    in.read_header(io::ignore_extra_column | io::ignore_missing_column, "gpu", "model", "runtime", "mode", "precision",
                   "batch", "seq", "n_gpus", "interconnect", "data", "optimizer_step", "metric", "value",
                   "runtime_version", "notes");
    for (const char* required : {"gpu", "model"})
      if (!in.has_column(required))
        throw InputError("configurations file '" + path.string() + "' has no '" + required + "' column");
    ConfigRow r;
    std::string value;
    while (in.read_row(r.gpu, r.model, r.runtime, r.mode, r.precision, r.batch, r.seq, r.n_gpus, r.interconnect,
                       r.data, r.optimizer_step, r.metric, value, r.runtime_version, r.notes)) {
      if (r.runtime_version.empty()) r.runtime_version = runtime_version_in_notes(r.notes);
      r.line = static_cast<int>(in.get_file_line());
      r.measured.reset();
      if (with_measurements && !value.empty()) {
        try {
          r.measured = std::stod(value);
        } catch (const std::exception&) {
          throw InputError(path.string() + " line " + std::to_string(r.line) + ": measured value '" + value +
                           "' is not a number");
        }
      }
      if (!with_measurements) r.metric.clear();
      rows.push_back(r);
      r = ConfigRow{};  // columns missing from the file are not assigned by read_row: start each row empty
    }
  } catch (const io::error::base& e) {
    throw InputError("malformed configurations file: " + std::string(e.what()));
  }
  return rows;
}

}  // namespace perfcast
