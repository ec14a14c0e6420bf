#include "cost/activation_chains.h"

#include <string>
#include <string_view>

#include "core/data_files.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

// "x,t>t" -> reads x and t, writes t; a trailing '!' marks a conversion.
ChainKernel parse_kernel(std::string_view text, const TomlFields& f, std::string_view key) {
  ChainKernel k;
  if (!text.empty() && text.back() == '!') {
    k.conversion = true;
    text.remove_suffix(1);
  }
  const auto arrow = text.find('>');
  if (arrow == std::string_view::npos || arrow + 2 != text.size()) f.fail(key, "kernels are written \"in,in>out\"");
  const auto type = [&](char c) {
    if (c != 'x' && c != 't') f.fail(key, "element types are x (the activation's) or t (the chain's)");
    return c;
  };
  for (std::size_t i = 0; i < arrow; ++i) {
    if (text[i] == ',') continue;
    k.reads.push_back(type(text[i]));
  }
  k.writes = type(text[arrow + 1]);
  if (k.reads.empty()) f.fail(key, "a kernel reads at least one tensor");
  if (k.conversion && (k.reads.size() != 1 || k.reads[0] == k.writes))
    f.fail(key, "a conversion (\"!\") reads one type and writes the other");
  return k;
}

std::vector<ChainKernel> kernels(const TomlFields& f, std::string_view key) {
  std::vector<ChainKernel> out;
  const auto* arr = f.node(key).as_array();
  if (!arr || arr->empty()) f.fail(key, "is missing or not a list of kernels");
  for (const auto& e : *arr) {
    const auto v = e.value<std::string>();
    if (!v) f.fail(key, "must be a list of strings");
    out.push_back(parse_kernel(*v, f, key));
  }
  return out;
}

ActivationChain load_gelu_new() {
  const auto path = data_dir() / "eager_activations.toml";
  const toml::table root = parse_toml_file(path);
  const TomlFields top(root, path.string());
  const TomlFields g(top.table("gelu_new"), path.string() + " [gelu_new]");
  ActivationChain c;
  c.forward = kernels(g, "forward");
  c.backward = kernels(g, "backward");
  g.refuse_unknown_keys();
  top.has("sources");  // each chain's source text, read by people
  top.refuse_unknown_keys();
  return c;
}

}  // namespace

const ActivationChain& gelu_new_chain() {
  static const ActivationChain c = load_gelu_new();
  return c;
}

double chain_kernel_bytes(const ChainKernel& k, double x_bytes, double t_bytes) {
  if (k.conversion && x_bytes == t_bytes) return 0;
  const auto size = [&](char c) { return c == 't' ? t_bytes : x_bytes; };
  double bytes = size(k.writes);
  for (const char r : k.reads) bytes += size(r);
  return bytes;
}

}  // namespace perfcast
