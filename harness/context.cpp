#include "harness/context.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>

#include "harness/memory_check.h"
#include "harness/model/band_table.h"
#include "harness/model/card_table.h"
#include "version.h"

namespace gpubench {

namespace {

std::string number_or_unknown(double v) {
  if (!(v > 0)) return "unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Sizes in bytes exactly: "%.6g" wrote a 32 MiB cache as 3.35544e+07, 32 bytes short, which put
// a 16 MiB working set past half of it in the scripts' reading.
std::string bytes_or_unknown(std::uint64_t v) { return v == 0 ? "unknown" : std::to_string(v); }

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

const char* const kRequired[] = {"gpubench_version",
                                 "git_revision",
                                 "backend",
                                 "device_name",
                                 "device_key",
                                 "cc",
                                 "sm_count",
                                 "sm_clock_MHz",
                                 "mem_clock_MHz",
                                 "bus_width_bits",
                                 "l2_bytes",
                                 "memory_bytes",
                                 "peak_dram_GBps",
                                 "peak_fp32_TFLOPS",
                                 "peak_fp16_tensor_TFLOPS",
                                 "peak_bf16_tensor_TFLOPS",
                                 "peak_fp8_tensor_TFLOPS",
                                 "peak_smem_GBps",
                                 "peak_pcie_h2d_GBps",
                                 "peak_pcie_d2h_GBps",
                                 "peaks_source",
                                 "driver_version",
                                 "runtime_version",
                                 "cache_policy",
                                 "byte_convention",
                                 "traffic_model",
                                 "quick",
                                 "run_started_utc",
                                 "device_ordinal",
                                 "memory_total_bytes",
                                 "memory_free_start_bytes",
                                 "memory_free_end_bytes",
                                 "memory_leak_check",
                                 nullptr};

}  // namespace

std::map<std::string, std::string> acceptance_context(const DeviceDescription& d, const std::string& backend_kind) {
  if (backend_kind == "host") return {{"card_key", "none"}, {"expected_bands", "none (host backend)"}};
  const std::optional<CardEntry> card = find_card_by_device_name(d.name);
  // The bands of the link the card is built for; a link trained below it then reads low.
  const std::string link = link_key(d.pcie_gen_max > 0 ? d.pcie_gen_max : d.pcie_gen,
                                    d.pcie_width_max > 0 ? d.pcie_width_max : d.pcie_width);
  const std::vector<Band> bands = bands_for(card ? card->key : "", link);
  std::map<std::string, std::string> c;
  c["card_key"] = card ? card->key : "none";
  if (bands.empty()) {
    c["expected_bands"] = "none for this card (" + d.name + "): numbers without a verdict";
  } else {
    c["expected_bands"] = std::to_string(bands.size()) + " checks for " + (card ? card->display_name : d.name) +
                          (link.empty() ? "" : ", " + link) + " (harness/model/bands.csv; scripts/validate.py)";
  }
  return c;
}

const char* const* required_context_keys() { return kRequired; }

std::map<std::string, std::string> result_context(const Backend& backend, bool quick,
                                                  const std::optional<MemoryReading>& memory_start) {
  const DeviceDescription& d = backend.device();
  const Peaks& p = backend.peaks();
  std::map<std::string, std::string> c;
  c["gpubench_version"] = GPUBENCH_VERSION;
  c["git_revision"] = GPUBENCH_GIT_REVISION;
  c["backend"] = backend.kind();
  c["device_name"] = d.name;
  c["device_key"] = backend.device_key();
  c["cc"] = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
  c["sm_count"] = std::to_string(d.sm_count);
  c["sm_clock_MHz"] = number_or_unknown(d.sm_clock_kHz / 1e3);
  c["mem_clock_MHz"] = number_or_unknown(d.mem_clock_kHz / 1e3);
  c["bus_width_bits"] = number_or_unknown(d.bus_width_bits);
  c["l2_bytes"] = bytes_or_unknown(d.l2_bytes);
  c["memory_bytes"] = bytes_or_unknown(d.memory_bytes);
  c["peak_dram_GBps"] = number_or_unknown(p.dram_GBps);
  c["peak_fp32_TFLOPS"] = number_or_unknown(p.fp32_TFLOPS);
  c["peak_fp16_tensor_TFLOPS"] = number_or_unknown(p.fp16_tensor_TFLOPS);
  c["peak_bf16_tensor_TFLOPS"] = number_or_unknown(p.bf16_tensor_TFLOPS);
  c["peak_fp8_tensor_TFLOPS"] = number_or_unknown(p.fp8_tensor_TFLOPS);  // "unknown" also where no FP8 cores
  c["peak_smem_GBps"] = number_or_unknown(p.smem_GBps);
  c["peak_pcie_h2d_GBps"] = number_or_unknown(p.pcie_GBps);
  c["peak_pcie_d2h_GBps"] = number_or_unknown(p.pcie_GBps);
  c["peak_pcie_protocol_GBps"] = number_or_unknown(p.pcie_protocol_GBps);
  c["peaks_source"] = p.source.empty() ? "unknown" : p.source;
  c["driver_version"] = "none";
  c["runtime_version"] = "none";
  c["cache_policy"] = "none";
  c["byte_convention"] =
      "GB/s = 1e9 bytes/s of useful bytes; a copy counts bytes read plus bytes written (2 x size), "
      "as STREAM and BabelStream do; sector_GB/s counts the traffic the accesses imply (traffic_model: "
      "32-byte sectors and the L2 fetch unit on a GPU, 64-byte cache lines on the host backend)";
  c["traffic_model"] = describe_traffic(traffic_geometry(d, backend.kind() == "host"));
  c["quick"] = quick ? "true" : "false";
  c["run_started_utc"] = utc_now();
  // Which GPU of the node (Google Benchmark writes host_name): a fleet store holds many nodes
  // and GPUs of one card (scripts/fleet.py).
  c["device_ordinal"] = d.ordinal >= 0 ? std::to_string(d.ordinal) : "host";
  for (const auto& [k, v] : start_memory_context(memory_start)) c[k] = v;
  for (const auto& [k, v] : acceptance_context(d, backend.kind())) c[k] = v;
  // The backend's own entries (driver, runtime, cache policy, link ...) override the defaults.
  for (const auto& [k, v] : backend.context()) c[k] = v;
  return c;
}

void publish_context(const Backend& backend, bool quick, const std::optional<MemoryReading>& memory_start) {
  for (const auto& [k, v] : result_context(backend, quick, memory_start)) benchmark::AddCustomContext(k, v);
}

}  // namespace gpubench
