#include "import/zoo/zoo.h"

namespace perfcast {

void register_classic_cnns(std::vector<ZooModel>&) {}

}  // namespace perfcast
