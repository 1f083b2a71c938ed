// Matrix Market header: banner, then blank and `%` comment lines, then the size line.
#include "io/mm_header.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <fmt/format.h>
#include <initializer_list>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace spmv::io::detail {

namespace {

constexpr std::string_view kNoBanner =
    "missing banner: the first line must be '%%MatrixMarket matrix <format> <field> <symmetry>'";

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return r;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> t;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    const std::size_t b = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (i > b) t.push_back(line.substr(b, i - b));
  }
  return t;
}

// The value that `word`, in any case, names in `table`; none when it names none.
template <class E>
std::optional<E> match_word(std::string_view word, std::initializer_list<std::pair<std::string_view, E>> table) {
  const std::string w = lower(word);
  for (const auto& [key, value] : table)
    if (w == key) return value;
  return std::nullopt;
}

bool blank_line(std::string_view line) { return std::all_of(line.begin(), line.end(), is_blank); }

bool comment_line(std::string_view line) {
  const auto t = std::find_if_not(line.begin(), line.end(), is_blank);
  return t != line.end() && *t == '%';
}

// `%%MatrixMarket matrix <format> <field> <symmetry>` on line `bl`: sets format, field, symmetry.
void parse_banner(std::string_view line, i64 bl, const std::string& name, MmHeader& h) {
  const auto words = split_words(line);
  if (lower(words[0]) != "%%matrixmarket") throw ParseError(name, bl, std::string(kNoBanner));
  if (words.size() < 2) throw ParseError(name, bl, "banner lacks the object (expected 'matrix')");
  if (lower(words[1]) != "matrix")
    throw ParseError(name, bl, fmt::format("unknown object {} in the banner (expected 'matrix')", quoted(words[1])));
  if (words.size() < 3) throw ParseError(name, bl, "banner lacks the format (expected 'coordinate' or 'array')");
  const auto format =
      match_word<MmFormat>(words[2], {{"coordinate", MmFormat::Coordinate}, {"array", MmFormat::Array}});
  if (!format)
    throw ParseError(
        name, bl, fmt::format("unknown format {} in the banner (expected 'coordinate' or 'array')", quoted(words[2])));
  h.format = *format;
  if (words.size() < 4)
    throw ParseError(name, bl, "banner lacks the field (expected 'real', 'integer', 'pattern' or 'complex')");
  const auto field = match_word<Field>(words[3], {{"real", Field::Real},
                                                  {"double", Field::Real},
                                                  {"integer", Field::Integer},
                                                  {"pattern", Field::Pattern},
                                                  {"complex", Field::Complex}});
  if (!field)
    throw ParseError(name, bl,
                     fmt::format("unknown field {} in the banner (expected 'real', 'integer', "
                                 "'pattern' or 'complex')",
                                 quoted(words[3])));
  h.field = *field;
  if (words.size() < 5)
    throw ParseError(name, bl,
                     "banner lacks the symmetry (expected 'general', 'symmetric', "
                     "'skew-symmetric' or 'hermitian')");
  const auto symmetry = match_word<Symmetry>(words[4], {{"general", Symmetry::General},
                                                        {"symmetric", Symmetry::Symmetric},
                                                        {"skew-symmetric", Symmetry::SkewSymmetric},
                                                        {"hermitian", Symmetry::Hermitian}});
  if (!symmetry)
    throw ParseError(name, bl,
                     fmt::format("unknown symmetry {} in the banner (expected 'general', "
                                 "'symmetric', 'skew-symmetric' or 'hermitian')",
                                 quoted(words[4])));
  h.symmetry = *symmetry;
  if (words.size() > 5)
    throw ParseError(name, bl, fmt::format("unexpected word {} after the symmetry in the banner", quoted(words[5])));
}

// Banner words that are each valid but not together.
void check_banner_combination(const MmHeader& h, i64 bl, const std::string& name) {
  if (h.format == MmFormat::Array && h.field == Field::Pattern)
    throw ParseError(name, bl, "the pattern field is not valid with the array format");
  if (h.symmetry == Symmetry::Hermitian && h.field != Field::Complex)
    throw ParseError(name, bl, fmt::format("hermitian symmetry needs the complex field, not {}", to_string(h.field)));
  if (h.symmetry == Symmetry::SkewSymmetric && h.field == Field::Pattern)
    throw ParseError(name, bl, "skew-symmetric symmetry is not valid with the pattern field");
}

// The size line's numbers, {rows, cols, nnz} (nnz 0 for array files): each a non-negative 64-bit
// integer, rows and cols within the index type.
std::array<i64, 3> parse_size_numbers(std::string_view line, i64 sl, bool coord, const std::string& name) {
  const auto t = split_words(line);
  const std::size_t want = coord ? 3 : 2;
  const char* shape = coord ? "'rows cols nnz'" : "'rows cols'";
  if (t.size() != want) {
    std::string got;
    for (auto w : t) {
      if (!got.empty()) got += ' ';
      got += w;
    }
    throw ParseError(name, sl, fmt::format("bad size line: expected {}, found {}", shape, quoted(got)));
  }
  std::array<i64, 3> v = {0, 0, 0};
  const char* what[3] = {"rows", "cols", "nnz"};
  for (std::size_t k = 0; k < want; ++k) {
    const auto r = std::from_chars(t[k].data(), t[k].data() + t[k].size(), v[k]);
    if (r.ec == std::errc::result_out_of_range)
      throw ParseError(name, sl, fmt::format("bad size line: {} {} overflows a 64-bit integer", what[k], quoted(t[k])));
    if (r.ec != std::errc() || r.ptr != t[k].data() + t[k].size())
      throw ParseError(name, sl, fmt::format("bad size line: {} {} is not an integer", what[k], quoted(t[k])));
    if (v[k] < 0) throw ParseError(name, sl, fmt::format("bad size line: negative {} {}", what[k], v[k]));
  }
  constexpr i64 kMaxIndex = std::numeric_limits<index_t>::max();
  for (int k = 0; k < 2; ++k)
    if (v[k] > kMaxIndex)
      throw ParseError(name, sl,
                       fmt::format("bad size line: {} {} exceeds the 32-bit index limit {}", what[k], v[k], kMaxIndex));
  return v;
}

