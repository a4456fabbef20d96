#include "harness/model/band_table.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace gpubench {

extern const char* const kBandsCsv;  // generated from bands.csv at build time (bands_csv.cpp)

namespace {

[[noreturn]] void bad(int line_no, const std::string& what) {
  throw std::runtime_error("bands.csv line " + std::to_string(line_no) + ": " + what);
}

// One CSV record: fields split at commas outside double quotes, "" inside quotes is a quote.
std::vector<std::string> split_record(const std::string& line, int line_no) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        fields.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.emplace_back();
    } else {
      fields.back() += ch;
    }
  }
  if (quoted) bad(line_no, "a quoted field is not closed");
  return fields;
}

double number(const std::string& s, int line_no, const char* column) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && v >= 0) return v;
  } catch (const std::exception&) {
    // deliberately swallowed: bad() below names the line and column
  }
  bad(line_no, std::string("column ") + column + " is not a number: '" + s + "'");
}

bool is_pcie_check(const std::string& check) { return check == "pcie_h2d_GBps" || check == "pcie_d2h_GBps"; }

}  // namespace

const std::vector<std::string>& band_checks() {
  static const std::vector<std::string> checks = {
      "dram_copy_pct_of_peak", "l2_plateau_GBps",          "pcie_h2d_GBps",
      "pcie_d2h_GBps",         "cublas_sgemm_pct_of_peak", "cublas_hgemm_pct_of_peak",
      "sgemm_pct_of_cublas",   "hgemm_pct_of_cublas",      "fp32_fma_pct_of_peak"};
  return checks;
}

std::vector<Band> parse_band_table(const std::string& csv_text) {
  static const char* const kHeader = "card,check,link,reference,pass_min,warn_min,max,unit,source";
  std::istringstream in(csv_text);
  std::string line;
  int line_no = 0;
  std::vector<Band> bands;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line_no == 1) {
      if (line != kHeader) bad(line_no, "unexpected header '" + line + "'");
      continue;
    }
    const auto f = split_record(line, line_no);
    if (f.size() != 9) bad(line_no, "expected 9 fields, got " + std::to_string(f.size()));
    Band b;
    b.card = f[0];
    b.check = f[1];
    b.link = f[2];
    b.reference = number(f[3], line_no, "reference");
    b.pass_min = number(f[4], line_no, "pass_min");
    b.warn_min = number(f[5], line_no, "warn_min");
    if (!f[6].empty()) b.max = number(f[6], line_no, "max");
    b.unit = f[7];
    b.source = f[8];
    const auto& checks = band_checks();
    if (std::find(checks.begin(), checks.end(), b.check) == checks.end())
      bad(line_no, "unknown check '" + b.check + "'");
    if (b.unit != "%" && b.unit != "GB/s") bad(line_no, "unit '" + b.unit + "' is not % or GB/s");
    if (b.card.empty()) bad(line_no, "no card");
    if (b.warn_min > b.pass_min) bad(line_no, "warn_min is above pass_min");
    if (b.max && *b.max < b.pass_min) bad(line_no, "max is below pass_min");
    if (is_pcie_check(b.check) != !b.link.empty()) bad(line_no, "a link goes with the PCIe checks and only them");
    if (b.card == "*" && b.link.empty()) bad(line_no, "a row for every card (*) needs a link");
    if (b.source.empty()) bad(line_no, "no source");
    bands.push_back(std::move(b));
  }
  return bands;
}

const std::vector<Band>& band_table() {
  static const std::vector<Band> table = parse_band_table(kBandsCsv);
  return table;
}

std::vector<Band> bands_for(const std::string& card_key, const std::string& link) {
  std::vector<Band> out;
  for (const Band& b : band_table())
    if (!card_key.empty() && b.card == card_key && (b.link.empty() || b.link == link)) out.push_back(b);
  for (const Band& b : band_table()) {
    if (b.card != "*" || link.empty() || b.link != link) continue;
    const bool own = std::any_of(out.begin(), out.end(), [&](const Band& o) { return o.check == b.check; });
    if (!own) out.push_back(b);
  }
  return out;
}

std::string link_key(int gen, int width) {
  if (gen <= 0 || width <= 0) return {};
  return "gen" + std::to_string(gen) + "x" + std::to_string(width);
}

}  // namespace gpubench
