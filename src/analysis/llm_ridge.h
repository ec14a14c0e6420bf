// Where a language model's forward pass turns from reading its weights to computing (analysis/llm_predict.cpp).
#pragma once

#include <optional>

#include "analysis/predict.h"

namespace perfcast {

// Tokens per forward pass at the ridge point of the pipe the pass's large matmuls run on: the pipe's peak FLOP/s
// over the achievable DRAM bandwidth (flop per byte), times bits per weight / 16 (2 flop per weight per token).
// Below it a pass is bound by reading its weights. Nullopt for mixture-of-experts models (a token reads only its
// experts). The request is resolved as --mode decode resolves it; InputError as predict's.
std::optional<double> llm_tokens_at_ridge(const PredictRequest& request);

}  // namespace perfcast
