// Activations a model's own code writes as a chain of torch calls (Hugging Face's gelu_new), costed kernel by kernel
// where an eager runtime runs them so. The chains are data/eager_activations.toml.
#pragma once

#include <vector>

namespace perfcast {

// One kernel of a chain: the element types it reads and writes ('x' the activation type, 't' the chain's type), and
// whether it is a dtype conversion that runs only where the two types differ.
struct ChainKernel {
  std::vector<char> reads;
  char writes = 'x';
  bool conversion = false;
};

struct ActivationChain {
  std::vector<ChainKernel> forward;
  std::vector<ChainKernel> backward;
};

// data/eager_activations.toml [gelu_new], read once.
const ActivationChain& gelu_new_chain();

// Bytes one element of the activation moves through `k` with x- and t-typed elements of `x_bytes` and `t_bytes`;
// 0 for a conversion between equal types (the kernel does not run).
double chain_kernel_bytes(const ChainKernel& k, double x_bytes, double t_bytes);

}  // namespace perfcast
