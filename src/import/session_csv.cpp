// The recorded-session format of `perfcast monitor --csv`, and its replay as a GpuSampler.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <optional>
#include <string_view>

#include "core/data_files.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/toml_reader.h"
#include "import/gpu_sampler.h"
#include "import/utf8_bom.h"

namespace perfcast {

namespace {

constexpr std::string_view kHeader =
    "time_s,gpu,name,util_gpu_pct,util_mem_pct,mem_used_mib,mem_total_mib,power_w,power_limit_w,sm_clock_mhz,"
    "sm_clock_max_mhz,mem_clock_mhz,pcie_tx_mb_per_s,pcie_rx_mb_per_s,temperature_c,throttle_mask,throttle_reasons";
constexpr int kColumns = 17;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kMB = 1e6;

std::size_t max_line_bytes() {
  static const std::size_t n = [] {
    const auto path = data_dir() / "monitor.toml";
    const toml::table t = parse_toml_file(path);
    const TomlFields replay(TomlFields(t, path.string()).table("replay"), path.string() + " [replay]");
    const double v = replay.number("max_line_bytes");
    if (!(v >= 256 && v <= 1 << 20)) replay.fail("max_line_bytes", "must be between 256 and 1048576");
    return static_cast<std::size_t>(v);
  }();
  return n;
}

std::string number_cell(double v, int decimals) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : std::string();
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> cells;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    cells.push_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return cells;
    start = comma + 1;
  }
}

// What differs between a header line and the session header: the first column out of place, named, with the
// expected name as a suggestion (a column renamed, dropped or added by hand or by a spreadsheet).
std::string header_mismatch(std::string_view line) {
  const auto got = split(line);
  const auto want = split(kHeader);
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (i < got.size() && got[i] == want[i]) continue;
    const bool named_later = std::find(got.begin() + static_cast<std::ptrdiff_t>(std::min(i, got.size())), got.end(),
                                       want[i]) != got.end();
    const std::string expected(want[i]);
    if (i >= got.size())
      return fmt::format("the header lacks column '{}' (column {} of {})", expected, i + 1, want.size());
    const std::string found = escape_control_bytes(got[i].substr(0, 40));
    if (!named_later && i + 1 < got.size() && got[i + 1] == want[i + 1])
      return fmt::format("header column {} is '{}' where the session header has '{}'; did you mean '{}'?", i + 1,
                         found, expected, expected);
    if (!named_later)
      return fmt::format("the header lacks column '{}' (column {} of {}; found '{}' there)", expected, i + 1,
                         want.size(), found);
    return fmt::format("header column {} is '{}' where the session header has '{}' (columns out of order)", i + 1,
                       found, expected);
  }
  return fmt::format("the header has {} columns where the session header has {}: '{}' is not one of them", got.size(),
                     want.size(), escape_control_bytes(got[want.size()].substr(0, 40)));
}

