#include "import/config_csv.h"

// fast-cpp-csv-parser copies the file name with strncpy; GCC flags the bounded copy after inlining.
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>

#include <filesystem>

#include "core/error.h"

namespace perfcast {

const std::vector<std::string>& config_columns() {
  static const std::vector<std::string> cols{"gpu",    "model",        "runtime", "mode",          "precision", "batch",
                                             "seq",    "n_gpus",       "interconnect", "data", "optimizer_step"};
  return cols;
}

std::vector<ConfigRow> read_config_csv(const std::filesystem::path& path, bool with_measurements) {
  if (!std::filesystem::is_regular_file(path)) throw InputError("cannot read configurations file '" + path.string() + "'");
  std::vector<ConfigRow> rows;
  try {
    io::CSVReader<13, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>> in(path.string());
    in.read_header(io::ignore_extra_column | io::ignore_missing_column, "gpu", "model", "runtime", "mode", "precision",
                   "batch", "seq", "n_gpus", "interconnect", "data", "optimizer_step", "metric", "value");
    for (const char* required : {"gpu", "model"})
      if (!in.has_column(required))
        throw InputError("configurations file '" + path.string() + "' has no '" + required + "' column");
    ConfigRow r;
    std::string value;
    while (in.read_row(r.gpu, r.model, r.runtime, r.mode, r.precision, r.batch, r.seq, r.n_gpus, r.interconnect,
                       r.data, r.optimizer_step, r.metric, value)) {
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
    }
  } catch (const io::error::base& e) {
    throw InputError("malformed configurations file: " + std::string(e.what()));
  }
  return rows;
}

}  // namespace perfcast
