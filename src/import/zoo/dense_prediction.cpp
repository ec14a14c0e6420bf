#include "import/zoo/zoo.h"

namespace perfcast {

void register_dense_prediction(std::vector<ZooModel>&) {}

}  // namespace perfcast
