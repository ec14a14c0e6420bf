// perfcast command line: parsing and printing only; every figure comes from the library.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "analysis/batch_predict.h"
#include "analysis/predict.h"
#include "analysis/validate.h"
#include "core/error.h"
#include "device/catalog.h"
#include "import/config_csv.h"
#include "import/zoo/zoo.h"
#include "report/prediction_report.h"
#include "report/validation_report.h"
#include "runtime/runtime_profile.h"

namespace {

using namespace perfcast;

std::int64_t parse_positive(const std::string& text, const char* what, bool allow_max) {
  if (allow_max && text == "max") return 0;
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size())
    throw InputError(fmt::format("{} must be a positive integer{}, got '{}'", what, allow_max ? " or 'max'" : "", text));
  if (v <= 0) throw InputError(fmt::format("{} must be positive, got {}", what, v));
  return v;
}

// Writes through a temporary file so a failure never leaves a half-written output.
void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp-perfcast";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw InputError("cannot write '" + path + "'");
    out << content;
    if (!out) throw InputError("cannot write '" + path + "'");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw InputError("cannot write '" + path + "': " + ec.message());
  }
}

int list_gpus(bool json) {
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& d : gpu_catalog()) {
      nlohmann::json g{{"id", d.id},
                       {"name", d.name},
                       {"architecture", d.architecture},
                       {"compute_capability", d.compute_capability},
                       {"sm_count", d.sm_count},
                       {"memory_gb", d.memory_gb},
                       {"mem_bw_gbps", d.mem_bw_gbps},
                       {"tdp_w", d.tdp_w},
                       {"file", d.file}};
      for (int i = 0; i < kPipeCount; ++i) g[std::string(pipe_peak_key(static_cast<Pipe>(i)))] = d.peak_tflops[i];
      g["sources"] = d.sources;
      j.push_back(g);
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  for (const auto& d : gpu_catalog())
    std::cout << fmt::format("{:<18} {:<34} sm_{} {:>5.0f} GB {:>6.0f} GB/s {:>6.1f} FP32 TFLOPS\n", d.id, d.name,
                             d.sm_version, d.memory_gb, d.mem_bw_gbps, d.peak(Pipe::kFp32));
  return 0;
}

int list_models(bool json) {
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& m : zoo()) {
      const Graph g = m.build(ModelOptions{1, 0});
      j.push_back({{"id", m.id},
                   {"family", m.family},
                   {"description", m.description},
                   {"citation", m.citation},
                   {"sequence", m.sequence},
                   {"default_seq", m.default_seq},
                   {"params", g.params()}});
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  for (const auto& m : zoo()) std::cout << fmt::format("{:<16} {:<13} {}\n", m.id, m.family, m.description);
  return 0;
}

int run(int argc, char** argv) {
  CLI::App app{"perfcast: predict, explain and improve deep-learning performance on NVIDIA GPUs"};
  app.require_subcommand(0, 1);

  bool json = false;
  auto* gpus = app.add_subcommand("gpus", "list the GPU catalog, one id per line");
  gpus->add_flag("--json", json, "details as JSON");
  auto* models = app.add_subcommand("models", "list the model zoo, one id per line");
  models->add_flag("--json", json, "details as JSON");
  auto* runtimes = app.add_subcommand("runtimes", "list runtime profiles, one id per line");

  PredictRequest req;
  std::string batch_text = "64", seq_text, configs, out_path, optimizer;
  bool no_optimizer = false;
  auto* pred = app.add_subcommand("predict", "predict step time, throughput, memory and bottlenecks");
  pred->add_option("--gpu", req.gpu, "GPU id (perfcast gpus) or a GPU .toml file");
  pred->add_option("--model", req.model, "model id (perfcast models)");
  pred->add_option("--mode", req.mode, "train | infer");
  pred->add_option("--precision", req.precision, "fp32 tf32 fp16 bf16 amp amp-bf16 int8 fp8");
  pred->add_option("--batch", batch_text, "samples per step, or 'max' for the largest that fits");
  pred->add_option("--seq", seq_text, "tokens per sample for sequence models");
  pred->add_option("--runtime", req.runtime, "runtime profile (perfcast runtimes)");
  pred->add_option("--optimizer", optimizer, "sgd | adam | adamw | lamb (default: sgd for CNNs, adamw otherwise)");
  pred->add_flag("--no-optimizer-step", no_optimizer, "time forward+backward only");
  pred->add_flag("--json", json, "machine-readable output");
  pred->add_option("--configs", configs, "CSV of configurations (columns of published.csv), one prediction per row");
  pred->add_option("--out", out_path, "output CSV for --configs (default: standard output)");

  std::string validate_file_path, markdown_path;
  auto* val = app.add_subcommand("validate", "predict every row of a measurements CSV and report the errors");
  val->add_option("file", validate_file_path, "CSV with measured values (columns of published.csv)")->required();
  val->add_option("--markdown", markdown_path, "write the markdown report here");
  val->add_flag("--json", json, "machine-readable output");

  // An unknown first word is a mistyped command, not an argument.
  if (argc > 1 && argv[1][0] != '-') {
    const std::vector<std::string> commands{"gpus", "models", "runtimes", "predict", "validate"};
    if (std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) throw_unknown("command", argv[1], commands);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    throw InputError(e.what());
  }

  if (*gpus) return list_gpus(json);
  if (*models) return list_models(json);
  if (*runtimes) {
    for (const auto& r : runtime_catalog()) std::cout << fmt::format("{:<16} {}\n", r.id, r.name);
    return 0;
  }
  if (*val) {
    const ValidationReport rep = validate_file(validate_file_path);
    if (!markdown_path.empty()) write_file_atomically(markdown_path, validation_markdown(rep));
    std::cout << (json ? validation_json(rep).dump(2) + "\n" : validation_summary_text(rep));
    return 0;
  }
  if (*pred && !configs.empty()) {
    const auto rows = read_config_csv(configs, false);
    std::ostringstream csv;
    write_predictions_csv(predict_rows(rows), csv);
    if (out_path.empty()) std::cout << csv.str();
    else write_file_atomically(out_path, csv.str());
    return 0;
  }
  // predict, or no command: the built-in default scenario.
  req.batch = parse_positive(batch_text, "batch", true);
  if (!seq_text.empty()) req.seq = parse_positive(seq_text, "seq", false);
  req.optimizer_step = !no_optimizer;
  if (!optimizer.empty()) req.optimizer = optimizer;
  const Prediction p = predict(req);
  std::cout << (json ? prediction_json(p).dump(2) + "\n" : prediction_text(p));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const perfcast::InputError& e) {
    std::cerr << "perfcast: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "perfcast: internal error: " << e.what() << "\n";
    return 3;
  }
}
