// Anchoring on the user's own measurement (issue 13): `--measured 350/s` or `--measured-step 120ms` makes the
// measured throughput the baseline; what-ifs (advise's strategies) scale from it by their predicted ratios, which
// travel better between setups than absolute numbers. Reports show the measurement beside the prediction.
#pragma once

#include <optional>
#include <string>

namespace perfcast {

struct Prediction;

struct Anchor {
  std::string given;             // the flag as the user wrote it
  double measured = 0;           // headline throughput measured: tokens/s for token models, else samples/s
  double predicted = 0;          // the model's headline throughput for the same configuration (0: does not fit)
  std::string unit;              // "samples_per_s" or "tokens_per_s"
  double factor() const { return predicted > 0 ? measured / predicted : 0; }  // measured / predicted
  // A predicted cost per sample (or per million) at the measured throughput: a rented hour costs the same whatever
  // its throughput, so the cost scales as predicted / measured. nullopt without a cost or a usable factor.
  std::optional<double> anchored_cost(const std::optional<double>& usd) const {
    const double f = factor();
    return usd && f > 0 ? std::optional<double>(*usd / f) : std::nullopt;
  }
};

// The anchor for prediction `p` from --measured ("350", "350/s") and --measured-step ("120ms", "0.12s",
// "120000us"); nullopt when both are empty. InputError on a malformed value or when both are given.
std::optional<Anchor> make_anchor(const Prediction& p, const std::string& measured, const std::string& measured_step);

// The anchor for a measured step of `step_s` seconds (the flag's value or a profiler trace's mean step), `given` the
// words that name where it came from. InputError when the model cannot time the configuration or the rate is not
// physically possible.
Anchor anchor_from_step(const Prediction& p, double step_s, std::string given);

// Whether a measured rate of `p`'s setup (samples/s, or tokens/s when `tokens`) is within data/limits.toml [anchor]
// max_measured_over_peak times the fastest peak of its devices, the bound --measured is held to; true when `p` has no
// work or rate to judge it by.
bool measured_rate_possible(const Prediction& p, double measured, bool tokens);

}  // namespace perfcast
