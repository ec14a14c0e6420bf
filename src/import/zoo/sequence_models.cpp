#include "import/zoo/zoo.h"

namespace perfcast {

void register_sequence_models(std::vector<ZooModel>&) {}

}  // namespace perfcast
