// The expected bands: per card (and per PCIe link), the range a healthy node's headline numbers
// fall in, each with the public or measured figure it comes from. One source of truth,
// harness/model/bands.csv, embedded into the binary like the card table and read by the Python
// tools (scripts/gpubench_tools/acceptance.py) from the same file.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpubench {

/// One row of bands.csv. A value at or above pass_min passes, from warn_min it warns, below it
/// fails; above max (where given) it is implausible (a cache-resident set or a wrong peak).
struct Band {
  std::string card;   ///< a cards.csv key, or "*" for a row keyed by the PCIe link alone
  std::string check;  ///< dram_copy_pct_of_peak, l2_plateau_GBps, pcie_h2d_GBps, ...
  std::string link;   ///< "gen5x16" for PCIe rows, else empty
  double reference = 0;
  double pass_min = 0;
  double warn_min = 0;
  std::optional<double> max;
  std::string unit;  ///< "%" or "GB/s"
  std::string source;
};

/// The checks a band may name.
const std::vector<std::string>& band_checks();

/// Parses bands.csv (RFC 4180 quoting). Throws std::runtime_error naming the line on bad input:
/// a wrong header or field count, a number that is not one, an unknown check or unit,
/// warn_min above pass_min, a max below pass_min, a PCIe check without a link, an empty source.
std::vector<Band> parse_band_table(const std::string& csv_text);

/// The table compiled into this binary.
const std::vector<Band>& band_table();

/// The bands for a card (its cards.csv key; "" when the table does not know it) whose host link
/// is `link` ("gen5x16"; "" when unknown): the card's own rows, and the link rows for checks
/// the card has no row of its own for.
std::vector<Band> bands_for(const std::string& card_key, const std::string& link);

/// "gen5x16" for a link of generation `gen` and `width` lanes ("" when either is unknown).
std::string link_key(int gen, int width);

}  // namespace gpubench
