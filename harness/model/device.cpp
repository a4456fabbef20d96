#include "harness/model/device.h"

namespace gpubench {

double dram_peak_GBps(double mem_clock_kHz, int bus_width_bits) {
  if (mem_clock_kHz <= 0 || bus_width_bits <= 0) return 0.0;
  // Double data rate: two transfers per memory clock, bus width in bits.
  return 2.0 * mem_clock_kHz * 1e3 * (bus_width_bits / 8.0) / 1e9;
}

int fp32_flop_per_clock_per_sm(int cc_major, int cc_minor) {
  const int cc = cc_major * 10 + cc_minor;
  switch (cc) {
    case 75: return 128;
    case 80: return 128;
    case 86:
    case 87:
    case 89: return 256;
    case 90: return 256;
    case 100:
    case 103:
    case 120: return 256;
    default: return 0;
  }
}

std::uint64_t l1_shared_bytes_per_sm(int cc_major, int cc_minor) {
  constexpr std::uint64_t KiB = 1024;
  switch (cc_major * 10 + cc_minor) {
    case 70:
    case 86:
    case 89:
    case 120:
    case 121: return 128 * KiB;
    case 75: return 96 * KiB;
    case 80:
    case 87: return 192 * KiB;
    case 90:
    case 100:
    case 103: return 256 * KiB;
    default: return 0;
  }
}

int fp16_tensor_flop_per_clock_per_sm(int cc_major, int cc_minor, bool geforce) {
  const int cc = cc_major * 10 + cc_minor;
  switch (cc) {
    case 75: return 1024;
    case 80: return 2048;
    case 86:
    case 89: return geforce ? 512 : 1024;
    case 90: return 4096;
    case 100: return 8192;
    default: return 0;
  }
}

int bf16_tensor_flop_per_clock_per_sm(int cc_major, int cc_minor, bool geforce) {
  return cc_major >= 8 ? fp16_tensor_flop_per_clock_per_sm(cc_major, cc_minor, geforce) : 0;
}

int fp8_tensor_flop_per_clock_per_sm(int cc_major, int cc_minor, bool geforce) {
  // FP8 tensor cores arrived with sm_89 and run at twice the FP16 rate (harness/model/REFERENCE_FIGURES.md); GeForce
  // Ada halves both with FP32 accumulate (RTX 4090: 330 FP8 against 165 FP16 TFLOPS).
  return cc_major * 10 + cc_minor >= 89 ? 2 * fp16_tensor_flop_per_clock_per_sm(cc_major, cc_minor, geforce) : 0;
}

double pcie_GBps_per_direction(int gen, int width) {
  if (width <= 0) return 0.0;
  // Per-lane transfer rate in GT/s and line-code efficiency of each generation.
  double gts = 0, efficiency = 128.0 / 130.0;
  switch (gen) {
    case 1:
      gts = 2.5;
      efficiency = 8.0 / 10.0;
      break;
    case 2:
      gts = 5.0;
      efficiency = 8.0 / 10.0;
      break;
    case 3: gts = 8.0; break;
    case 4: gts = 16.0; break;
    case 5: gts = 32.0; break;
    case 6:
      gts = 64.0;
      // PAM4 in FLIT mode: no 128b/130b code, but each 256-byte flit spends 6 bytes on FEC and
      // 8 on its CRC (what the line code costs the older generations); its other 242 bytes are
      // the link layer's (TLPs and DLLPs: pcie_protocol_GBps).
      efficiency = static_cast<double>(kFlitBytes - kFlitFecCrcBytes) / kFlitBytes;
      break;
    default: return 0.0;
  }
  return gts * width * efficiency / 8.0;
}

double pcie_protocol_GBps(double raw_GBps, int payload_bytes, int gen) {
  if (raw_GBps <= 0 || payload_bytes <= 0) return 0;
  if (gen >= 6) {
    // FLIT mode: 236 of a flit's 242 link-layer bytes carry TLPs (6 carry DLLPs), and a TLP
    // carries its header alone (no per-packet framing, sequence number or LCRC).
    const double tlp_share = static_cast<double>(kFlitTlpBytes) / (kFlitBytes - kFlitFecCrcBytes);
    return raw_GBps * tlp_share * payload_bytes / (payload_bytes + kFlitTlpHeaderBytes);
  }
  return raw_GBps * payload_bytes / (payload_bytes + kTlpOverheadBytes);
}

double smem_peak_GBps(const DeviceDescription& d) {
  if (d.cc_major < 7 || d.sm_count <= 0 || d.sm_clock_kHz <= 0) return 0;
  constexpr double kBytesPerClockPerSm = 128;  // 32 banks x 4 bytes
  return kBytesPerClockPerSm * d.sm_count * d.sm_clock_kHz * 1e3 / 1e9;
}

Peaks formula_peaks(const DeviceDescription& d) {
  Peaks p;
  p.smem_GBps = smem_peak_GBps(d);
  p.dram_GBps = dram_peak_GBps(d.mem_clock_kHz, d.bus_width_bits);
  const double clock_Hz = d.sm_clock_kHz * 1e3;
  p.fp32_TFLOPS = d.sm_count * fp32_flop_per_clock_per_sm(d.cc_major, d.cc_minor) * clock_Hz / 1e12;
  p.fp16_tensor_TFLOPS =
      d.sm_count * fp16_tensor_flop_per_clock_per_sm(d.cc_major, d.cc_minor, d.geforce) * clock_Hz / 1e12;
  p.bf16_tensor_TFLOPS =
      d.sm_count * bf16_tensor_flop_per_clock_per_sm(d.cc_major, d.cc_minor, d.geforce) * clock_Hz / 1e12;
  p.fp8_tensor_TFLOPS =
      d.sm_count * fp8_tensor_flop_per_clock_per_sm(d.cc_major, d.cc_minor, d.geforce) * clock_Hz / 1e12;
  p.pcie_GBps = pcie_GBps_per_direction(d.pcie_gen, d.pcie_width);
  p.pcie_protocol_GBps = pcie_protocol_GBps(
      p.pcie_GBps, d.pcie_max_payload_bytes > 0 ? d.pcie_max_payload_bytes : kAssumedMaxPayloadBytes, d.pcie_gen);
  p.source = "formula";
  return p;
}

TrafficGeometry traffic_geometry(const DeviceDescription& d, bool host_backend) {
  return host_backend ? kHostLines : gpu_traffic_geometry(d.l2_fetch_bytes, d.ecc);
}

}  // namespace gpubench
