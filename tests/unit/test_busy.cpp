#include <gtest/gtest.h>

#include "bench/core/busy.hpp"
#include "fake_suite.hpp"

namespace gpubench {
namespace {

TEST(BusyGpu, OtherProcessesMakeADeviceBusyButNotOurOwn) {
  DeviceInfo gpu0 = testing::fake_gpu(0), gpu1 = testing::fake_gpu(1), gpu2 = testing::fake_gpu(2);
  gpu0.pci_bus_id = "0000:17:00.0";
  gpu1.pci_bus_id = "0000:65:00.0";
  gpu2.pci_bus_id = "0000:ca:00.0";
  auto query = [](const std::string& bus) -> std::optional<std::vector<nvml::GpuProcess>> {
    if (bus == "0000:17:00.0") {
      nvml::GpuProcess other{4242, std::uint64_t{3} << 30, "python"}, self{100, std::nullopt, "gpubench"};
      return std::vector<nvml::GpuProcess>{other, self};
    }
    if (bus == "0000:65:00.0") return std::vector<nvml::GpuProcess>{{100, std::nullopt, "gpubench"}};
    return std::nullopt;  // NVML could not answer: unknown, not busy
  };
  auto busy = find_busy_devices({gpu0, gpu1, gpu2, testing::fake_cpu()}, query, 100);
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(busy[0].device.id(), "cuda:0");
  EXPECT_EQ(describe(busy[0]), "cuda:0 (NVIDIA H100 80GB HBM3) is in use by 1 other process: 4242 python (3.0 GiB)");
  auto j = to_json(busy[0]);
  EXPECT_EQ(j["device"], "cuda:0");
  EXPECT_EQ(j["other_processes"][0]["pid"], 4242);
  EXPECT_EQ(j["other_processes"][0]["used_memory_bytes"], std::uint64_t{3} << 30);
}

}  // namespace
}  // namespace gpubench
