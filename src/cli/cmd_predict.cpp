// perfcast predict: one prediction (text, JSON or HTML, in English or Chinese), or one per row of a configurations
// CSV with an "N ok, M failed" summary on stderr.
#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "analysis/anchor.h"
#include "analysis/batch_predict.h"
#include "analysis/cloud.h"
#include "analysis/llm_parallel.h"
#include "cli/command.h"
#include "cli/number_flags.h"
#include "cli/serving_flags.h"
#include "core/error.h"
#include "core/output_file.h"
#include "import/config_csv.h"
#include "report/chart_page.h"
#include "report/html_page.h"
#include "report/prediction_report.h"
#include "report/serving_report.h"
#include "report/validation_report.h"

namespace perfcast::cli {

namespace {
// CSV text gathered before it goes to the file: a few hundred rows.
constexpr std::streamoff kCsvChunkBytes = 1 << 16;
}  // namespace

Command predict_command() {
  return {"predict", "predict step time, throughput, memory and bottlenecks", [](CLI::App& app) {
            struct State {
              RequestFlags flags;
              ReportFlags report;
              ServingFlags serving;
              const CLI::Option* runtime_option = nullptr;
              std::string configs, out, measured, measured_step, pue;
            };
            auto s = std::make_shared<State>();
            add_request_flags(app, s->flags, predict_defaults());
            add_report_flags(app, s->report);
            add_serving_flags(app, s->serving);
            s->runtime_option = app.get_option("--runtime");
            app.add_option("--configs", s->configs,
                           "CSV of configurations (columns of published.csv), one prediction per row; exit 1 when a "
                           "row failed");
            app.add_option("--out", s->out, "output CSV for --configs (default: standard output)");
            app.add_option("--pue", s->pue,
                           "power usage effectiveness for the facility energy, from 1 (no overhead) (default: data/cloud/providers.toml "
                           "[default])");
            add_measured_flags(app, s->measured, s->measured_step, &s->flags.not_for_serving);
            return std::function<int()>([s, &app] {
              const Lang lang = parse_lang(s->report.lang);
              if (!s->out.empty() && s->configs.empty())
                throw InputError("--out writes the CSV of --configs; without --configs use --json or --html FILE");
              if (!s->configs.empty()) {
                if (!s->measured.empty() || !s->measured_step.empty())
                  throw InputError("--measured and --measured-step anchor one prediction, not a --configs file");
                if (s->report.json || !s->report.html.empty())
                  throw InputError("--configs writes a CSV (--out); --json and --html apply to one prediction");
                // Each row is predicted from its own columns: a request flag beside --configs (--gpus 4, --dim D=64,
                // --checkpointing) would change no row, so it is refused rather than ignored.
                refuse_flags_beside_configs(app, "those of data/validation/published.csv");
                // Rows are predicted a chunk at a time on every core and each chunk's CSV lines go straight to a
                // temporary file: memory does not grow with the rows. --out's file becomes the target when every
                // row is done (an error leaves no file); for standard output the lines wait in an unnamed
                // temporary file, so that an error mid-file prints no half table either.
                std::optional<OutputFileWriter> file;
                if (!s->out.empty()) file.emplace(s->out);
                std::unique_ptr<std::FILE, int (*)(std::FILE*)> spool(nullptr, &std::fclose);
                if (!file) {
                  spool.reset(std::tmpfile());
                  if (!spool) throw InputError("cannot make a temporary file for the CSV: " + std::string(std::strerror(errno)));
                }
                std::ostringstream csv;
                const auto drain = [&] {
                  const std::string text = csv.str();
                  if (file) file->write(text);
                  else if (std::fwrite(text.data(), 1, text.size(), spool.get()) != text.size())
                    throw InputError("cannot write the temporary CSV: " + std::string(std::strerror(errno)));
                  csv.str("");
                };
                write_predictions_csv_header(csv);
                std::size_t rows = 0, ok = 0, no_fit = 0, failed = 0;
                predict_config_file(s->configs, [&](RowResult&& r) {
                  write_prediction_csv_row(r, csv);
                  ++rows;
                  if (!r.prediction) ++failed;
                  else if (!r.prediction->memory.fits) ++no_fit;
                  else ++ok;
                  if (csv.tellp() > kCsvChunkBytes) drain();
                });
                drain();
                if (file) {
                  file->commit();
                } else {
                  std::rewind(spool.get());
                  std::array<char, 1 << 16> buf;
                  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), spool.get())) > 0;)
                    report_out().write(buf.data(), static_cast<std::streamsize>(n));
                }
                std::cerr << fmt::format("perfcast: {} ok, {} failed{} ({} row{})\n", ok, failed,
                                         no_fit ? fmt::format(", {} {} not fit", no_fit, no_fit == 1 ? "does" : "do")
                                                : "",
                                         rows, rows == 1 ? "" : "s");
                return failed > 0 ? 1 : 0;
              }
              if (!s->report.html.empty()) check_output_path(s->report.html);
              std::optional<double> pue;
              if (!s->pue.empty()) pue = pue_flag(s->pue);
              const PredictRequest request = s->flags.to_request();
              // A training layout's batch is --micro-batch per replica and --global-batch per step; a --batch beside
              // it changed nothing while the title showed it.
              if (wants_parallel_training(request)) check_parallel_training_model(request);
              if (!s->flags.batch.empty() && wants_parallel_training(request))
                throw InputError("--batch does not apply to a parallel training layout (--tp --pp --dp --zero ...): "
                                 "--micro-batch gives the sequences per micro-batch per replica, --global-batch those "
                                 "per optimizer step");
              if (request.mode != Mode::kServe) {
                const std::string given = s->serving.first_given();
                if (!given.empty())
                  throw InputError(given + " applies to --mode serve (a request stream), not --mode " +
                                   mode_string(request.mode));
              }
              if (request.mode == Mode::kServe) {
                // Given here they would change nothing while the user reads the report as theirs.
                for (const CLI::Option* o : s->flags.not_for_serving) {
                  if (o->count() == 0) continue;
                  const std::string flag = o->get_name();
                  const std::string instead =
                      flag == "--batch"     ? "; --max-batch caps the requests running at once"
                      : flag == "--seq"     ? "; --input-len and --output-len give each request's tokens"
                      : flag == "--context" ? "; --input-len gives the prompt, --prefix-cache-hit the share already cached"
                      : flag == "--measured" || flag == "--measured-step" ? "; it anchors one step of predict, not a request stream"
                                            : "";
                  throw InputError(flag + " does not apply to --mode serve (continuous batching of a request stream)" +
                                   instead);
                }
                // Continuous batching under load: its own report (analysis/llm_serving.h).
                if (pue) throw InputError("--pue applies to a training or inference step's energy, not --mode serve");
                const ServeRequest serve = s->serving.to_request(request, s->runtime_option->count() > 0);
                const ServePrediction p = predict_serving(serve);
                const std::string text = serving_text(p, lang);
                const nlohmann::json j = serving_json(p);
                if (!s->report.html.empty())
                  write_output_file(s->report.html, render_chart_page(ChartPage::kServe, j, lang, text.substr(0, text.find('\n')),
                                                                      preformatted_html(text)));
                std::cout << (s->report.json ? j.dump(2) + "\n" : text);
                return 0;
              }
              if (pue && wants_parallel_training(request))
                throw InputError("--pue applies to one replica's step energy; a parallel training layout (--tp --pp --dp --zero ...) "
                                 "reports no energy (plan --layouts prices layouts)");
              if (pue && is_cpu_device(request.gpu))
                throw InputError("--pue applies to a GPU step's energy; a CPU prediction reports no energy here "
                                 "(compare --device gives a CPU package's energy at TDP)");
              Prediction p = predict(request);
              p.anchor = make_anchor(p, s->measured, s->measured_step);
              const std::string page = s->report.html.empty() ? "" : render_predict_html(p, lang, pue);
              if (!s->report.html.empty()) write_output_file(s->report.html, page);
              report_out() << (s->report.json ? prediction_json(p, pue).dump(2) + "\n" : prediction_text(p, lang, 25, pue));
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
