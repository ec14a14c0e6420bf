#include "analysis/validate.h"

#include <algorithm>
#include <cmath>

namespace perfcast {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

ErrorStats error_stats(const std::vector<const ValidationRow*>& rows) {
  ErrorStats s;
  s.rows = static_cast<int>(rows.size());
  if (rows.empty()) return s;
  std::vector<double> apes, signed_err;
  double sum = 0, in2 = 0, fits = 0;
  for (const auto* r : rows) {
    apes.push_back(r->ape);
    signed_err.push_back((r->ratio - 1.0) * 100.0);
    sum += r->ape;
    if (r->ratio >= 0.5 && r->ratio <= 2.0) in2 += 1;
    if (r->result.prediction->memory.fits) fits += 1;
  }
  s.median_ape = median(apes);
  s.mean_ape = sum / static_cast<double>(rows.size());
  s.within_2x = in2 / static_cast<double>(rows.size());
  s.fits = fits / static_cast<double>(rows.size());
  s.median_signed = median(signed_err);
  return s;
}

ValidationReport validate_file(const std::string& path) {
  ValidationReport rep;
  rep.file = path;
  for (auto& res : predict_rows(read_config_csv(path, true))) {
    if (!res.prediction || !res.row.measured) {
      if (!res.prediction) {
        // Group reasons by their first clause so the summary stays short.
        std::string reason = res.status.substr(0, res.status.find(" ("));
        rep.unpredicted_reasons[reason] += 1;
      } else {
        rep.unpredicted_reasons["no measured value"] += 1;
      }
      rep.unpredicted.push_back(std::move(res));
      continue;
    }
    ValidationRow v;
    const auto& p = *res.prediction;
    v.predicted = res.row.metric == "tokens_per_s" && p.tokens_per_s ? *p.tokens_per_s : p.samples_per_s;
    v.ratio = v.predicted / *res.row.measured;
    v.ape = std::fabs(v.ratio - 1.0) * 100.0;
    v.result = std::move(res);
    rep.rows.push_back(std::move(v));
  }
  std::vector<const ValidationRow*> all;
  std::map<std::string, std::vector<const ValidationRow*>> g, m, rt, mp, data;
  for (const auto& r : rep.rows) {
    all.push_back(&r);
    g[r.result.row.gpu].push_back(&r);
    m[r.result.row.model].push_back(&r);
    rt[r.result.prediction->request.runtime].push_back(&r);
    mp[r.result.prediction->request.mode + " " + r.result.prediction->request.precision].push_back(&r);
    data[r.result.prediction->request.data].push_back(&r);
  }
  rep.overall = error_stats(all);
  for (auto& [k, v] : g) rep.by_gpu[k] = error_stats(v);
  for (auto& [k, v] : m) rep.by_model[k] = error_stats(v);
  for (auto& [k, v] : rt) rep.by_runtime[k] = error_stats(v);
  for (auto& [k, v] : mp) rep.by_mode_precision[k] = error_stats(v);
  for (auto& [k, v] : data) rep.by_data[k] = error_stats(v);
  return rep;
}

}  // namespace perfcast
