#include "harness/model/card_table.h"

#include <cmath>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace gpubench {

extern const char* const kCardsCsv;  // generated from cards.csv at build time (cards_csv.cpp)

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) out.push_back(field);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

double to_double(const std::string& s, int line_no, const char* column) {
  try {
    std::size_t used = 0;
    double v = std::stod(s, &used);
    if (used != s.size()) throw std::invalid_argument(s);
    return v;
  } catch (const std::exception&) {
    throw std::runtime_error("cards.csv line " + std::to_string(line_no) + ": column " + column +
                             " is not a number: '" + s + "'");
  }
}

}  // namespace

std::vector<CardEntry> parse_card_table(const std::string& csv_text) {
  static const char* const kHeader =
      "key,display_name,match,cc,sm_count,fp32_TFLOPS,fp16_tensor_TFLOPS,bf16_tensor_TFLOPS,fp8_tensor_TFLOPS,"
      "dram_GBps,l2_MiB,pcie_gen,pcie_width,source";
  std::istringstream in(csv_text);
  std::string line;
  int line_no = 0;
  std::vector<CardEntry> cards;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line_no == 1) {
      if (line != kHeader) throw std::runtime_error("cards.csv: unexpected header '" + line + "'");
      continue;
    }
    const auto f = split_csv_line(line);
    if (f.size() != 14) {
      throw std::runtime_error("cards.csv line " + std::to_string(line_no) + ": expected 14 fields, got " +
                               std::to_string(f.size()));
    }
    CardEntry c;
    c.key = f[0];
    c.display_name = f[1];
    c.match = f[2];
    const double cc = to_double(f[3], line_no, "cc");
    c.cc_major = static_cast<int>(cc);
    c.cc_minor = static_cast<int>(std::lround((cc - c.cc_major) * 10.0));
    c.sm_count = static_cast<int>(to_double(f[4], line_no, "sm_count"));
    c.fp32_TFLOPS = to_double(f[5], line_no, "fp32_TFLOPS");
    c.fp16_tensor_TFLOPS = to_double(f[6], line_no, "fp16_tensor_TFLOPS");
    c.bf16_tensor_TFLOPS = to_double(f[7], line_no, "bf16_tensor_TFLOPS");
    c.fp8_tensor_TFLOPS = to_double(f[8], line_no, "fp8_tensor_TFLOPS");
    c.dram_GBps = to_double(f[9], line_no, "dram_GBps");
    c.l2_MB = to_double(f[10], line_no, "l2_MiB");
    c.pcie_gen = static_cast<int>(to_double(f[11], line_no, "pcie_gen"));
    c.pcie_width = static_cast<int>(to_double(f[12], line_no, "pcie_width"));
    c.source = f[13];
    cards.push_back(c);
  }
  if (cards.empty()) throw std::runtime_error("cards.csv: no cards");
  return cards;
}

const std::vector<CardEntry>& card_table() {
  static const std::vector<CardEntry> table = parse_card_table(kCardsCsv);
  return table;
}

std::optional<CardEntry> find_card_by_key(const std::string& key) {
  for (const auto& c : card_table())
    if (c.key == key) return c;
  return std::nullopt;
}

std::optional<CardEntry> find_card_by_device_name(const std::string& device_name) {
  for (const auto& c : card_table()) {
    const std::regex re(c.match, std::regex::ECMAScript | std::regex::icase);
    if (std::regex_search(device_name, re)) return c;
  }
  return std::nullopt;
}

Peaks theoretical_peaks(const DeviceDescription& d) {
  Peaks p = formula_peaks(d);
  if (d.cc_major == 0) {  // the host: no vendor peak we could trust, leave it unknown
    p = Peaks{};
    p.source = "unknown (host)";
    return p;
  }
  if (auto card = find_card_by_device_name(d.name)) {
    p.dram_GBps = card->dram_GBps;
    p.fp32_TFLOPS = card->fp32_TFLOPS;
    p.fp16_tensor_TFLOPS = card->fp16_tensor_TFLOPS;
    p.bf16_tensor_TFLOPS = card->bf16_tensor_TFLOPS;
    p.fp8_tensor_TFLOPS = card->fp8_tensor_TFLOPS;  // 0 where the card has no FP8 tensor cores
    if (p.pcie_GBps == 0) {
      p.pcie_GBps = pcie_GBps_per_direction(card->pcie_gen, card->pcie_width);
      p.pcie_protocol_GBps = pcie_protocol_GBps(
          p.pcie_GBps, d.pcie_max_payload_bytes > 0 ? d.pcie_max_payload_bytes : kAssumedMaxPayloadBytes,
          card->pcie_gen);
    }
    p.source = "card table: " + card->key;
  }
  return p;
}

}  // namespace gpubench