// Sets rows, cols and the number of stored entries from the size line's numbers.
void set_shape(MmHeader& h, const std::array<i64, 3>& v, i64 sl, const std::string& name) {
  h.rows = v[0];
  h.cols = v[1];
  if (h.symmetry != Symmetry::General && h.rows != h.cols)
    throw ParseError(
        name, sl,
        fmt::format("a {} matrix must be square, this one is {} x {}", to_string(h.symmetry), h.rows, h.cols));
  const i64 n = h.rows;
  const i64 full = h.rows * h.cols;  // < 2^62: no overflow
  const i64 triangle = n * (n + 1) / 2;
  if (h.format == MmFormat::Coordinate) {
    h.entries = v[2];
    const i64 cap = h.symmetry == Symmetry::General ? full : triangle;
    if (h.entries > cap)
      throw ParseError(name, sl,
                       fmt::format("bad size line: nnz {} exceeds {}, the most entries a {} x {} {} "
                                   "matrix can store",
                                   h.entries, cap, h.rows, h.cols, to_string(h.symmetry)));
  } else {
    // Array files list every entry; symmetric ones the lower triangle column by column, skew
    // ones without the (zero) diagonal.
    h.entries = h.symmetry == Symmetry::General         ? full
                : h.symmetry == Symmetry::SkewSymmetric ? n * (n - 1) / 2
                                                        : triangle;
  }
}

}  // namespace

MmHeader read_header(TextBlocks& lines, const std::string& name) {
  MmHeader h;
  std::string_view line;
  bool too_long = false;
  i64 n = 0;  // number of the line last read
  auto next = [&] {
    if (!lines.next_line(line, too_long)) return false;
    ++n;
    if (n == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);  // UTF-8 byte order mark
    return true;
  };
  bool found = false;
  while (next())
    if (too_long || !blank_line(line)) {
      found = true;
      break;
    }
  if (!found) throw ParseError(name, 0, "empty file: no %%MatrixMarket banner");
  if (too_long) {  // a banner is short: a line this long is not one
    const auto t = std::find_if_not(line.begin(), line.end(), is_blank);
    if (lower(line.substr(static_cast<std::size_t>(t - line.begin()), 14)) != "%%matrixmarket")
      throw ParseError(name, n, std::string(kNoBanner));
    throw ParseError(name, n, fmt::format("the banner line is longer than {} bytes", kMaxLine));
  }
  parse_banner(line, n, name, h);
  check_banner_combination(h, n, name);
  h.banner_line = n;

  // Comments and blank lines, then the size line. A "% spmv-generated: ..." comment right after
  // the banner marks a matrix made by the generator.
  // The other comment lines are kept, up to kMaxHeaderComments bytes.
  found = false;
  bool right_after_banner = true;
  std::size_t kept_bytes = 0, dropped_lines = 0, dropped_bytes = 0;
  while (next()) {
    if (too_long) throw ParseError(name, n, fmt::format("a line longer than {} bytes before the size line", kMaxLine));
    if (comment_line(line)) {
      constexpr std::string_view tag = "% spmv-generated: ";
      if (right_after_banner && line.starts_with(tag)) {
        h.generated = std::string(line.substr(tag.size()));
        while (!h.generated.empty() && is_blank(h.generated.back())) h.generated.pop_back();
        if (h.generated.empty()) h.generated = "spmv-generated";
        continue;
      }
      std::string_view text = line;
      while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
      if (dropped_lines == 0 && kept_bytes + text.size() + 1 <= kMaxHeaderComments) {
        h.comments.emplace_back(text);
        kept_bytes += text.size() + 1;
      } else {  // once one is dropped, all later ones are: the kept ones stay a prefix, in order
        ++dropped_lines;
        dropped_bytes += text.size() + 1;
      }
      continue;
    }
    right_after_banner = false;
    if (!blank_line(line)) {
      found = true;
      break;
    }
  }
  if (!found) throw ParseError(name, n, "missing size line: the file ends before it");
  if (dropped_lines)
    h.comments.push_back(
        fmt::format("% (spmv: {} more comment line{} of {} bytes not kept: the header's comments "
                    "are kept up to {} KiB)",
                    dropped_lines, dropped_lines == 1 ? "" : "s", dropped_bytes, kMaxHeaderComments >> 10));
  set_shape(h, parse_size_numbers(line, n, h.format == MmFormat::Coordinate, name), n, name);
  h.data_first_line = n + 1;
  return h;
}

}  // namespace spmv::io::detail
