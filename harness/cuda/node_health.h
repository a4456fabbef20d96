// What NVML says about a GPU's health, for the acceptance run's likely causes: ECC mode and
// error counts, retired pages and remapped rows, other processes on the GPU, MIG mode. Recorded
// in every CUDA result's context ("unknown" where the driver cannot say; a GPU or driver
// without the feature answers "not supported").
#pragma once

#include <map>
#include <optional>
#include <string>

namespace gpubench {

class Nvml;

/// One reading; an empty optional is a query that failed or does not exist on this driver.
struct NodeHealth {
  std::optional<bool> ecc_enabled;
  std::optional<unsigned long long> ecc_corrected_volatile;
  std::optional<unsigned long long> ecc_uncorrected_volatile;
  std::optional<unsigned long long> ecc_uncorrected_aggregate;
  std::optional<unsigned> retired_pages;  ///< single-bit and double-bit causes together (pre-Ampere)
  std::optional<bool> retired_pages_pending;
  std::optional<unsigned> remapped_rows_uncorrectable;  ///< row remapping (Ampere and newer)
  std::optional<bool> remap_pending;
  std::optional<bool> remap_failed;
  std::optional<int> other_processes;  ///< compute processes on the GPU besides this one
  std::string other_process_ids;       ///< their ids, comma-separated
  /// This process's id was not among NVML's (a PID namespace: a container): one of the listed
  /// ids is this process's, seen from outside.
  bool pid_namespace = false;
  std::optional<bool> mig_enabled;
  bool mig_supported = true;  ///< false when NVML says the GPU has no MIG
};

/// Reads every field NVML can give (each optional: an old driver lacks some entry points).
NodeHealth read_node_health(const Nvml& nvml, int own_pid);

/// The compute processes on the GPU besides this one, from NVML (nullopt: it cannot list them).
/// Asked while this process holds a context on the GPU, so this process is in NVML's list: when
/// `own_pid` is not (NVML gives ids as the host sees them, and a container has its own), one
/// of the listed processes is this one, and `pid_namespace` says so.
struct OtherGpuProcesses {
  int count = 0;
  std::string ids;  ///< every listed id but this process's, comma-separated (all of them in a namespace)
  bool pid_namespace = false;
};
std::optional<OtherGpuProcesses> other_gpu_processes(const Nvml& nvml, int own_pid);

/// The context's words for them: "0", "1 (pids 4242)", "unknown"; in a PID namespace the ids
/// include this process's, and the text says so.
std::string other_gpu_processes_text(const std::optional<OtherGpuProcesses>& others);

/// The context entries: ecc_mode, ecc_errors_corrected_volatile,
/// ecc_errors_uncorrected_volatile, ecc_errors_uncorrected_aggregate, retired_pages,
/// retired_pages_pending, remapped_rows_uncorrectable, row_remap_pending, row_remap_failure,
/// other_gpu_processes, mig_mode.
std::map<std::string, std::string> node_health_context(const NodeHealth& h);

/// The same entries when there is no NVML to ask (value: "unknown (<why>)").
std::map<std::string, std::string> node_health_unknown(const std::string& why);

}  // namespace gpubench
