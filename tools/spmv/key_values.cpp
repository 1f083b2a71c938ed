// The commands' output (key: value lines or one JSON object) and the names options are checked against.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>

#include "commands.hpp"

namespace spmv::cli {

namespace {
std::vector<std::string> sorted_unique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}
}  // namespace

std::vector<std::string> backend_names() { return {"serial", "omp", "cuda"}; }

std::vector<std::string> kernel_names() {
  std::vector<std::string> v{"auto"};
  for (const KernelSpec& k : kernels()) v.push_back(k.name);
  return sorted_unique(std::move(v));
}

std::vector<std::string> format_names() {
  std::vector<std::string> v;
  for (const KernelSpec& k : kernels())  // run --format F runs the kernel named F
    if (k.format == k.name) v.push_back(k.format);
  return sorted_unique(std::move(v));
}

void KeyValues::add(const std::string& key, double value, int digits) {
  const std::string t = fmt::format("{:.{}g}", value, digits);
  items_.push_back({key, t, std::isfinite(value) ? t : "null"});
}

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, surrogates or
// code points past U+10FFFF), or 0.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned c = b(0);
  const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return b(k) >= lo && b(k) <= hi; };
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const bool second = c == 0xe0 ? cont(1, 0xa0) : c == 0xed ? cont(1, 0x80, 0x9f) : cont(1);
    return second && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const bool second = c == 0xf0 ? cont(1, 0x90) : c == 0xf4 ? cont(1, 0x80, 0x8f) : cont(1);
    return second && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

// A JSON string: quotes, backslashes and control bytes escaped; bytes that are not UTF-8 (a file
// name may hold any) written as U+FFFD, since JSON text must be UTF-8.
std::string KeyValues::quote(const std::string& s) {
  std::string q = "\"";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"' || c == '\\')
      (q += '\\') += c;
    else if (c == '\n')
      q += "\\n";
    else if (c == '\t')
      q += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20)
      q += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    else if (static_cast<unsigned char>(c) < 0x80)
      q += c;
    else if (const std::size_t n = utf8_length(s, i))
      q.append(s, i, n), i += n - 1;
    else
      q += "\\ufffd";
  }
  return q + "\"";
}

std::string KeyValues::text() const {
  std::string out;
  for (const Item& i : items_) out += i.key + ": " + i.text + "\n";
  return out;
}

std::string KeyValues::json() const {
  std::string out = "{";
  for (std::size_t i = 0; i < items_.size(); ++i)
    out += fmt::format("{}\n  {}: {}", i ? "," : "", quote(items_[i].key), items_[i].json);
  return out + "\n}\n";
}

void KeyValues::print(bool as_json) const {
  const std::string s = as_json ? json() : text();
  std::fwrite(s.data(), 1, s.size(), stdout);
}

}  // namespace spmv::cli
