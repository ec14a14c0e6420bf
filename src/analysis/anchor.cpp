#include "analysis/anchor.h"

#include <cmath>
#include <string_view>

#include "analysis/predict.h"
#include "core/error.h"

namespace perfcast {

namespace {

// A positive finite number followed by one of `units` (each with its factor to the base unit); "" allowed when
// `bare` is set. InputError naming the flag otherwise.
double number_with_unit(const std::string& flag, const std::string& text,
                        const std::initializer_list<std::pair<std::string_view, double>>& units, bool bare) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string rest = used ? text.substr(used) : "";
  double scale = 0;
  if (used && rest.empty() && bare) scale = 1;
  for (const auto& [u, f] : units)
    if (used && rest == u) scale = f;
  if (!used || scale == 0 || !std::isfinite(v) || v <= 0) {
    std::string list;
    for (const auto& [u, f] : units) list += (list.empty() ? "" : ", ") + std::string(u);
    throw InputError(flag + " '" + text.substr(0, 40) + "' is not a positive number with a unit (" + list + ")");
  }
  return v * scale;
}

}  // namespace

std::optional<Anchor> make_anchor(const Prediction& p, const std::string& measured, const std::string& measured_step) {
  if (measured.empty() && measured_step.empty()) return std::nullopt;
  if (!measured.empty() && !measured_step.empty())
    throw InputError("give --measured or --measured-step, not both");
  Anchor a;
  a.unit = p.tokens_per_s ? "tokens_per_s" : "samples_per_s";
  const double predicted = p.tokens_per_s ? *p.tokens_per_s : p.samples_per_s;
  a.predicted = p.memory.fits ? predicted : 0;
  if (!measured.empty()) {
    a.given = "--measured " + measured;
    a.measured = number_with_unit("--measured", measured, {{"/s", 1.0}}, true);
  } else {
    a.given = "--measured-step " + measured_step;
    const double step_s =
        number_with_unit("--measured-step", measured_step, {{"ms", 1e-3}, {"s", 1.0}, {"us", 1e-6}}, false);
    // The step's work is what the prediction's step does: its throughput times its step time.
    const double per_step = predicted * p.step_us * 1e-6;
    if (!(per_step > 0))
      throw InputError("--measured-step needs a configuration the model can time; use --measured with a throughput");
    a.measured = per_step / step_s;
  }
  return a;
}

}  // namespace perfcast
