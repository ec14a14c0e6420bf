// perfcast advise: the verdict, the breakdown and the ranked strategies. With no flags it runs the built-in
// default scenario (advise_defaults(): training the lung-nodule 3D CNN on a GP102 card as a GPU-cloud user would);
// each flag given replaces its own default only, so `--gpu tesla-p40` is the same scenario on a Tesla P40.
#include <iostream>

#include "analysis/advisor.h"
#include "analysis/anchor.h"
#include "analysis/llm_parallel.h"
#include "analysis/trace_anchor.h"
#include "cli/command.h"
#include "core/output_file.h"
#include "report/advice_html.h"
#include "report/advice_report.h"

namespace perfcast::cli {

Command advise_command() {
  return {"advise", "the bottleneck verdict and optimization strategies ranked by predicted gain (also what perfcast "
                    "runs without a command)",
          [](CLI::App& app) {
            struct State {
              RequestFlags flags;
              ReportFlags report;
              std::string measured, measured_step, trace;
            };
            auto s = std::make_shared<State>();
            add_request_flags(app, s->flags, advise_defaults());
            add_report_flags(app, s->report);
            add_measured_flags(app, s->measured, s->measured_step);
            app.add_option("--trace", s->trace,
                           "a PyTorch profiler trace of this run (.json[.gz], with profiler steps marked): its measured "
                           "step time (perfcast trace) anchors the what-ifs like --measured-step; refused when the "
                           "trace ran on another GPU or in another mode or precision than the prediction; without "
                           "--model the trace is the model too");
            const CLI::Option* model_option = app.get_option("--model");
            return std::function<int()>([s, model_option] {
              const Lang lang = parse_lang(s->report.lang);
              if (!s->report.html.empty()) check_output_path(s->report.html);
              // The trace measured its own model: without --model, the default scenario's model (nodule3d at batch
              // 4) would be anchored to another model's step.
              RequestFlags flags = s->flags;
              const bool model_is_trace = !s->trace.empty() && model_option->count() == 0;
              if (model_is_trace) flags.request.model = s->trace;
              // The other way to cost a trace without shapes: a model named by id, anchored to its step. Reading the
              // request already builds the model (its default batch), so both steps carry the hint.
              const auto with_trace_hint = [&](auto&& step) {
                try {
                  return step();
                } catch (const InputError& e) {
                  if (!model_is_trace || e.reason().id != "trace.no_input_shapes") throw;
                  throw InputError(std::string(e.what()) + "; or give --model ID (perfcast models) to cost that "
                                   "model against the trace's measured step");
                }
              };
              const PredictRequest request = with_trace_hint([&] { return flags.to_request(); });
              if (wants_parallel_training(request))
                throw InputError("the training-layout flags (--tp --pp --zero ...) apply to predict and plan --layouts, not advise");
              if (!s->trace.empty() && (!s->measured.empty() || !s->measured_step.empty()))
                throw InputError("give one measurement: --trace, --measured or --measured-step");
              Advice a = with_trace_hint([&] { return advise(request); });
              a.baseline.anchor = s->trace.empty() ? make_anchor(a.baseline, s->measured, s->measured_step)
                                                   : anchor_from_trace(a.baseline, s->trace);
              const std::string page = s->report.html.empty() ? "" : advice_html(a, lang);
              if (!s->report.html.empty()) write_output_file(s->report.html, page);
              report_out() << (s->report.json ? advice_json(a, lang).dump(2) + "\n" : advice_text(a, lang));
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
