#include "analysis/predict.h"

namespace perfcast {

void apply_power(Prediction&) {}

}  // namespace perfcast
