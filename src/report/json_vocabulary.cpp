#include "report/json_vocabulary.h"

#include <array>
#include <cassert>
#include <string>

namespace perfcast {

namespace {

// Old name -> the name kept (docs/json.md's table; keep the two in step). Renamed in session 38; the old names go
// in the release after it.
constexpr std::array kDeprecated = {
    DeprecatedKey{"priced_on", "instance", "compare: run"},
    DeprecatedKey{"price_instance", "instance", "plan --layouts: layouts[], by_count[], meeting; predict: parallel_training"},
    DeprecatedKey{"train_usd", "usd_on_demand", "plan --layouts: layouts[], by_count[], meeting; predict: parallel_training"},
    DeprecatedKey{"train_hours", "hours", "plan --layouts: layouts[], by_count[], meeting; predict: parallel_training"},
    DeprecatedKey{"gpus", "gpus_total", "plan --layouts: top level, layouts[], by_count[], meeting; predict: "
                                        "parallel_training; predict --mode serve: top level"},
    DeprecatedKey{"avg_power_w_per_gpu", "avg_power_w", "compare: each row"},
    DeprecatedKey{"ms_per_output_token", "time_per_output_token_ms", "compare --mode decode|generate: each row"},
    DeprecatedKey{"tensor_parallel", "tp", "predict --mode serve: top level"},
    DeprecatedKey{"pipeline_parallel", "pp", "predict --mode serve: top level"},
    DeprecatedKey{"gpu_ms", "gpu_busy_ms", "validate: rows[]"},
    DeprecatedKey{"host_ms", "host_dispatch_ms", "validate: rows[]"},
};

}  // namespace

std::span<const DeprecatedKey> deprecated_keys() { return kDeprecated; }

void put_with_alias(nlohmann::json& j, std::string_view key, std::string_view old_key, const nlohmann::json& value) {
  put_with_alias(j, key, old_key, value, value);
}

void put_with_alias(nlohmann::json& j, std::string_view key, std::string_view old_key, const nlohmann::json& value,
                    const nlohmann::json& old_value) {
  bool listed = false;
  for (const DeprecatedKey& d : kDeprecated) listed = listed || (d.key == key && d.old_key == old_key);
  // Every alias written is one the docs list (tests/json_vocabulary_test.cpp reads docs/json.md against the table).
  assert(listed && "put_with_alias: an alias not in kDeprecated");
  (void)listed;
  j[std::string(key)] = value;
  j[std::string(old_key)] = old_value;
}

}  // namespace perfcast
