#include "analysis/anchor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/predict.h"
#include "core/error.h"
#include "core/limits.h"

namespace perfcast {

namespace {

// A positive finite number followed by one of `units` (each with its factor to the base unit); "" allowed when
// `bare` is set. InputError naming the flag otherwise.
double number_with_unit(const std::string& flag, const std::string& text,
                        const std::initializer_list<std::pair<std::string_view, double>>& units, bool bare) {
  // Plain decimal, as the command line's other number flags (cli/number_flags.h): std::stod alone would also read
  // leading spaces, a sign, "inf" and hexadecimal ("0x10", "0x1p-3").
  const bool plain = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.') &&
                     text.find_first_of("xX") == std::string::npos;
  std::size_t used = 0;
  double v = 0;
  try {
    if (plain) v = std::stod(text, &used);
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
    std::vector<std::string> names;
    for (const auto& [u, f] : units) {
      list += (list.empty() ? "" : ", ") + std::string(u);
      names.emplace_back(u);
    }
    // A unit typo ("60/hr", "120msec") is named with the nearest unit, as other typos are.
    std::string hint;
    if (used && !rest.empty() && std::isfinite(v) && v > 0)
      if (const std::string near = nearest(rest.substr(0, 40), names); !near.empty()) hint = "; did you mean '" + near + "'?";
    throw InputError(flag + " '" + text.substr(0, 40) + "' is not a positive number with a unit (" + list + ")" + hint);
  }
  return v * scale;
}

// The most arithmetic the devices of `p` could do per second, in FLOP/s: the fastest pipe any precision has (GPU) or
// the fastest unit (CPU: FMA, AVX512_BF16/AMX, VNNI), at the datasheet clock, over every GPU of every node.
double fastest_peak_flops(const Prediction& p) {
  double tflops = 0;
  if (p.device.cpu) {
    for (const char* precision : {"fp32", "bf16", "int8"}) tflops = std::max(tflops, p.device.cpu->peak_tflops(precision));
  } else {
    for (const double v : p.device.peak_tflops) tflops = std::max(tflops, v);
  }
  return tflops * 1e12 * std::max(1, p.request.gpus) * std::max(1, p.request.nodes);
}

// A measurement no hardware of this kind could make is a unit or count mistake (images per minute, tokens for
// samples, all nodes' throughput on one GPU's request): refuse it rather than scale what-ifs from it. The bound is
// generous: data/limits.toml [anchor] max_measured_over_peak times the fastest pipe's peak (Winograd's most
// saving, Lavin & Gray 2016; its source is beside it).
void check_physically_possible(const Prediction& p, const Anchor& a) {
  if (!(a.predicted > 0) || !(p.flops_per_sample > 0) || !(p.samples_per_s > 0)) return;
  const double peak = fastest_peak_flops(p);
  if (!(peak > 0)) return;
  const double implied = a.factor() * p.samples_per_s * p.flops_per_sample;
  const double most_over_peak = input_limits().max_measured_over_peak;
  if (implied <= most_over_peak * peak) return;
  const int devices = std::max(1, p.request.gpus) * std::max(1, p.request.nodes);
  throw InputError(fmt::format(
      "{} is more than this hardware can compute: at {:.3g} GFLOP per sample it implies {} TFLOP/s, over {:g}x "
      "the {:.3g} TFLOPS peak of {}{}'s fastest unit; check the unit ({}), the batch and {}",
      a.given, p.flops_per_sample / 1e9, std::isfinite(implied) ? fmt::format("{:.3g}", implied / 1e12) : "over 1e300", most_over_peak, peak / 1e12, devices > 1 ? fmt::format("{} x ", devices) : "",
      p.device.id,
      // A step time's unit is ms, s or us; a rate's, a period.
      a.given.starts_with("--measured-step") ? "the step's time: ms, s or us"
      : a.unit == "tokens_per_s"             ? "tokens per second; /min or /h for other periods"
                                             : "samples per second; /min or /h for other periods",
      p.device.cpu ? "--cores" : "--gpus / --nodes"));
}

}  // namespace

bool measured_rate_possible(const Prediction& p, double measured, bool tokens) {
  if (!(p.flops_per_sample > 0) || !(p.samples_per_s > 0)) return true;
  if (tokens && !(p.tokens_per_s && *p.tokens_per_s > 0)) return true;
  const double peak = fastest_peak_flops(p);
  if (!(peak > 0)) return true;
  const double samples_per_s = tokens ? measured * p.samples_per_s / *p.tokens_per_s : measured;
  return samples_per_s * p.flops_per_sample <= input_limits().max_measured_over_peak * peak;
}

namespace {

// An anchor on `p`'s headline throughput, its measurement still to be filled in.
Anchor unmeasured_anchor(const Prediction& p, std::string given) {
  Anchor a;
  a.given = std::move(given);
  a.unit = p.tokens_per_s ? "tokens_per_s" : "samples_per_s";
  a.predicted = p.memory.fits ? (p.tokens_per_s ? *p.tokens_per_s : p.samples_per_s) : 0;
  return a;
}

}  // namespace

Anchor anchor_from_step(const Prediction& p, double step_s, std::string given) {
  Anchor a = unmeasured_anchor(p, std::move(given));
  // The step's work is what the prediction's step does: its throughput times its step time.
  const double per_step = (p.tokens_per_s ? *p.tokens_per_s : p.samples_per_s) * p.step_us * 1e-6;
  if (!(per_step > 0))
    throw InputError("a measured step needs a configuration the model can time; use --measured with a throughput");
  a.measured = per_step / step_s;
  check_physically_possible(p, a);
  return a;
}

std::optional<Anchor> make_anchor(const Prediction& p, const std::string& measured, const std::string& measured_step) {
  if (measured.empty() && measured_step.empty()) return std::nullopt;
  if (!measured.empty() && !measured_step.empty())
    throw InputError("give --measured or --measured-step, not both");
  if (!measured_step.empty())
    return anchor_from_step(
        p, number_with_unit("--measured-step", measured_step, {{"ms", 1e-3}, {"s", 1.0}, {"us", 1e-6}}, false),
        "--measured-step " + measured_step);
  Anchor a = unmeasured_anchor(p, "--measured " + measured);
  // Per minute and per hour are what training logs often print (images/min, samples/h): converted to per second.
  a.measured = number_with_unit("--measured", measured, {{"/s", 1.0}, {"/min", 1.0 / 60.0}, {"/h", 1.0 / 3600.0}}, true);
  check_physically_possible(p, a);
  return a;
}

}  // namespace perfcast
