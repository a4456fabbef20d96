// The expected bands (bands.csv): its parser refuses what would make a verdict wrong, every row
// names a card the card table knows, and a device gets its card's rows plus its link's.
#include <gtest/gtest.h>

#include <set>

#include "harness/context.h"
#include "harness/model/band_table.h"
#include "harness/model/card_table.h"

namespace gpubench {
namespace {

const char* const kHeader = "card,check,link,reference,pass_min,warn_min,max,unit,source\n";

std::string table(const std::string& rows) { return std::string(kHeader) + rows; }

void expect_refused(const std::string& rows, const std::string& says) {
  try {
    parse_band_table(table(rows));
    ADD_FAILURE() << "accepted: " << rows;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

TEST(BandTable, ParsesQuotedSourcesWithCommasAndQuotes) {
  const auto bands = parse_band_table(
      table("h100_sxm,dram_copy_pct_of_peak,,87,78.3,69.6,100,%,\"BabelStream Copy 2.90 TB/s, \"\"87 %\"\"\"\n"
            "*,pcie_h2d_GBps,gen5x16,55.1,49.6,44.1,,GB/s,gpubench\n"));
  ASSERT_EQ(bands.size(), 2u);
  EXPECT_EQ(bands[0].source, "BabelStream Copy 2.90 TB/s, \"87 %\"");
  EXPECT_DOUBLE_EQ(bands[0].pass_min, 78.3);
  ASSERT_TRUE(bands[0].max.has_value());
  EXPECT_DOUBLE_EQ(*bands[0].max, 100);
  EXPECT_EQ(bands[1].link, "gen5x16");
  EXPECT_FALSE(bands[1].max.has_value());
}

TEST(BandTable, RefusesWhatWouldMakeAVerdictWrong) {
  expect_refused("h100_sxm,dram_copy,,87,78,70,100,%,x\n", "unknown check");
  expect_refused("h100_sxm,dram_copy_pct_of_peak,,87,70,78,100,%,x\n", "warn_min is above pass_min");
  expect_refused("h100_sxm,dram_copy_pct_of_peak,,87,78,70,50,%,x\n", "max is below pass_min");
  expect_refused("h100_sxm,dram_copy_pct_of_peak,,87,78,70,100,TB/s,x\n", "unit");
  expect_refused("h100_sxm,dram_copy_pct_of_peak,,eighty,78,70,100,%,x\n", "reference is not a number");
  expect_refused("h100_sxm,pcie_h2d_GBps,,55,49,44,,GB/s,x\n", "link");
  expect_refused("h100_sxm,dram_copy_pct_of_peak,gen5x16,87,78,70,100,%,x\n", "link");
  expect_refused("h100_sxm,dram_copy_pct_of_peak,,87,78,70,100,%,\n", "no source");
  expect_refused("h100_sxm,dram_copy_pct_of_peak,,87,78,70,100,%\n", "expected 9 fields");
  expect_refused("h100_sxm,dram_copy_pct_of_peak,,87,78,70,100,%,\"open\n", "not closed");
  EXPECT_THROW(parse_band_table("card,check\n"), std::runtime_error);
}

TEST(BandTable, EveryRowNamesAKnownCardAndFollowsTheRule) {
  ASSERT_FALSE(band_table().empty());
  std::set<std::string> seen;
  for (const Band& b : band_table()) {
    if (b.card != "*") {
      EXPECT_TRUE(find_card_by_key(b.card).has_value()) << b.card << " is not in cards.csv";
    }
    // One rule for every row (the file's notes): pass at 90 %, warn at 80 % of the reference.
    EXPECT_NEAR(b.pass_min, 0.9 * b.reference, 0.006 * b.reference) << b.card << " " << b.check;
    EXPECT_NEAR(b.warn_min, 0.8 * b.reference, 0.006 * b.reference) << b.card << " " << b.check;
    EXPECT_TRUE(seen.insert(b.card + "/" + b.check + "/" + b.link).second) << "twice: " << b.card << " " << b.check;
  }
}

TEST(BandTable, ACardGetsItsOwnRowsAndItsLinksRows) {
  const auto h100 = bands_for("h100_sxm", "gen5x16");
  std::set<std::string> checks;
  for (const Band& b : h100) checks.insert(b.check);
  for (const char* c : {"dram_copy_pct_of_peak", "pcie_h2d_GBps", "pcie_d2h_GBps", "cublas_hgemm_pct_of_peak"})
    EXPECT_TRUE(checks.count(c)) << c;
  EXPECT_EQ(checks.size(), h100.size());  // one band per check
  // An unknown card on a known link: the link's rows only; unknown everything: none.
  for (const Band& b : bands_for("", "gen4x16")) EXPECT_EQ(b.card, "*");
  EXPECT_FALSE(bands_for("", "gen4x16").empty());
  EXPECT_TRUE(bands_for("", "").empty());
  EXPECT_EQ(link_key(5, 16), "gen5x16");
  EXPECT_EQ(link_key(0, 16), "");
}

TEST(BandTable, TheContextSaysWhichBandsApplyOrThatNoneDo) {
  DeviceDescription h100;
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.pcie_gen = 4;  // trained below its maximum: the bands stay those of the card's link
  h100.pcie_width = 16;
  h100.pcie_gen_max = 5;
  h100.pcie_width_max = 16;
  const auto c = acceptance_context(h100, "cuda");
  EXPECT_EQ(c.at("card_key"), "h100_sxm");
  EXPECT_NE(c.at("expected_bands").find("H100 SXM, gen5x16"), std::string::npos) << c.at("expected_bands");
  DeviceDescription t4;
  t4.name = "Tesla T4";
  EXPECT_EQ(acceptance_context(t4, "cuda").at("card_key"), "none");
  EXPECT_NE(acceptance_context(t4, "cuda").at("expected_bands").find("none for this card (Tesla T4)"),
            std::string::npos);
  EXPECT_EQ(acceptance_context(h100, "host").at("expected_bands"), "none (host backend)");
}

}  // namespace
}  // namespace gpubench
