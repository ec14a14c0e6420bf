// The advisor's report as one self-contained HTML page (no scripts, no external files): the same content as
// the text report, with bars for step shares and speedups.
#pragma once

#include <string>

#include "analysis/advisor.h"
#include "report/messages.h"

namespace perfcast {

std::string advice_html(const Advice& a, Lang lang);

}  // namespace perfcast
