#include "harness/cuda/pcie_probe.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "harness/cuda/cuda_check.h"
#include "harness/cuda/device_buffer.h"
#include "harness/cuda/host_resources.h"
#include "harness/cuda/nvml.h"

namespace gpubench {

pcie::PcieLink probe_cuda_pcie_link(int device_index, const std::string& pci_bus_id, const Nvml* nvml,
                                    bool* read_under_load, const std::string& sysfs_root) {
  if (read_under_load) *read_under_load = false;
  pcie::PcieLink link;
  try {
    link.address = pcie::sysfs_pci_address(pci_bus_id);
  } catch (const std::invalid_argument&) {
    return link;  // not a PCI address as far as we can tell: everything unknown
  }
  // Declared outside the try, so the copies in flight are synchronized (in the try or in the
  // catch) before the buffers are freed.
  std::unique_ptr<HostBuffer> host;
  DeviceBuffer device;
  std::unique_ptr<OwnedStream> stream;
  // sysfs first; NVML, when the driver has it, completes what sysfs does not know.
  const auto read = [&] {
    pcie::PcieLink l = pcie::read_pcie_link(sysfs_root, pci_bus_id);
    if (nvml && !(l.current.known() && l.max.known())) {
      pcie::LinkState current, max;
      nvml->pcie_link(&current.gen, &current.width, &max.gen, &max.width);
      pcie::fill_unknown_link(l, current, max);
    }
    return l;
  };
  try {
    GPUBENCH_CUDA_CHECK(cudaSetDevice(device_index));
    constexpr std::size_t kLoadBytes = std::size_t{64} << 20;
    const auto load = [&] {
      stream = std::make_unique<OwnedStream>();
      host = std::make_unique<HostBuffer>(kLoadBytes, HostMemory::pinned);
      device = DeviceBuffer(kLoadBytes);
      // 32 x 64 MiB: 40 ms on Gen5 x16, 0.5 s at Gen1 x16; the link is read while they are in
      // flight (from 20 ms on, up to kLinkReadsUnderLoad times 5 ms apart while it reads low).
      for (int i = 0; i < 32; ++i) {
        GPUBENCH_CUDA_CHECK(
            cudaMemcpyAsync(device.get(), host->get(), kLoadBytes, cudaMemcpyHostToDevice, stream->get()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    };
    link = pcie::read_link_under_load(read, load, read_under_load);
    if (stream) GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream->get()));
  } catch (const std::exception&) {
    // No memory for the load, or a CUDA error: keep the idle read (it says what it says).
    if (stream) GPUBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream->get()));
    link = read();
    if (read_under_load) *read_under_load = false;
  }
  return link;
}

}  // namespace gpubench
