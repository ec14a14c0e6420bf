// `perfcast validate --pairs`: measured what-ifs per file and pooled (analysis/what_if_pairs.h), as markdown
// (printed on the terminal and written by --markdown) and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/what_if_pairs.h"

namespace perfcast {

// `files` in the order given; `pairs` of all of them (each names its file).
std::string what_if_pairs_markdown(const std::vector<std::string>& files, const std::vector<WhatIfPair>& pairs,
                                   const WhatIfPairSetup& setup);
nlohmann::json what_if_pairs_json(const std::vector<std::string>& files, const std::vector<WhatIfPair>& pairs,
                                  const WhatIfPairSetup& setup);

}  // namespace perfcast
