// The card table: datasheet figures for known GPUs. Its one source of truth is
// harness/model/cards.csv, embedded into the binary at build time and read by the Python
// scripts from the same file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/model/device.h"

namespace gpubench {

/// One row of cards.csv.
struct CardEntry {
  std::string key;           ///< stable short name, e.g. "h100_sxm"
  std::string display_name;  ///< e.g. "H100 SXM"
  std::string match;         ///< regular expression matched against the driver's device name
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  double fp32_TFLOPS = 0;
  double fp16_tensor_TFLOPS = 0;  ///< dense, FP32 accumulate
  double bf16_tensor_TFLOPS = 0;  ///< dense, FP32 accumulate
  double fp8_tensor_TFLOPS = 0;   ///< dense (no sparsity), FP32 accumulate; 0 = no FP8 tensor cores
  double dram_GBps = 0;
  double l2_MB = 0;
  int pcie_gen = 0;
  int pcie_width = 0;
  std::string source;
};

/// Parses the CSV text of cards.csv. Throws std::runtime_error naming the line on bad input.
std::vector<CardEntry> parse_card_table(const std::string& csv_text);

/// The table compiled into this binary.
const std::vector<CardEntry>& card_table();

/// The row whose key equals `key`.
std::optional<CardEntry> find_card_by_key(const std::string& key);
/// The first row whose `match` expression matches the device name (case-insensitive).
std::optional<CardEntry> find_card_by_device_name(const std::string& device_name);

/// Theoretical peaks for a device: datasheet figures where the table knows the card, formulas
/// otherwise; the PCIe figure always comes from the negotiated link when it is known.
Peaks theoretical_peaks(const DeviceDescription& d);

}  // namespace gpubench
