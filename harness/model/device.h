// A description of one compute device (a GPU or the host), and the theoretical peaks derived
// from it. Pure C++: no CUDA include, so the model is unit tested on any machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/model/work_model.h"

namespace gpubench {

/// What the harness knows about a device: read from the CUDA runtime (or the host), optionally
/// completed from the card table. Zero means unknown.
struct DeviceDescription {
  std::string name;  ///< as the driver reports it, e.g. "NVIDIA H100 80GB HBM3"
  int cc_major = 0;  ///< compute capability (0 for the host)
  int cc_minor = 0;
  int sm_count = 0;            ///< SMs (GPU) or logical CPUs (host)
  double sm_clock_kHz = 0;     ///< maximum (boost) SM clock
  double mem_clock_kHz = 0;    ///< maximum memory clock, as cudaDevAttrMemoryClockRate reports it
  int bus_width_bits = 0;      ///< global memory bus width
  std::uint64_t l2_bytes = 0;  ///< last-level cache
  std::uint64_t memory_bytes = 0;
  int pcie_gen = 0;      ///< negotiated link generation (1..6)
  int pcie_width = 0;    ///< negotiated lanes
  int pcie_gen_max = 0;  ///< what the device supports
  int pcie_width_max = 0;
  int pcie_max_payload_bytes = 0;  ///< negotiated PCIe max payload size; 0 = unknown
  bool geforce = false;            ///< GeForce cards run FP16 tensor math with FP32 accumulate at half rate
  int l2_fetch_bytes = 0;          ///< L2 fetch granularity of a miss (cudaLimitMaxL2FetchGranularity), 0 = unknown
  bool ecc = false;                ///< ECC on device memory enabled
  int ordinal = -1;                ///< the CUDA device index (-1: the host backend)
  int visible_devices = 0;         ///< CUDA devices this process can see (peer-to-peer rows need two)
  /// By CUDA ordinal: the link to each other GPU from NVML's topology ("nvlink", "pcie_switch",
  /// ..., "unknown"; "" for itself); empty on the host.
  std::vector<std::string> peer_paths;
};

/// Theoretical peaks. 0 means unknown: the percentage is then left out, never invented.
struct Peaks {
  double dram_GBps = 0;
  double fp32_TFLOPS = 0;
  double fp16_tensor_TFLOPS = 0;  ///< dense, FP16 inputs, FP32 accumulate
  double bf16_tensor_TFLOPS = 0;  ///< dense, BF16 inputs, FP32 accumulate
  double fp8_tensor_TFLOPS = 0;   ///< dense (no sparsity), FP8 inputs, FP32 accumulate; 0 = no FP8 tensor cores
  double smem_GBps = 0;           ///< shared memory, all SMs: 128 B per clock per SM (sm_70 on)
  double pcie_GBps = 0;           ///< per direction, negotiated link
  double pcie_protocol_GBps = 0;  ///< the same after TLP overhead at the max payload size (pcie/payload.h)
  std::string source;             ///< "card table: <key>" or "formula"
};

/// Peak DRAM bandwidth in GB/s: 2 x memory clock x bus width / 8 (0 if either is unknown).
double dram_peak_GBps(double mem_clock_kHz, int bus_width_bits);

/// Dense FLOP per clock per SM for the architecture (FP32 CUDA cores), 0 when unknown.
int fp32_flop_per_clock_per_sm(int cc_major, int cc_minor);
/// The unified L1 data cache and shared memory of one SM, in bytes (the CUDA C++ Programming
/// Guide's table of compute capabilities: 256 KB on 9.0 and 10.x, 192 KB on 8.0 and 8.7, 128 KB
/// on 7.0, 8.6, 8.9 and 12.x); 0 when unknown. A set this large cannot be held by the L1.
std::uint64_t l1_shared_bytes_per_sm(int cc_major, int cc_minor);
/// Dense FP16-input FP32-accumulate tensor FLOP per clock per SM, 0 when unknown.
int fp16_tensor_flop_per_clock_per_sm(int cc_major, int cc_minor, bool geforce);
/// Dense BF16-input FP32-accumulate tensor FLOP per clock per SM: the FP16 rate on every
/// architecture with BF16 tensor cores (sm_80 on), 0 before or when unknown.
int bf16_tensor_flop_per_clock_per_sm(int cc_major, int cc_minor, bool geforce);
/// Dense FP8-input (E4M3/E5M2) FP32-accumulate tensor FLOP per clock per SM: twice the FP16 rate
/// from sm_89 on (Ada, Hopper, Blackwell), 0 before (no FP8 tensor cores) or when unknown.
int fp8_tensor_flop_per_clock_per_sm(int cc_major, int cc_minor, bool geforce);

/// Per-direction PCIe bandwidth in GB/s of a link (gen 1..6, width lanes) after the physical
/// layer's coding (8b/10b, 128b/130b; Gen6: each flit's FEC and CRC); 0 when unknown.
double pcie_GBps_per_direction(int gen, int width);

/// Bytes of TLP header (16, 64-bit addressing), sequence number and framing (4) and LCRC (4) in
/// every PCIe transaction layer packet up to Gen5 (harness/pcie/payload.h reads the payload size).
constexpr int kTlpOverheadBytes = 24;
/// Gen6 FLIT mode (PCIe 6.0): a 256-byte flit holds 236 bytes of TLPs, 6 of DLLPs, 8 of CRC and
/// 6 of FEC; a TLP there costs its header (16 bytes with 64-bit addressing) and nothing else.
constexpr int kFlitBytes = 256;
constexpr int kFlitFecCrcBytes = 14;
constexpr int kFlitTlpBytes = 236;
constexpr int kFlitTlpHeaderBytes = 16;
/// The max payload size assumed when config space cannot be read (common on GPUs and root ports).
constexpr int kAssumedMaxPayloadBytes = 256;
/// Data per direction of a link of `raw_GBps` (pcie_GBps_per_direction of generation `gen`)
/// whose packets carry `payload_bytes` (0 if unknown).
double pcie_protocol_GBps(double raw_GBps, int payload_bytes, int gen);

/// Shared-memory bandwidth of all SMs in GB/s: 32 banks x 4 bytes per clock per SM on
/// sm_70 and newer (0 for the host or when the clock is unknown).
double smem_peak_GBps(const DeviceDescription& d);

/// Peaks from formulas only (for cards the table lacks).
Peaks formula_peaks(const DeviceDescription& d);

/// The traffic geometry the byte models of device `d` assume: 64-byte lines on the host backend,
/// the GPU's sectors, fetch granularity and ECC read-fill otherwise.
TrafficGeometry traffic_geometry(const DeviceDescription& d, bool host_backend);

}  // namespace gpubench
