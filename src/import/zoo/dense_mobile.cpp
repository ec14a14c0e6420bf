#include "import/zoo/zoo.h"

namespace perfcast {

void register_dense_mobile(std::vector<ZooModel>&) {}

}  // namespace perfcast
