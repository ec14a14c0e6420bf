// The built-in model zoo: published architectures with their exact layer shapes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace perfcast {

// What a zoo builder needs besides the architecture itself.
struct ModelOptions {
  std::int64_t batch = 1;
  std::int64_t seq = 0;  // sequence models: tokens per sample; 0 = the model's default
};

struct ZooModel {
  std::string id;           // stable CLI id, e.g. "resnet50"
  std::string family;       // "cnn", "cnn3d", "detection", "segmentation", "transformer", "vision_transformer", "rnn", "llm", "recsys"
  std::string description;  // one line: input size, variant
  std::string citation;     // paper or reference implementation the shapes follow
  bool sequence = false;    // takes --seq and reports tokens/s
  std::int64_t default_seq = 0;
  std::function<Graph(const ModelOptions&)> build;  // forward graph ending in the training loss
  std::int64_t max_positions = 0;  // context length of its published config (decoder LLMs); 0 = not stated
  bool learned_positions = false;  // max_positions is the rows of a learned position table (BERT, GPT-2)
};

// All zoo models, in a stable order.
const std::vector<ZooModel>& zoo();

// The model with this id; throws InputError (with the nearest id) when unknown.
const ZooModel& find_zoo_model(std::string_view id);

// Registration hooks, one per source file of the zoo.
void register_classic_cnns(std::vector<ZooModel>& out);     // alexnet, vgg, googlenet, inception
void register_resnets(std::vector<ZooModel>& out);          // resnet18..200, resnet50_v1_5, resnext, wide_resnet
void register_dense_mobile(std::vector<ZooModel>& out);     // densenet, mobilenet_v2
void register_torchvision_more(std::vector<ZooModel>& out); // squeezenet, mobilenet_v3, efficientnet, shufflenet, vit
void register_dense_prediction(std::vector<ZooModel>& out); // ssd300, unet2d, unet3d, nodule3d
void register_sequence_models(std::vector<ZooModel>& out);  // bert, gpt2, transformer_base, gnmt
void register_llms(std::vector<ZooModel>& out);             // llama-2/3, mistral, mixtral, qwen2 (data/models/hf)
void register_recommendation(std::vector<ZooModel>& out);   // dlrm, dlrm_dcnv2, wide_deep (data/models/recsys)

}  // namespace perfcast
