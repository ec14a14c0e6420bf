// Fusion planning: finds the multi-node patterns exporters split single ops into (linear + bias add, the
// attention core, erf-GELU, SiLU, RMSNorm, MSE loss) and records one Plan per node.
#include "import/onnx/onnx_fusions.h"

#ifdef PERFCAST_HAVE_ONNX

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "import/onnx/onnx_reader.h"

namespace perfcast::onnx_import {

void OnnxModel::plan_fusions() {
  const auto& g = model_.graph();
  const int n = g.node_size();
  plans_.assign(static_cast<std::size_t>(n), Plan{});
  std::map<std::string, std::vector<int>> consumers;
  for (int k = 0; k < n; ++k)
    for (const auto& i : g.node(k).input())
      if (!i.empty()) consumers[i].push_back(k);
  std::set<std::string> graph_outputs;
  for (const auto& o : g.output()) graph_outputs.insert(o.name());

  // Constness (values are not needed here, only whether a tensor is known before any input arrives).
  std::set<std::string> is_const(initializer_names_.begin(), initializer_names_.end());
  for (int k : order_) {
    const auto& node = g.node(k);
    bool c = !has_subgraph(node);
    if (node.op_type() != "Shape" && node.op_type() != "Size")
      for (const auto& i : node.input())
        if (!i.empty() && !is_const.count(i)) c = false;
    if (c)
      for (const auto& o : node.output()) is_const.insert(o);
  }
  auto constant = [&](const std::string& t) { return is_const.count(t) > 0; };
  auto single = [&](const std::string& t) {
    auto it = consumers.find(t);
    return it != consumers.end() && it->second.size() == 1 && !graph_outputs.count(t);
  };
  auto only_consumer = [&](const std::string& t) -> int { return single(t) ? consumers[t][0] : -1; };
  auto prod = [&](const std::string& t) -> int {
    auto it = producer_.find(t);
    return it == producer_.end() ? -1 : it->second;
  };
  std::vector<bool> claimed(static_cast<std::size_t>(n), false);
  auto free = [&](int k) { return k >= 0 && !claimed[static_cast<std::size_t>(k)]; };
  auto node = [&](int k) -> const ox::NodeProto& { return g.node(k); };
  auto is = [&](int k, std::initializer_list<std::string_view> types) {
    if (k < 0) return false;
    for (auto t : types)
      if (node(k).op_type() == t) return true;
    return false;
  };
  // The operand of a binary node that is not `t` (or "" when both are `t`).
  auto other = [&](int k, const std::string& t) -> std::string {
    const auto& nd = node(k);
    if (nd.input_size() != 2) return "";
    return nd.input(0) == t ? nd.input(1) : nd.input(0);
  };
  auto claim = [&](std::initializer_list<int> ks) {
    for (int k : ks)
      if (k >= 0) claimed[static_cast<std::size_t>(k)] = true;
  };
  auto absorb = [&](int k) {
    claimed[static_cast<std::size_t>(k)] = true;
    plans_[static_cast<std::size_t>(k)].role = Role::kAbsorbed;
  };

  // Attention core: MatMul(q', k') -> [Mul|Div by a constant, Add mask, Where mask, Cast]* -> Softmax
  // -> [Dropout|Cast] -> MatMul(., v').
  for (int s : order_) {
    if (!is(s, {"Softmax"}) || !free(s)) continue;
    std::vector<int> chain;
    bool causal = false;
    int m1 = -1;
    std::string t = node(s).input(0);
    for (int depth = 0; depth < 8; ++depth) {
      const int p = prod(t);
      if (!free(p) || !single(t)) break;
      const auto& pn = node(p);
      if (pn.op_type() == "MatMul" && !constant(pn.input(0)) && !constant(pn.input(1))) {
        m1 = p;
        break;
      }
      if (is(p, {"Mul", "Div"}) && pn.input_size() == 2 && constant(pn.input(1)) && !constant(pn.input(0))) {
        t = pn.input(0);
      } else if (is(p, {"Mul"}) && pn.input_size() == 2 && constant(pn.input(0)) && !constant(pn.input(1))) {
        t = pn.input(1);
      } else if (is(p, {"Add"}) && pn.input_size() == 2) {
        // The score operand is the one a MatMul (possibly through scaling) produces.
        auto leads_to_matmul = [&](const std::string& x) {
          int q = prod(x);
          for (int hop = 0; hop < 4 && q >= 0; ++hop) {
            if (is(q, {"MatMul"})) return true;
            if (!is(q, {"Mul", "Div", "Cast"})) return false;
            q = prod(node(q).input(0));
          }
          return false;
        };
        const bool first = leads_to_matmul(pn.input(0));
        const std::string mask = first ? pn.input(1) : pn.input(0);
        if (constant(mask)) causal = true;
        t = first ? pn.input(0) : pn.input(1);
      } else if (is(p, {"Where"}) && pn.input_size() == 3) {
        causal = true;
        t = constant(pn.input(1)) ? pn.input(2) : pn.input(1);
      } else if (is(p, {"Cast"})) {
        t = pn.input(0);
      } else {
        break;
      }
      chain.push_back(p);
    }
    if (m1 < 0 || !single(node(m1).output(0))) continue;
    int after = only_consumer(node(s).output(0));
    std::vector<int> tail;
    while (after >= 0 && free(after) && is(after, {"Dropout", "Cast"})) {
      tail.push_back(after);
      after = only_consumer(node(after).output(0));
    }
    if (after < 0 || !free(after) || !is(after, {"MatMul"})) continue;
    const std::string probs = tail.empty() ? node(s).output(0) : node(tail.back()).output(0);
    if (node(after).input(0) != probs || constant(node(after).input(1))) continue;
    const int m2 = after;
    Plan& pl = plans_[static_cast<std::size_t>(m2)];
    pl.role = Role::kAttention;
    pl.x = node(m1).input(0);
    pl.k = node(m1).input(1);
    pl.v = node(m2).input(1);
    pl.causal = causal;
    for (int c : tail) pl.dropout = pl.dropout || is(c, {"Dropout"});
    claim({m2});
    absorb(m1);
    absorb(s);
    for (int c : chain) absorb(c);
    for (int c : tail) absorb(c);
    // Head split/merge transposes next to the core are layouts the attention kernel reads and writes directly.
    for (const std::string& operand : {pl.x, pl.k, pl.v}) {
      const int p = prod(operand);
      if (free(p) && is(p, {"Transpose"}) && single(operand)) {
        plans_[static_cast<std::size_t>(p)].role = Role::kViewTranspose;
        claim({p});
      }
    }
    const int out_t = only_consumer(node(m2).output(0));
    if (free(out_t) && is(out_t, {"Transpose"})) {
      plans_[static_cast<std::size_t>(out_t)].role = Role::kViewTranspose;
      claim({out_t});
    }
  }

  // GELU (erf form): x / sqrt2 -> Erf -> + 1 -> * x -> * 0.5 (the 0.5 may also come first).
  for (int e : order_) {
    if (!is(e, {"Erf"}) || !free(e)) continue;
    const int p = prod(node(e).input(0));
    if (!free(p) || !is(p, {"Div", "Mul"}) || !single(node(e).input(0)) || node(p).input_size() != 2) continue;
    if (!constant(node(p).input(1)) && !constant(node(p).input(0))) continue;
    const std::string x = constant(node(p).input(1)) ? node(p).input(0) : node(p).input(1);
    if (constant(x)) continue;
    const int a = only_consumer(node(e).output(0));
    if (!free(a) || !is(a, {"Add"}) || !constant(other(a, node(e).output(0)))) continue;
    const int m = only_consumer(node(a).output(0));
    if (!free(m) || !is(m, {"Mul"})) continue;
    const std::string xm = other(m, node(a).output(0));
    int half = -1;
    if (xm != x) {
      half = prod(xm);
      if (!free(half) || !is(half, {"Mul"}) || !single(xm) || other(half, x).empty() || !constant(other(half, x)))
        continue;
    }
    int last = m;
    const int m2 = only_consumer(node(m).output(0));
    if (half < 0 && free(m2) && is(m2, {"Mul"}) && constant(other(m2, node(m).output(0)))) last = m2;
    for (int k : {p, e, a, half, m})
      if (k >= 0 && k != last) absorb(k);
    Plan& pl = plans_[static_cast<std::size_t>(last)];
    pl.role = Role::kGelu;
    pl.x = x;
    claim({last});
  }

  // SiLU / Swish: x * Sigmoid(x).
  for (int s : order_) {
    if (!is(s, {"Sigmoid"}) || !free(s)) continue;
    const std::string x = node(s).input(0);
    if (constant(x)) continue;
    const int m = only_consumer(node(s).output(0));
    if (!free(m) || !is(m, {"Mul"}) || other(m, node(s).output(0)) != x) continue;
    absorb(s);
    Plan& pl = plans_[static_cast<std::size_t>(m)];
    pl.role = Role::kSilu;
    pl.x = x;
    claim({m});
  }

  // RMSNorm: x / sqrt(mean(x^2) + eps) [* w], also as x * reciprocal(sqrt(...)).
  for (int r : order_) {
    if (!is(r, {"ReduceMean"}) || !free(r)) continue;
    const int p = prod(node(r).input(0));
    if (!free(p) || !single(node(r).input(0))) continue;
    std::string x;
    if (is(p, {"Pow"}) && constant(node(p).input(1))) x = node(p).input(0);
    else if (is(p, {"Mul"}) && node(p).input(0) == node(p).input(1)) x = node(p).input(0);
    else continue;
    if (constant(x)) continue;
    const int a = only_consumer(node(r).output(0));
    if (!free(a) || !is(a, {"Add"}) || !constant(other(a, node(r).output(0)))) continue;
    const int q = only_consumer(node(a).output(0));
    if (!free(q) || !is(q, {"Sqrt"})) continue;
    int d = only_consumer(node(q).output(0));
    int rc = -1;
    if (free(d) && is(d, {"Reciprocal"})) {
      rc = d;
      d = only_consumer(node(rc).output(0));
      if (!free(d) || !is(d, {"Mul"}) || other(d, node(rc).output(0)) != x) continue;
    } else if (!free(d) || !is(d, {"Div"}) || node(d).input(0) != x || node(d).input(1) != node(q).output(0)) {
      continue;
    }
    int last = d;
    std::string weight;
    const int w = only_consumer(node(d).output(0));
    if (free(w) && is(w, {"Mul"}) && constant(other(w, node(d).output(0)))) {
      last = w;
      weight = other(w, node(d).output(0));
    }
    for (int k : {p, r, a, q, rc, d})
      if (k >= 0 && k != last) absorb(k);
    Plan& pl = plans_[static_cast<std::size_t>(last)];
    pl.role = Role::kRms;
    pl.x = x;
    pl.weight = weight;
    claim({last});
  }

  // MSE loss: mean((pred - target)^2) over every axis.
  for (int r : order_) {
    if (!is(r, {"ReduceMean"}) || !free(r) || attr_int(node(r), "keepdims", 1) != 0) continue;
    if (node(r).input_size() > 1 || find_attr(node(r), "axes")) continue;
    const int sq = prod(node(r).input(0));
    if (!free(sq) || !single(node(r).input(0))) continue;
    std::string d;
    if (is(sq, {"Mul"}) && node(sq).input(0) == node(sq).input(1)) d = node(sq).input(0);
    else if (is(sq, {"Pow"}) && constant(node(sq).input(1))) d = node(sq).input(0);
    else continue;
    const int sub = prod(d);
    if (!free(sub) || !is(sub, {"Sub"}) || constant(node(sub).input(0))) continue;
    if (consumers[d].size() != (is(sq, {"Mul"}) ? 2u : 1u) || graph_outputs.count(d)) continue;
    absorb(sub);
    absorb(sq);
    Plan& pl = plans_[static_cast<std::size_t>(r)];
    pl.role = Role::kMse;
    pl.x = node(sub).input(0);
    claim({r});
  }

  // Linear layer bias: MatMul/Gemm with a constant weight, then Add of a constant vector.
  for (int m : order_) {
    if (!free(m) || !is(m, {"MatMul", "Gemm"})) continue;
    const auto& mn = node(m);
    if (mn.input_size() < 2 || !constant(mn.input(1)) || constant(mn.input(0))) continue;
    if (mn.op_type() == "Gemm" && mn.input_size() > 2 && !mn.input(2).empty()) continue;
    const int a = only_consumer(mn.output(0));
    if (!free(a) || !is(a, {"Add"})) continue;
    const std::string b = other(a, mn.output(0));
    if (b.empty() || !constant(b)) continue;
    // Only a direct initializer or Constant of rank 1 (a per-feature bias).
    const ox::TensorProto* bt = nullptr;
    for (const auto& t : g.initializer())
      if (t.name() == b) bt = &t;
    const int bp = prod(b);
    if (!bt && bp >= 0 && is(bp, {"Constant"}))
      if (const auto* va = find_attr(node(bp), "value"); va && va->has_t()) bt = &va->t();
    if (!bt || bt->dims_size() != 1) continue;
    absorb(a);
    Plan& pl = plans_[static_cast<std::size_t>(m)];
    pl.bias = b;
    pl.bias_out = node(a).output(0);
    claim({m});
  }
}

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
