#include "harness/cuda/node_health.h"

#include <algorithm>
#include <vector>

#include "harness/cuda/nvml.h"

namespace gpubench {

namespace {

// NVML's declarations (nvml.h, NVML API reference): return codes, enum values, the process
// record of nvmlDeviceGetComputeRunningProcesses_v2/_v3 and the older one without instance ids.
using Device = void*;
constexpr int kSuccess = 0;
constexpr int kNotSupported = 3;
constexpr int kInsufficientSize = 7;
constexpr int kErrorCorrected = 0, kErrorUncorrected = 1;  // nvmlMemoryErrorType_t
constexpr int kVolatile = 0, kAggregate = 1;               // nvmlEccCounterType_t
constexpr int kRetiredMultipleSbe = 0, kRetiredDbe = 1;    // nvmlPageRetirementCause_t
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_memory;
  unsigned int gpu_instance;
  unsigned int compute_instance;
};
struct ProcessInfoV1 {
  unsigned int pid;
  unsigned long long used_memory;
};

template <class F>
F entry(const Nvml& nvml, const char* name) {
  return reinterpret_cast<F>(nvml.symbol(name));
}

std::optional<bool> enable_state(const Nvml& nvml, const char* name) {
  using Fn = int (*)(Device, unsigned int*, unsigned int*);
  const auto fn = entry<Fn>(nvml, name);
  unsigned int current = 0, pending = 0;
  if (!fn || fn(nvml.device_handle(), &current, &pending) != kSuccess) return std::nullopt;
  return current != 0;
}

std::optional<unsigned long long> ecc_count(const Nvml& nvml, int type, int counter) {
  using Fn = int (*)(Device, int, int, unsigned long long*);
  const auto fn = entry<Fn>(nvml, "nvmlDeviceGetTotalEccErrors");
  unsigned long long n = 0;
  if (!fn || fn(nvml.device_handle(), type, counter, &n) != kSuccess) return std::nullopt;
  return n;
}

// The count alone: a zero-sized buffer answers with the number of pages (or success at none).
std::optional<unsigned> retired(const Nvml& nvml, int cause) {
  using Fn = int (*)(Device, int, unsigned int*, unsigned long long*);
  const auto fn = entry<Fn>(nvml, "nvmlDeviceGetRetiredPages");
  unsigned int count = 0;
  if (!fn) return std::nullopt;
  const int rc = fn(nvml.device_handle(), cause, &count, nullptr);
  if (rc != kSuccess && rc != kInsufficientSize) return std::nullopt;
  return count;
}

template <class Info>
std::optional<std::vector<unsigned>> process_ids(const Nvml& nvml, const char* name) {
  using Fn = int (*)(Device, unsigned int*, Info*);
  const auto fn = entry<Fn>(nvml, name);
  if (!fn) return std::nullopt;
  std::vector<Info> infos(64);
  for (int attempt = 0; attempt < 3; ++attempt) {
    unsigned int count = static_cast<unsigned>(infos.size());
    const int rc = fn(nvml.device_handle(), &count, infos.data());
    if (rc == kSuccess) {
      std::vector<unsigned> ids;
      for (unsigned i = 0; i < count && i < infos.size(); ++i) ids.push_back(infos[i].pid);
      return ids;
    }
    if (rc != kInsufficientSize) return std::nullopt;
    infos.resize(count + 16);  // processes started meanwhile: ask again with room for them
  }
  return std::nullopt;
}

std::string yes_no(const std::optional<bool>& v) { return !v ? "unknown" : *v ? "yes" : "no"; }

template <class T>
std::string number(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "unknown";
}

}  // namespace

std::optional<OtherGpuProcesses> other_gpu_processes(const Nvml& nvml, int own_pid) {
  auto ids = process_ids<ProcessInfo>(nvml, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!ids) ids = process_ids<ProcessInfo>(nvml, "nvmlDeviceGetComputeRunningProcesses_v2");
  if (!ids) ids = process_ids<ProcessInfoV1>(nvml, "nvmlDeviceGetComputeRunningProcesses");
  if (!ids) return std::nullopt;
  OtherGpuProcesses o;
  const bool listed = std::find(ids->begin(), ids->end(), static_cast<unsigned>(own_pid)) != ids->end();
  o.pid_namespace = !listed && !ids->empty();
  for (unsigned pid : *ids) {
    if (static_cast<int>(pid) == own_pid) continue;
    o.ids += (o.ids.empty() ? "" : ",") + std::to_string(pid);
  }
  // This process is one of the listed, under its own id or under one it cannot know.
  o.count = ids->empty() ? 0 : static_cast<int>(ids->size()) - 1;
  if (o.count == 0) o.ids.clear();
  return o;
}

