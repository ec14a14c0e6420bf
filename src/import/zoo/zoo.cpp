#include "import/zoo/zoo.h"

#include "core/find_by_id.h"

namespace perfcast {

const std::vector<ZooModel>& zoo() {
  static const std::vector<ZooModel> models = [] {
    std::vector<ZooModel> m;
    register_classic_cnns(m);
    register_resnets(m);
    register_dense_mobile(m);
    register_torchvision_more(m);
    register_dense_prediction(m);
    register_sequence_models(m);
    register_llms(m);
    register_recommendation(m);
    return m;
  }();
  return models;
}

const ZooModel& find_zoo_model(std::string_view id) { return find_by_id(zoo(), id, "model"); }

}  // namespace perfcast
