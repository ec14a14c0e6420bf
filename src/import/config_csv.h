// Rows of a configurations CSV (the columns of shared/validation/published.csv). Measured columns are read
// only on request (validation); prediction never sees them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace perfcast {

struct ConfigRow {
  int line = 0;  // 1-based line in the file
  std::string gpu, model, runtime, mode, precision, batch, seq, n_gpus, interconnect, data, optimizer_step;
  std::string metric;                  // only when read with measurements
  std::optional<double> measured;      // only when read with measurements
};

// The columns every configurations file carries, in output order.
const std::vector<std::string>& config_columns();

// InputError naming the file and line on a missing file, a missing required column or a malformed row.
std::vector<ConfigRow> read_config_csv(const std::filesystem::path& path, bool with_measurements);

}  // namespace perfcast