std::string other_gpu_processes_text(const std::optional<OtherGpuProcesses>& others) {
  if (!others) return "unknown";
  if (others->count == 0) return "0";
  return std::to_string(others->count) + " (pids " + others->ids +
         (others->pid_namespace ? "; one of them this process, seen from outside its PID namespace)" : ")");
}

NodeHealth read_node_health(const Nvml& nvml, int own_pid) {
  NodeHealth h;
  h.ecc_enabled = enable_state(nvml, "nvmlDeviceGetEccMode");
  if (h.ecc_enabled.value_or(false)) {
    h.ecc_corrected_volatile = ecc_count(nvml, kErrorCorrected, kVolatile);
    h.ecc_uncorrected_volatile = ecc_count(nvml, kErrorUncorrected, kVolatile);
    h.ecc_uncorrected_aggregate = ecc_count(nvml, kErrorUncorrected, kAggregate);
  }
  const auto sbe = retired(nvml, kRetiredMultipleSbe), dbe = retired(nvml, kRetiredDbe);
  if (sbe && dbe) h.retired_pages = *sbe + *dbe;
  {
    using Fn = int (*)(Device, unsigned int*);
    const auto fn = entry<Fn>(nvml, "nvmlDeviceGetRetiredPagesPendingStatus");
    unsigned int pending = 0;
    if (fn && fn(nvml.device_handle(), &pending) == kSuccess) h.retired_pages_pending = pending != 0;
  }
  {
    using Fn = int (*)(Device, unsigned int*, unsigned int*, unsigned int*, unsigned int*);
    const auto fn = entry<Fn>(nvml, "nvmlDeviceGetRemappedRows");
    unsigned int corrected = 0, uncorrected = 0, pending = 0, failed = 0;
    if (fn && fn(nvml.device_handle(), &corrected, &uncorrected, &pending, &failed) == kSuccess) {
      h.remapped_rows_uncorrectable = uncorrected;
      h.remap_pending = pending != 0;
      h.remap_failed = failed != 0;
    }
  }
  if (const auto others = other_gpu_processes(nvml, own_pid)) {
    h.other_processes = others->count;
    h.other_process_ids = others->ids;
    h.pid_namespace = others->pid_namespace;
  }
  {
    using Fn = int (*)(Device, unsigned int*, unsigned int*);
    const auto fn = entry<Fn>(nvml, "nvmlDeviceGetMigMode");
    unsigned int current = 0, pending = 0;
    const int rc = fn ? fn(nvml.device_handle(), &current, &pending) : -1;
    if (rc == kSuccess) h.mig_enabled = current != 0;
    if (rc == kNotSupported) h.mig_supported = false;
  }
  return h;
}

std::map<std::string, std::string> node_health_context(const NodeHealth& h) {
  std::map<std::string, std::string> c;
  c["ecc_mode"] = !h.ecc_enabled ? "unknown" : *h.ecc_enabled ? "on" : "off";
  c["ecc_errors_corrected_volatile"] = number(h.ecc_corrected_volatile);
  c["ecc_errors_uncorrected_volatile"] = number(h.ecc_uncorrected_volatile);
  c["ecc_errors_uncorrected_aggregate"] = number(h.ecc_uncorrected_aggregate);
  c["retired_pages"] = number(h.retired_pages);
  c["retired_pages_pending"] = yes_no(h.retired_pages_pending);
  c["remapped_rows_uncorrectable"] = number(h.remapped_rows_uncorrectable);
  c["row_remap_pending"] = yes_no(h.remap_pending);
  c["row_remap_failure"] = yes_no(h.remap_failed);
  c["other_gpu_processes"] =
      other_gpu_processes_text(h.other_processes ? std::optional<OtherGpuProcesses>(OtherGpuProcesses{
                                                       *h.other_processes, h.other_process_ids, h.pid_namespace})
                                                 : std::nullopt);
  c["mig_mode"] = !h.mig_supported ? "not supported" : !h.mig_enabled ? "unknown" : *h.mig_enabled ? "on" : "off";
  return c;
}

std::map<std::string, std::string> node_health_unknown(const std::string& why) {
  std::map<std::string, std::string> c = node_health_context(NodeHealth{});
  for (auto& [k, v] : c) v = "unknown (" + why + ")";
  return c;
}

}  // namespace gpubench
