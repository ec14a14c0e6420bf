// A prediction as JSON (stable keys for scripts) and as a text report for people.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "analysis/cloud.h"
#include "analysis/predict.h"
#include "report/messages.h"

namespace perfcast {

// `pue`: --pue for the facility energy; without it data/cloud/providers.toml's [default] (predict rents nothing).
nlohmann::json prediction_json(const Prediction& p, std::optional<double> pue = std::nullopt);

// The report for people, in English or Chinese. A configuration that does not fit in memory says "does not fit" where
// the throughput would be, and stops after the memory lines.
std::string prediction_text(const Prediction& p, Lang lang = Lang::kEn, int max_ops = 25,
                            std::optional<double> pue = std::nullopt);
// "perfcast prediction: <model> on <gpu> (...), <runtime> <mode> <precision>, batch N[, seq S]": the first line.
// The device a title names: its id, counted when the run spans several ("3 x gtx-1080-ti"), so that a throughput of
// three cards is not read as one card's.
std::string titled_device(const Prediction& p);
std::string prediction_title(const Prediction& p, Lang lang = Lang::kEn);
// "does not fit: needs X of Y" in `lang`.
std::string does_not_fit_text(const Prediction& p, Lang lang = Lang::kEn);

// A count as a JSON integer when it is whole (11, not 11.0), else as a number (0.5 kernels per step).
nlohmann::json count_json(double v);
// A byte or FLOP count as a JSON integer: the nearest one, where the model computes the count as an expectation
// (averaged sequence lengths, a fraction of a tensor resident, a caching allocator's rounding).
nlohmann::json rounded_count_json(double v);

// Human-readable byte count ("9.81 GiB").
std::string format_bytes(double bytes);

// A throughput in samples/s for a report line: one decimal ("194.5"), three significant digits below 1 ("0.0391"), so
// that a slow step (a long-sequence fine-tune, a whole generated sequence) does not print as "0.0 samples/s" beside its
// tokens/s.
std::string format_samples_per_s(double samples_per_s);
// "1 row", "2 rows".
std::string rows_text(std::size_t n);

// Which hardware a run's server energy counts (powered_hardware's rule), for a report line: "the share of 1 GPU of a
// dgx-a100 server's host" or "8 GPUs of whole instances (dgx-h100 server class), 7 of them idle at 84 W each".
std::string host_basis_text(const PoweredHardware& h, Lang lang = Lang::kEn);

// "tensorflow" or, when the request names a framework version, "tensorflow 2.3".
std::string runtime_label(const PredictRequest& r);

}  // namespace perfcast
