#include "import/zoo/zoo.h"

#include "core/error.h"

namespace perfcast {

const std::vector<ZooModel>& zoo() {
  static const std::vector<ZooModel> models = [] {
    std::vector<ZooModel> m;
    register_classic_cnns(m);
    register_resnets(m);
    register_dense_mobile(m);
    register_dense_prediction(m);
    register_sequence_models(m);
    register_llms(m);
    return m;
  }();
  return models;
}

const ZooModel& find_zoo_model(std::string_view id) {
  std::vector<std::string> ids;
  for (const auto& m : zoo()) {
    if (m.id == id) return m;
    ids.push_back(m.id);
  }
  throw_unknown("model", id, ids);
}

}  // namespace perfcast
