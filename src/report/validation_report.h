// Validation results as markdown (docs/validation.md) and JSON; batch predictions as CSV.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/batch_predict.h"
#include "analysis/validate.h"

namespace perfcast {

// The report as markdown; `listings` false leaves out the tables of every row, precision pair and memory row (the
// statistics only: docs/validation.md's pooled section).
std::string validation_markdown(const ValidationReport& rep, bool listings = true);
nlohmann::json validation_json(const ValidationReport& rep);
std::string validation_summary_text(const ValidationReport& rep);
// `perfcast validate --html`: the summary, error tables by GPU, model and runtime, and measured against predicted
// with the 2x band (report/chart_page.h).
std::string validation_html(const ValidationReport& rep);

// The input columns plus predicted_samples_per_s, predicted_tokens_per_s, predicted_low, predicted_high (the
// prediction interval of the headline throughput), step_ms, memory_bytes, fits,
// bottleneck, status.
void write_predictions_csv(const std::vector<RowResult>& results, std::ostream& out);
// The same CSV a row at a time (predict --configs streams it): the header line, then one line per result.
void write_predictions_csv_header(std::ostream& out);
void write_prediction_csv_row(const RowResult& r, std::ostream& out);

}  // namespace perfcast
