// The NVML binding against the fake libnvidia-ml.so.1 (tests/fakes/fake_nvml.cpp), which
// ctest puts on LD_LIBRARY_PATH for this binary: the public queries, as the run command's
// busy-GPU check will use them, without a driver.
#include <gtest/gtest.h>
#include <unistd.h>

#include "bench/core/nvml.hpp"

namespace gpubench::nvml {
namespace {

TEST(NvmlFake, Loads) {
  ASSERT_TRUE(available()) << unavailable_reason() << " (run through ctest, which sets LD_LIBRARY_PATH)";
  EXPECT_EQ(driver_version(), "580.65.06");
  EXPECT_EQ(device_count(), 1u);
}

TEST(NvmlFake, ComputeProcessesByEitherBusIdForm) {
  ASSERT_TRUE(available());
  for (const char* bus : {"0000:17:00.0", "00000000:17:00.0"}) {
    const auto procs = compute_processes(bus);
    ASSERT_TRUE(procs.has_value()) << bus;
    ASSERT_EQ(procs->size(), 3u);
    EXPECT_EQ((*procs)[0].pid, static_cast<unsigned>(::getpid()));  // the caller is listed; callers filter
    EXPECT_EQ((*procs)[0].used_memory_bytes, 512ULL << 20);
    EXPECT_FALSE((*procs)[0].name.empty());  // our own /proc/<pid>/comm
    EXPECT_EQ((*procs)[1].pid, 1u);
    EXPECT_EQ((*procs)[1].used_memory_bytes, 1ULL << 30);
    EXPECT_EQ((*procs)[2].pid, 4000000u);
    EXPECT_EQ((*procs)[2].used_memory_bytes, std::nullopt);  // NVML_VALUE_NOT_AVAILABLE
  }
  EXPECT_EQ(compute_processes("0000:18:00.0"), std::nullopt);  // no such GPU
}

TEST(NvmlFake, DeviceStatus) {
  ASSERT_TRUE(available());
  const auto s = device_status(0);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->name, "Fake GPU");
  EXPECT_EQ(s->pci_bus_id, "0000:17:00.0");
  EXPECT_EQ(s->pcie_width, 8u);
  EXPECT_EQ(s->pcie_max_width, 16u);
  EXPECT_EQ(s->mig_enabled, std::nullopt);  // NOT_SUPPORTED
  EXPECT_EQ(s->ecc_corrected_aggregate, 40u);
  EXPECT_EQ(s->clocks_event_reasons, kClocksEventGpuIdle);
  EXPECT_EQ(s->cpu_affinity, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(device_status(1), std::nullopt);
  const Clocks c = clocks("0000:17:00.0");
  EXPECT_EQ(c.sm_mhz, 345);
  EXPECT_EQ(c.max_sm_mhz, 1980);
}

}  // namespace
}  // namespace gpubench::nvml
