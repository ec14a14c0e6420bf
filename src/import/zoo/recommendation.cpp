// Recommendation models (DLRM, DLRM-DCNv2, Wide & Deep): their published shapes live in data/models/recsys/<id>.toml
// (tables, lookups per sample, MLPs, interaction, table optimizer, each with its sources); this file builds the
// graph they describe: dense features through the bottom MLP, table-batched embedding bags, the interaction (dot
// products, DCNv2 cross layers or a plain concatenation), the top MLP and a binary cross-entropy loss.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/data_files.h"
#include "core/error.h"
#include "core/toml_reader.h"
#include "graph/builder.h"
#include "import/zoo/zoo.h"

namespace perfcast {

namespace {

struct TableGroup {
  std::int64_t dim = 0;
  std::vector<std::int64_t> rows;
  std::vector<double> pooling;
  bool wide = false;  // Wide & Deep's size-1 embeddings: summed into the logit, not fed to the deep part
};

struct RecsysSpec {
  std::string id, description, citation;
  std::int64_t dense_features = 0;
  int id_bytes = 4;
  EmbeddingOptimizer optimizer = EmbeddingOptimizer::kSgd;
  double zipf_alpha = 0;
  std::vector<std::int64_t> bottom_mlp, top_mlp;
  std::string interaction;  // dot | cross | concat
  bool layer_per_table = false;  // the model code calls one embedding layer (lookup op) per table
  std::int64_t cross_layers = 0, cross_rank = 0;
  std::vector<TableGroup> groups;
};

std::vector<std::int64_t> ints(const TomlFields& f, std::string_view key, bool required = true) {
  std::vector<std::int64_t> out;
  const auto* arr = f.raw()[key].as_array();
  if (!arr) {
    if (required) f.fail(key, "is missing or not an array of integers");
    return out;
  }
  for (const auto& e : *arr) {
    const auto v = e.value<std::int64_t>();
    if (!v || *v <= 0) f.fail(key, "entries must be positive integers");
    out.push_back(*v);
  }
  return out;
}

RecsysSpec load_spec(const std::string& id) {
  const auto path = data_dir() / "models" / "recsys" / (id + ".toml");
  const toml::table root = parse_toml_file(path);
  const TomlFields f(root, path.string());
  RecsysSpec s;
  s.id = id;
  s.description = f.text("description");
  s.citation = f.text("citation");
  f.text("sources");  // every model file says where its shapes come from
  s.dense_features = f.count("dense_features");
  s.id_bytes = f.count("id_bytes");
  const std::string opt = f.text("optimizer");
  if (opt == "sgd") s.optimizer = EmbeddingOptimizer::kSgd;
  else if (opt == "rowwise_adagrad") s.optimizer = EmbeddingOptimizer::kRowwiseAdagrad;
  else if (opt == "adam_dense") s.optimizer = EmbeddingOptimizer::kAdamDense;
  else if (opt == "adam_lazy") s.optimizer = EmbeddingOptimizer::kAdamLazy;
  else f.fail("optimizer", "must be sgd, rowwise_adagrad, adam_dense or adam_lazy");
  s.zipf_alpha = f.number("zipf_alpha");
  if (root.contains("lookup_ops")) {
    const std::string lo = f.text("lookup_ops");
    if (lo == "per_table") s.layer_per_table = true;
    else if (lo != "batched") f.fail("lookup_ops", "must be per_table or batched");
  }
  s.bottom_mlp = ints(f, "bottom_mlp", false);
  s.top_mlp = ints(f, "top_mlp");
  s.interaction = f.text("interaction");
  if (s.interaction == "cross") {
    s.cross_layers = f.count("cross_layers");
    s.cross_rank = f.count("cross_rank");
  } else if (s.interaction != "dot" && s.interaction != "concat") {
    f.fail("interaction", "must be dot, cross or concat");
  }
  const auto* groups = root["embeddings"].as_array();
  if (!groups || groups->empty()) f.fail("embeddings", "needs at least one [[embeddings]] table group");
  for (const auto& node : *groups) {
    const auto* t = node.as_table();
    if (!t) f.fail("embeddings", "entries must be tables");
    const TomlFields g(*t, path.string() + " [[embeddings]]");
    TableGroup tg;
    tg.dim = g.count("dim");
    tg.rows = ints(g, "rows");
    const std::vector<std::int64_t> pooling = ints(g, "pooling", false);
    if (!pooling.empty() && pooling.size() != tg.rows.size()) g.fail("pooling", "needs one entry per table");
    for (std::size_t i = 0; i < tg.rows.size(); ++i)
      tg.pooling.push_back(pooling.empty() ? 1.0 : static_cast<double>(pooling[i]));
    tg.wide = t->contains("wide") && g.boolean("wide");
    if (tg.dim <= 0) g.fail("dim", "must be positive");
    s.groups.push_back(std::move(tg));
  }
  if (s.interaction == "dot" && (s.groups.size() != 1 || s.bottom_mlp.empty() || s.bottom_mlp.back() != s.groups[0].dim))
    f.fail("interaction", "dot needs one table group whose dim equals the bottom MLP's output");
  return s;
}

Tensor mlp(GraphBuilder& b, Tensor x, const std::vector<std::int64_t>& widths, const std::string& stem, bool last_relu) {
  for (std::size_t i = 0; i < widths.size(); ++i) {
    x = b.linear(x, widths[i], true, stem + std::to_string(i));
    if (i + 1 < widths.size() || last_relu) x = b.relu(x, true, stem + std::to_string(i) + ".relu");
  }
  return x;
}

Graph build(const RecsysSpec& s, const ModelOptions& o) {
  GraphBuilder b(s.id, o.batch);
  const Tensor dense = b.input({s.dense_features}, 4);  // FP32 numerical features
  // Bottom MLP (DLRM) or the raw numerical features (Wide & Deep's deep part takes them as they are).
  const Tensor bottom = s.bottom_mlp.empty() ? dense : mlp(b, dense, s.bottom_mlp, "bottom_mlp.", true);
  std::vector<Tensor> deep_parts{bottom};
  Tensor pooled_dot{};
  std::optional<Tensor> wide;
  for (std::size_t gi = 0; gi < s.groups.size(); ++gi) {
    const TableGroup& g = s.groups[gi];
    double lookups = 0;
    for (double p : g.pooling) lookups += p;
    const Tensor ids = b.input({static_cast<std::int64_t>(lookups)}, s.id_bytes);
    const std::string name = s.groups.size() == 1 ? "embedding_bags" : "embedding_bags.dim" + std::to_string(g.dim) + (g.wide ? ".wide" : "");
    Tensor e = b.embedding_bag(ids, g.rows, g.pooling, g.dim, s.optimizer, name);
    if (g.wide) {
      wide = b.linear(b.flatten(e, name + ".flat"), 1, true, "wide.linear");
      continue;
    }
    if (s.interaction == "dot") pooled_dot = e;
    else deep_parts.push_back(b.flatten(e, name + ".flat"));
  }
  Tensor x;
  if (s.interaction == "dot") {
    x = b.dot_interaction(bottom, pooled_dot, "interaction");
  } else {
    x = b.concat(deep_parts, 1, "interaction.concat");
    if (s.interaction == "cross") {
      // DCNv2 low-rank cross layers (TorchRec LowRankCrossNet): x_{l+1} = x0 * (U (V x_l) + b) + x_l.
      const Tensor x0 = x;
      for (std::int64_t l = 0; l < s.cross_layers; ++l) {
        const std::string p = "cross." + std::to_string(l) + ".";
        const Tensor v = b.linear(x, s.cross_rank, false, p + "v");
        const Tensor u = b.linear(v, x0.shape[1], true, p + "u");
        x = b.add(b.mul(x0, u, p + "mul"), x, p + "add");
      }
    }
  }
  Tensor logit = mlp(b, x, s.top_mlp, "top_mlp.", false);
  if (wide) logit = b.add(logit, *wide, "wide_plus_deep");
  b.cross_entropy(logit, "loss");  // binary cross-entropy on the click logit
  return b.finish();
}

}  // namespace

void register_recommendation(std::vector<ZooModel>& out) {
  for (const char* id : {"dlrm", "dlrm_dcnv2", "dlrm_small", "dlrm_t15", "dlrm_t3", "dcnv2_t15", "dcnv2_t3", "wide_deep"}) {
    const RecsysSpec spec = load_spec(id);
    ZooModel m;
    m.id = id;
    m.family = "recsys";
    m.description = spec.description;
    m.citation = spec.citation;
    m.build = [spec](const ModelOptions& o) {
      Graph g = build(spec, o);
      // The ids' distribution sets the L2 hit rate of the lookups (cost/embedding_cost.cpp).
      for (auto& op : g.ops)
        if (op.kind == OpKind::kEmbeddingBag) {
          op.bag.zipf_alpha = spec.zipf_alpha;
          if (spec.layer_per_table) op.bag.lookup_ops = static_cast<std::int64_t>(op.bag.rows.size());
        }
      return g;
    };
    out.push_back(std::move(m));
  }
}

}  // namespace perfcast
