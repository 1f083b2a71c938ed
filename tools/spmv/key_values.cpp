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

std::string KeyValues::quote(const std::string& s) {
  std::string q = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') (q += '\\') += c;
    else if (c == '\n') q += "\\n";
    else if (c == '\t') q += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20) q += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    else q += c;
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
