// perfcast export: a model (zoo id, config.json or .onnx) written as an ONNX file with its structure and shapes,
// no weights (representation: src/import/onnx_export.h).
#include <fmt/format.h>

#include <iostream>

#include "analysis/request_resolution.h"
#include "cli/command.h"
#include "core/error.h"
#include "core/output_file.h"
#include "import/model_source.h"
#include "import/onnx_export.h"

namespace perfcast::cli {

Command export_command() {
  return {"export",
          "write a model's graph (zoo id, config.json, .onnx or profiler trace) as an ONNX file (shapes only)",
          [](CLI::App& app) {
            struct State {
              std::string model, onnx, batch, seq, max_positions;
            };
            auto s = std::make_shared<State>();
            app.add_option("--model", s->model, "model id (perfcast models), a config.json, an .onnx file or a PyTorch profiler trace (.json[.gz], recorded with record_shapes=True)")->required();
            app.add_option("--onnx", s->onnx, "output .onnx file")->required();
            app.add_option("--batch", s->batch, "fixed batch size (default: a symbolic 'batch' dimension)");
            app.add_option("--seq", s->seq, "tokens per sample for sequence models (default: the model's)");
            app.add_option("--max-positions", s->max_positions,
                           "a decoder LLM with rotary or ALiBi positions run past its config's context (as predict)");
            return std::function<int()>([s] {
              // The shared request flags validate counts the same way.
              RequestFlags counts;
              counts.batch = s->batch.empty() ? "1" : s->batch;
              counts.seq = s->seq;
              counts.max_positions = s->max_positions;
              PredictRequest r = counts.to_request();
              r.model = s->model;
              if (r.batch == 0) throw InputError("--batch max does not apply to export; give a number");
              check_output_path(s->onnx);
              const ModelSource model = model_for(r);  // the context check of predict
              if (!model.sequence && r.seq != 0)
                throw InputError("--seq applies to sequence models; '" + s->model + "' takes fixed-size inputs");
              const Graph graph = model.build(ModelOptions{r.batch, r.seq});
              const OnnxExport out = graph_to_onnx(graph, OnnxExportOptions{s->batch.empty()});
              write_output_file(s->onnx, out.bytes);
              std::cout << fmt::format("wrote {}: {} ({} nodes, {} initializers, {:.2f} M parameters; shapes only, "
                                       "no weights; batch {})\n",
                                       s->onnx, model.id, out.nodes, out.initializers,
                                       static_cast<double>(graph.params()) / 1e6,
                                       s->batch.empty() ? std::string("symbolic") : s->batch);
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
