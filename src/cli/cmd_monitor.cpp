// perfcast monitor: samples this machine's GPUs through NVML while a job runs (a live view, --csv, --json), or
// replays a recorded session (--replay), and with --compare sets what it saw against perfcast's prediction.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <limits>
#include <optional>

#include "analysis/cloud.h"
#include "analysis/monitor.h"
#include "cli/command.h"
#include "cli/number_flags.h"
#include "core/data_files.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/output_file.h"
#include "core/toml_reader.h"
#include "report/monitor_report.h"

namespace perfcast::cli {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int) { g_stop.store(true); }

// Ctrl-C (and SIGTERM) end the session as --count would: the summary is printed and --csv written.
struct StopOnSignal {
  struct sigaction old_int {}, old_term {};
  StopOnSignal() {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: the sleep between rounds ends at once
    ::sigaction(SIGINT, &sa, &old_int);
    ::sigaction(SIGTERM, &sa, &old_term);
  }
  ~StopOnSignal() {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
  }
};

// "1s", "500ms", "2m", "1h" or a plain number of seconds: the duration parser of every duration flag. No longer
// than the longest run a deadline may name (data/limits.toml max_deadline_hours): a session longer than any job
// watches nothing, and the sleep to the next round counts nanoseconds in 64 bits (--interval 1e30 would overflow
// that count and sample without pause).
double parse_seconds(const std::string& text, const char* flag) {
  const double seconds = parse_duration(text, flag, 1, 1, "500ms, 1s, 2m or 1h");
  const auto most_hours = input_limits().max_deadline_hours;
  if (seconds > static_cast<double>(most_hours) * 3600)
    throw InputError(fmt::format("{} of {:.3g} s is longer than any job runs (limit {} h, data/limits.toml "
                                 "max_deadline_hours)", flag, seconds, most_hours));
  return seconds;
}

// The shortest --interval (data/monitor.toml [sample] min_interval_ms): a sleep that rounds to nothing would sample
// without pause.
double min_interval_seconds() {
  static const double s = [] {
    const auto path = data_dir() / "monitor.toml";
    const toml::table doc = parse_toml_file(path);
    const TomlFields f(TomlFields(doc, path.string()).table("sample"), path.string() + " [sample]");
    const double ms = f.number("min_interval_ms");
    if (!(ms > 0 && ms <= 1000)) f.fail("min_interval_ms", "must be in (0, 1000]");
    return ms / 1000;
  }();
  return s;
}

}  // namespace

Command monitor_command() {
  return {"monitor", "watch this machine's GPUs while a job runs (NVML), or replay a recorded session; --compare with a prediction",
          [](CLI::App& app) {
            struct State {
              RequestFlags flags;
              std::string interval = "1s", duration, csv, replay, compare;
              long count = 0;  // 0: no --count given
              bool json = false;
              const CLI::Option* compare_option = nullptr;
              const CLI::Option* interval_option = nullptr;
            };
            auto s = std::make_shared<State>();
            app.add_option("--interval", s->interval, "time between samples (500ms, 1s, 2m)")->capture_default_str();
            app.add_option("--duration", s->duration, "stop after this long (default: at Ctrl-C, or the recording's end)");
            // --count 0 would read as "no samples", not "no limit" (the default is no --count at all).
            app.add_option("--count", s->count, "stop after this many samples per GPU")
                ->transform(whole_number_check("--count", 1, std::numeric_limits<long>::max()));
            app.add_option("--csv", s->csv, "also write every sample to this CSV file (the session format --replay reads)");
            app.add_flag("--json", s->json, "print the session summary (and comparison) as JSON, no live view");
            app.add_option("--replay", s->replay, "read a session recorded with --csv instead of sampling the GPUs");
            s->interval_option = app.get_option("--interval");
            s->compare_option =
                app.add_option("--compare", s->compare,
                               "compare with perfcast's prediction for the same job: the prediction flags below "
                               "(--gpu, --model, --batch ...), or a file saved by `perfcast predict --json`")
                    ->expected(0, 1);
            add_request_flags(app, s->flags, predict_defaults());
            return std::function<int()>([s] {
              MonitorOptions o;
              o.interval_s = parse_seconds(s->interval, "--interval");
              if (o.interval_s < min_interval_seconds())
                throw InputError(fmt::format("--interval of {:.3g} s is below the shortest sampling interval ({:.3g} s, "
                                             "data/monitor.toml min_interval_ms)",
                                             o.interval_s, min_interval_seconds()));
              // A replay keeps its recording's sample times: an interval would change nothing, and --csv would
              // label the copy with it.
              if (!s->replay.empty() && s->interval_option->count() > 0)
                throw InputError("--interval sets how often the GPUs are sampled; --replay keeps the recording's own "
                                 "sample times (use --duration or --count to replay part of it)");
              if (!s->duration.empty()) o.duration_s = parse_seconds(s->duration, "--duration");
              o.count = s->count;
              // The prediction first: a bad flag or file is reported before any sampling.
              std::optional<MonitorExpectation> expected;
              if (s->compare_option->count() > 0) {
                if (!s->compare.empty()) {
                  const std::string text = read_text_file(s->compare);
                  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
                  if (j.is_discarded()) throw InputError("'" + s->compare + "' is not JSON (a file saved by perfcast predict --json)");
                  expected = expectation_from_json(j, s->compare);
                } else {
                  expected = expectation_from(predict(s->flags.to_request()));
                }
              }
              std::unique_ptr<GpuSampler> sampler = s->replay.empty() ? open_nvml_sampler() : open_session_replay(s->replay);
              std::optional<OutputFileWriter> csv;
              if (!s->csv.empty()) {
                csv.emplace(s->csv);
                csv->write(sampler->live()
                               ? fmt::format("# perfcast monitor session: {}, interval {} s\n", sampler->source(), o.interval_s)
                               : fmt::format("# perfcast monitor session: {}, its sample times\n", sampler->source()));
                csv->write(session_csv_header());
              }
              const bool live_view = sampler->live() && !s->json;
              const bool redraw = live_view && ::isatty(STDOUT_FILENO);
              std::size_t drawn = 0;
              if (live_view) std::cout << "perfcast monitor: " << sampler->source() << " (Ctrl-C ends the session)\n"
                                       << monitor_live_header() << std::flush;
              g_stop.store(false);
              StopOnSignal signals;
              const MonitorSession session = run_monitor(*sampler, o, g_stop, [&](const std::vector<GpuSample>& round) {
                if (csv)
                  for (const auto& x : round) csv->write(session_csv_row(x));
                if (!live_view) return;
                std::string out;
                // On a terminal the lines are redrawn in place; piped, each round is appended.
                if (redraw && drawn > 0) out += fmt::format("\x1b[{}A", drawn);
                for (const auto& x : round) {
                  if (redraw) out += "\x1b[2K";  // clear the line before drawing it
                  out += monitor_live_line(x);
                  out += '\n';
                }
                drawn = round.size();
                std::cout << out << std::flush;
              });
              if (csv) csv->commit();
              const std::vector<MonitorFinding> findings =
                  expected ? compare_with_prediction(session, *expected) : std::vector<MonitorFinding>{};
              const MonitorExpectation* e = expected ? &*expected : nullptr;
              if (live_view) std::cout << "\n";
              std::cout << (s->json ? monitor_json(session, e, findings).dump(2) + "\n" : monitor_text(session, e, findings));
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