class SessionReplay final : public GpuSampler {
 public:
  explicit SessionReplay(std::filesystem::path path) : path_(std::move(path)), in_(path_, std::ios::binary) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path_, ec) || !in_)
      throw InputError("cannot read session file '" + path_.string() + "'");
    buffer_.resize(max_line_bytes() + 1);
    std::string_view line;
    while (read_line(line)) {
      if (line_no_ == 1) line = without_utf8_bom(line);
      if (line.empty() || line.front() == '#') continue;
      if (line != kHeader) fail(header_mismatch(line));
      header_seen_ = true;
      break;
    }
    if (!header_seen_) throw InputError("session file '" + path_.string() + "' has no header line");
    pending_ = read_sample();
    // A header and no row: no GPU was seen, and a --compare would report "0 GPUs ran the job".
    if (!pending_)
      throw InputError("session file '" + path_.string() + "' has a header but no samples: nothing to replay (perfcast "
                       "monitor --csv writes one row per GPU per round)");
  }
  std::string source() const override { return "recording '" + path_.string() + "'"; }
  bool live() const override { return false; }
  std::vector<GpuSample> next_round(double /*time_s*/) override {
    std::vector<GpuSample> round;
    if (!pending_) return round;
    const double t = pending_->time_s;
    while (pending_ && pending_->time_s == t) {
      for (const auto& s : round)
        if (s.gpu == pending_->gpu) fail(fmt::format("GPU {} sampled twice at {} s", s.gpu, t));
      round.push_back(std::move(*pending_));
      pending_ = read_sample();
    }
    return round;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(fmt::format("session file '{}' line {}: {}", path_.string(), line_no_, why));
  }

  // The next line without its newline (and a \r before it); false at the end of the file.
  bool read_line(std::string_view& line) {
    if (!in_.getline(buffer_.data(), static_cast<std::streamsize>(buffer_.size()))) {
      if (in_.eof() && in_.gcount() == 0) return false;
      if (!in_.eof()) {
        ++line_no_;
        fail(fmt::format("a line longer than {} bytes (data/monitor.toml max_line_bytes)", buffer_.size() - 1));
      }
    }
    ++line_no_;
    std::size_t n = static_cast<std::size_t>(in_.gcount());
    if (n > 0 && !in_.eof()) --n;  // the newline getline consumed
    line = std::string_view(buffer_.data(), n);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  }

  double number(std::string_view cell, const char* column, double lo, double hi) const {
    if (cell.empty()) return kNotReported;
    double v = 0;
    const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
    if (ec != std::errc() || end != cell.data() + cell.size() || !std::isfinite(v))
      fail(fmt::format("{} '{}' is not a number", column, std::string(cell.substr(0, 40))));
    if (v < lo || v > hi) fail(fmt::format("{} {} is outside {}..{}", column, v, lo, hi));
    return v;
  }

  std::optional<GpuSample> read_sample() {
    std::string_view line;
    for (;;) {
      if (!read_line(line)) return std::nullopt;
      if (!line.empty() && line.front() != '#') break;
    }
    const auto c = split(line);
    if (static_cast<int>(c.size()) != kColumns)
      fail(fmt::format("{} fields where the header has {}", c.size(), kColumns));
    constexpr double kAny = 1e300;  // finite, no other bound: the field's own meaning bounds it below
    GpuSample s;
    s.time_s = number(c[0], "time_s", 0, kAny);
    if (std::isnan(s.time_s)) fail("time_s is empty");
    if (s.time_s < last_time_) fail(fmt::format("time_s {} goes back from {}", s.time_s, last_time_));
    last_time_ = s.time_s;
    const double gpu = number(c[1], "gpu", 0, static_cast<double>(input_limits().max_gpus_per_node - 1));
    if (std::isnan(gpu) || gpu != std::floor(gpu)) fail("gpu must be a whole index");
    s.gpu = static_cast<int>(gpu);
    s.name = escape_control_bytes(c[2]);
    s.util_gpu_pct = number(c[3], "util_gpu_pct", 0, 100);
    s.util_mem_pct = number(c[4], "util_mem_pct", 0, 100);
    s.mem_used_bytes = number(c[5], "mem_used_mib", 0, kAny) * kMiB;
    s.mem_total_bytes = number(c[6], "mem_total_mib", 0, kAny) * kMiB;
    if (s.mem_used_bytes > s.mem_total_bytes) fail("mem_used_mib is more than mem_total_mib");
    s.power_w = number(c[7], "power_w", 0, kAny);
    s.power_limit_w = number(c[8], "power_limit_w", 0, kAny);
    s.sm_clock_mhz = number(c[9], "sm_clock_mhz", 0, kAny);
    s.sm_clock_max_mhz = number(c[10], "sm_clock_max_mhz", 0, kAny);
    s.mem_clock_mhz = number(c[11], "mem_clock_mhz", 0, kAny);
    s.pcie_tx_bytes_per_s = number(c[12], "pcie_tx_mb_per_s", 0, kAny) * kMB;
    s.pcie_rx_bytes_per_s = number(c[13], "pcie_rx_mb_per_s", 0, kAny) * kMB;
    s.temperature_c = number(c[14], "temperature_c", -273.15, kAny);
    std::string_view mask = c[15];
    int base = 10;
    if (mask.starts_with("0x") || mask.starts_with("0X")) {
      mask.remove_prefix(2);
      base = 16;
    }
    if (!mask.empty()) {
      const auto [end, ec] = std::from_chars(mask.data(), mask.data() + mask.size(), s.throttle_mask, base);
      if (ec != std::errc() || end != mask.data() + mask.size())
        fail("throttle_mask '" + std::string(c[15].substr(0, 40)) + "' is not a number");
    }
    return s;
  }

  std::filesystem::path path_;
  std::ifstream in_;
  std::vector<char> buffer_;
  long line_no_ = 0;
  bool header_seen_ = false;
  double last_time_ = 0;
  std::optional<GpuSample> pending_;
};

}  // namespace

std::string session_csv_header() { return std::string(kHeader) + "\n"; }

std::string session_csv_row(const GpuSample& s) {
  std::string name = s.name;
  for (char& ch : name)
    if (ch == ',' || ch == '\n' || ch == '\r') ch = ' ';
  std::string reasons;
  for (const auto& w : throttle_reason_words(s.throttle_mask)) reasons += (reasons.empty() ? "" : "|") + w;
  return fmt::format("{:.3f},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:#x},{}\n", s.time_s, s.gpu, name,
                     number_cell(s.util_gpu_pct, 0), number_cell(s.util_mem_pct, 0),
                     number_cell(s.mem_used_bytes / kMiB, 0), number_cell(s.mem_total_bytes / kMiB, 0),
                     number_cell(s.power_w, 1), number_cell(s.power_limit_w, 1), number_cell(s.sm_clock_mhz, 0),
                     number_cell(s.sm_clock_max_mhz, 0), number_cell(s.mem_clock_mhz, 0),
                     number_cell(s.pcie_tx_bytes_per_s / kMB, 1), number_cell(s.pcie_rx_bytes_per_s / kMB, 1),
                     number_cell(s.temperature_c, 0), s.throttle_mask, reasons);
}

std::unique_ptr<GpuSampler> open_session_replay(const std::filesystem::path& csv) {
  return std::make_unique<SessionReplay>(csv);
}

}  // namespace perfcast
