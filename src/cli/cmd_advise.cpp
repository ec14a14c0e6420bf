// perfcast advise: the verdict, the breakdown and the ranked strategies. With no flags it runs the built-in
// default scenario: training the lung-nodule 3D CNN on a GP102 card as a GPU-cloud user would.
#include <iostream>

#include "analysis/advisor.h"
#include "cli/command.h"
#include "core/output_file.h"
#include "report/advice_html.h"
#include "report/advice_report.h"

namespace perfcast::cli {

// The default scenario: a cloud instance with one GTX 1080 Ti (GP102), 8 vCPUs, PyTorch, CT crops read and
// augmented on the host.
void set_default_scenario(RequestFlags& f) {
  f.request.gpu = "gtx-1080-ti";
  f.request.model = "nodule3d";
  f.request.mode = "train";
  f.request.precision = "fp32";
  f.request.runtime = "pytorch";
  f.request.data = "real-augmented";
  f.request.host = "cloud-8vcpu";
  f.batch = "4";
}

Command advise_command() {
  return {"advise", "the bottleneck verdict and optimization strategies ranked by predicted gain", [](CLI::App& app) {
            struct State {
              RequestFlags flags;
              bool json = false;
              std::string lang = "en";
              std::string html;
            };
            auto s = std::make_shared<State>();
            add_request_flags(app, s->flags);
            app.add_flag("--json", s->json, "machine-readable output (same content)");
            app.add_option("--lang", s->lang, "report language: en | zh (JSON keys stay the same)")->capture_default_str();
            app.add_option("--html", s->html, "also write the report as a self-contained HTML page to this file");
            return std::function<int()>([s, &app] {
              const Lang lang = parse_lang(s->lang);
              if (!s->html.empty()) check_output_path(s->html);
              // Without any scenario flag, advise on the built-in default; with some, the rest take predict's
              // defaults so that `advise` and `predict` agree on the same flags.
              bool scenario_given = false;
              for (const CLI::Option* o : app.get_options())
                if (o->count() > 0 && o->get_name() != "--json" && o->get_name() != "--lang" && o->get_name() != "--html" &&
                    o->get_name() != "--help")
                  scenario_given = true;
              if (!scenario_given) set_default_scenario(s->flags);
              const Advice a = advise(s->flags.to_request());
              if (!s->html.empty()) write_output_file(s->html, advice_html(a, lang));
              std::cout << (s->json ? advice_json(a, lang).dump(2) + "\n" : advice_text(a, lang));
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
