#include "core/error.h"

#include <algorithm>
#include <cctype>

namespace perfcast {

namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions
// ("modle" -> "model" is one edit), case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const auto eq = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (eq(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && eq(a[i - 1], b[j - 2]) && eq(a[i - 2], b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string escape_control_bytes(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto hex = [](std::string& out, const char* prefix, unsigned v, int digits) {
    out += prefix;
    for (int d = digits - 1; d >= 0; --d) out += kHex[(v >> (4 * d)) & 0xF];
  };
  std::string out;
  out.reserve(text.size());
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = byte(i);
    if (c < 0x20 || c == 0x7F) {
      if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c == '\t') {
        out += "\\t";
      } else {
        hex(out, "\\x", c, 2);
      }
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, the range its second byte may take (no overlong forms, no
    // surrogates, nothing above U+10FFFF), continuation bytes after that.
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    bool valid = len > 0 && i + len <= text.size() && byte(i + 1) >= lo && byte(i + 1) <= hi;
    for (std::size_t k = 2; valid && k < len; ++k) valid = byte(i + k) >= 0x80 && byte(i + k) <= 0xBF;
    if (!valid) {
      hex(out, "\\x", c, 2);
      ++i;
      continue;
    }
    // C1 controls (U+0080..U+009F, encoded C2 80..C2 9F): terminals in UTF-8 mode may act on them (U+009B is CSI).
    if (c == 0xC2 && byte(i + 1) <= 0x9F) {
      hex(out, "\\u00", byte(i + 1), 2);
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string nearest(std::string_view wanted, const std::vector<std::string>& candidates) {
  // Accept at most a third of the word edited (and at least 2 edits for short ids).
  const std::size_t limit = wanted.size() <= 3 ? 1 : std::max<std::size_t>(2, wanted.size() / 3);
  std::string lw(wanted);
  std::erase(lw, '-');
  std::erase(lw, '_');
  std::string best;
  std::size_t best_d = static_cast<std::size_t>(-1);
  bool best_contains = false;
  for (const auto& c : candidates) {
    // The lengths' difference is a lower bound of the distance: a candidate further than the limit is not aligned
    // at all (a 10 MB id in a CSV cell against 20-byte ids would take minutes and gigabytes).
    const std::size_t length_gap = wanted.size() > c.size() ? wanted.size() - c.size() : c.size() - wanted.size();
    std::size_t d = length_gap > limit ? length_gap : edit_distance(wanted, c);
    // A candidate that contains the typed text ("1080ti" in "gtx-1080-ti") is a strong hint too, and wins a tie
    // ("xeon-platinum-8480" is one edit from the 8180 and contained in the 8480plus).
    std::string lc = c;
    std::erase(lc, '-');
    std::erase(lc, '_');
    const bool contains = !lw.empty() && lc.find(lw) != std::string::npos;
    if (contains) d = std::min(d, c.size() - lw.size() > 0 ? std::size_t{1} : d);
    // The same id but for its separators ("titanxp" for titan-xp) beats one that merely contains it
    // (titan-x-pascal, first in the catalog's order).
    if (!lw.empty() && lc == lw) d = 0;
    if (d < best_d || (d == best_d && contains && !best_contains)) {
      best_d = d;
      best = c;
      best_contains = contains;
    }
  }
  return best_d <= limit ? best : std::string{};
}

namespace {

// A maker's or brand's word, or a one-socket suffix: words a product name carries and a catalog id may leave out.
const std::vector<std::string>& brand_words() {
  static const std::vector<std::string> words{"nvidia", "tesla", "geforce", "quadro", "intel", "amd", "1s"};
  return words;
}

bool is_brand_word(const std::string& word) {
  return std::find(brand_words().begin(), brand_words().end(), word) != brand_words().end();
}

// The lower-case words of an id or a product name ("Tesla T4" -> tesla, t4; "xeon-platinum-8380-2s" -> xeon,
// platinum, 8380, 2s). A '+' reads as "plus", as the catalog spells it (Intel's "Xeon Platinum 8480+" is
// xeon-platinum-8480plus).
std::vector<std::string> id_words(std::string_view text) {
  std::vector<std::string> words(1);
  for (const char ch : text) {
    if (ch == '-' || ch == '_' || ch == ' ' || ch == '.') {
      if (!words.back().empty()) words.emplace_back();
    } else if (ch == '+') {
      words.back() += "plus";
    } else {
      words.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

// Ids that hold all the typed words (a family without its variant: "a100", "xeon-8380"), or whose words are the
// typed ones less a maker's or brand's word or a one-socket suffix ("tesla-t4" and "nvidia-t4" for t4,
// "epyc-9654-1s" for epyc-9654; any other extra word may be a typo of a sibling's, as "gtx-1080-tii" is of
// gtx-1080-ti's, and is left to the edit distance). Those sharing the most words, when there are a few (a family of
// more is no suggestion).
std::vector<std::string> same_words(const std::vector<std::string>& w, const std::vector<std::string>& candidates) {
  if (w.empty()) return {};
  std::vector<std::string> best;
  std::size_t best_shared = 0;
  for (const auto& c : candidates) {
    const auto cw = id_words(c);
    std::size_t shared = 0;
    bool extra_only_brand = true;
    for (const auto& x : w) {
      const bool in = std::find(cw.begin(), cw.end(), x) != cw.end();
      shared += in ? 1 : 0;
      if (!in && !is_brand_word(x)) extra_only_brand = false;
    }
    if (shared == 0 || (shared != w.size() && (shared != cw.size() || !extra_only_brand))) continue;
    if (shared > best_shared) best.clear();
    if (shared >= best_shared) {
      best_shared = shared;
      best.push_back(c);
    }
  }
  constexpr std::size_t kMostListed = 6;
  return best.size() <= kMostListed ? best : std::vector<std::string>{};
}

// The typed words less brand words ("tesla-v100" -> v100, "nvidia-h100" -> h100), joined as an id.
std::vector<std::string> without_brand_words(const std::vector<std::string>& words) {
  std::vector<std::string> kept;
  for (const auto& x : words)
    if (!is_brand_word(x)) kept.push_back(x);
  return kept;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& x : words) out += (out.empty() ? "" : "-") + x;
  return out;
}

}  // namespace

void throw_unknown(std::string_view what, std::string_view wanted, const std::vector<std::string>& candidates) {
  std::string msg = "unknown " + std::string(what) + " '" + std::string(wanted) + "'";
  const bool catalog_id = what == "gpu" || what == "device" || what == "cpu" || what == "model";
  std::vector<std::string> family, words;
  std::string guess;
  if (catalog_id) {
    // The typed words as they are first ("quadro-rtx" is the two Quadro RTX boards), then less the brand words a
    // product name carries ("tesla-v100" is the V100s, not the Tesla P40 a few edits away), and the edit distance
    // on the id so read ("xeon-platinum-8480+" is xeon-platinum-8480plus).
    words = id_words(wanted);
    family = same_words(words, candidates);
    const auto plain = without_brand_words(words);
    if (family.empty() && plain.size() < words.size()) family = same_words(plain, candidates);
    if (family.empty() && !plain.empty()) guess = nearest(joined(plain), candidates);
  }
  if (guess.empty()) guess = nearest(wanted, candidates);
  if (family.size() > 1) {
    msg += "; did you mean one of";
    for (std::size_t i = 0; i < family.size(); ++i) msg += (i ? ", '" : " '") + family[i] + "'";
    msg += "?";
  } else if (family.size() == 1) {
    msg += "; did you mean '" + family.front() + "'?";
  } else if (!guess.empty()) {
    msg += "; did you mean '" + guess + "'?";
  } else if (candidates.size() <= 12) {
    msg += "; expected one of:";
    for (const auto& c : candidates) msg += " " + c;
  } else if (what == "gpu" || what == "device" || what == "model" || what == "cpu") {
    msg += what == "gpu"      ? " (list them with `perfcast gpus`)"
           : what == "device" ? " (list them with `perfcast gpus` and `perfcast cpus`)"
           : what == "cpu"    ? " (list them with `perfcast cpus`)"
                              : " (list them with `perfcast models`)";
  } else if (what.rfind("flag of 'perfcast ", 0) == 0) {
    const auto name = what.substr(18, what.find('\'', 18) - 18);
    msg += " (list them with `perfcast " + std::string(name) + " --help`)";
  }
  throw InputError(msg);
}

}  // namespace perfcast
