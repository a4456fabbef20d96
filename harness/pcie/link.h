// The PCIe link between the host and a GPU, read from Linux sysfs: the negotiated and the
// maximum generation and width, and the NUMA node the device hangs off. The negotiated link is
// the ceiling of every host<->device transfer (percent of link per result), and a link running
// below its maximum is a common fault on real nodes, so it gets a one-line warning.
// Pure C++ (no CUDA): the sysfs root is a parameter, so tests read fixture directories.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace gpubench::pcie {

/// The default sysfs mount point.
inline constexpr const char* kSysfsRoot = "/sys";

/// One end of a link description: generation (1..6) and lanes; 0 means unknown.
struct LinkState {
  int gen = 0;
  int width = 0;
  double speed_GTps = 0;  ///< per-lane transfer rate as sysfs wrote it (0 when unknown)
  bool known() const { return gen > 0 && width > 0; }
};

/// One link on the way from the root complex down to a device: the port or device at the lower
/// end of it (a root port, a switch's upstream or downstream port) and its negotiated state.
struct PathHop {
  std::string address;  ///< sysfs form, e.g. "0000:80:01.0"
  LinkState current;
};

/// What sysfs says about one PCI device.
struct PcieLink {
  std::string address;        ///< sysfs form "0000:3b:00.0"
  LinkState current;          ///< negotiated now
  LinkState max;              ///< the device's maximum
  int numa_node = -1;         ///< -1 when unknown or the machine has one node
  bool found = false;         ///< the device directory exists under the sysfs root
  std::string source;         ///< where the link came from: "sysfs", "nvml", "sysfs+nvml" or ""
  int max_payload_bytes = 0;  ///< negotiated MPS from config space (payload.h); 0 when unreadable
  /// The PCI devices above this one, root port first (the device itself excluded), from its
  /// real sysfs path (/sys/bus/pci/devices/<address> links into /sys/devices/pci<dd:bb>/...).
  /// A transfer crosses every one of these links: the slowest bounds it.
  std::vector<PathHop> upstream;
  /// True when both ends are known and the negotiated link is slower or narrower than the maximum.
  bool downgraded() const;
};

/// Maps a bus id as cudaDeviceGetPCIBusId ("0000:3B:00.0") or NVML ("00000000:3B:00.0") write it
/// to the sysfs directory name ("0000:3b:00.0"): lower-case hex, 4-digit domain. Throws
/// std::invalid_argument with one line when the string is not domain:bus:device.function.
std::string sysfs_pci_address(const std::string& bus_id);

/// Parses a sysfs link speed ("2.5 GT/s", "8.0 GT/s PCIe", "16 GT/s", "Unknown") to the
/// generation it belongs to (1..6); 0 for anything unrecognized. *GTps gets the rate if non-null.
int parse_link_speed_gen(const std::string& text, double* GTps = nullptr);

/// Parses a sysfs link width ("16", "x16"); 0 when not a positive number.
int parse_link_width(const std::string& text);

/// Reads current/max link speed and width and numa_node of `address` (sysfs form, or any form
/// sysfs_pci_address accepts) under `<sysfs_root>/bus/pci/devices/`. Missing or unreadable files
/// leave the fields unknown (never throws for I/O); a malformed address throws
/// std::invalid_argument as in sysfs_pci_address.
PcieLink read_pcie_link(const std::string& sysfs_root, const std::string& address);

/// NVIDIA GPUs lower their link speed when idle to save power, so an idle read can show Gen1
/// on a Gen5 card. When the first read looks downgraded, this runs `load` (which should move
/// data across the link for some milliseconds) and reads again (read_link_under_load: up to
/// kLinkReadsUnderLoad times while it still looks downgraded); the last read is the answer.
/// `*reread` (if non-null) tells whether the load was needed.
PcieLink read_pcie_link_under_load(const std::string& sysfs_root, const std::string& address,
                                   const std::function<void()>& load, bool* reread = nullptr);

/// Reads of a link under load before it is taken as downgraded: a link can take longer to
/// retrain than the load's first milliseconds, so one read after the load started may still see
/// the idle speed.
constexpr int kLinkReadsUnderLoad = 8;

/// The same with any reader (sysfs plus NVML, say): `read` is called once, or after `load` up to
/// kLinkReadsUnderLoad times more, `pause` apart (the load's transfers still in flight), until
/// the link no longer looks downgraded.
PcieLink read_link_under_load(const std::function<PcieLink()>& read, const std::function<void()>& load,
                              bool* reread = nullptr, std::chrono::milliseconds pause = std::chrono::milliseconds(5));

/// Completes the parts of `link` sysfs left unknown (a container without the device in its
/// /sys, a virtual machine's emulated port) with what NVML reports (generation 1..6 and width;
/// 0 = unknown), and records "nvml" in link.source. Parts sysfs knows are kept. Returns whether
/// anything was filled.
bool fill_unknown_link(PcieLink& link, const LinkState& nvml_current, const LinkState& nvml_max);

/// The slowest link upstream of the device when it is slower per direction than the device's
/// own negotiated link (a root port trained at x8 above an x16 card, a switch uplink shared by
/// two GPUs at a lower speed); nullptr when there is none or either side is unknown.
const PathHop* upstream_bottleneck(const PcieLink& link);

/// "0000:80:01.0 Gen4 x8 > 0000:81:00.0 Gen5 x16": the path from the root port down; the device
/// alone when nothing upstream is known.
std::string path_description(const PcieLink& link);

/// Every warning about the link, one line each: downgraded_link_warning, then
/// "warning: PCIe path of <dev> narrows to Gen4 x8 at 0000:80:01.0, upstream of its own Gen5 x16
/// link" when upstream_bottleneck finds one.
std::vector<std::string> link_warnings(const std::string& dev, const PcieLink& link);

/// "Gen5 x16"; "unknown" when generation or width is unknown.
std::string link_name(const LinkState& s);

/// Theoretical per-direction GB/s of the negotiated link (0 when unknown).
double link_GBps_per_direction(const LinkState& s);

/// "warning: PCIe link of <dev> runs at Gen4 x16, below its maximum Gen5 x16", or "" when the
/// link is not known to be downgraded.
std::string downgraded_link_warning(const std::string& dev, const PcieLink& link);

}  // namespace gpubench::pcie
