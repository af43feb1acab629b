// A bare GPU pointer chase, the memory suite's peer for host_device_latency: no gpubench code
// (only the CUDA runtime), so a harness mistake cannot hide in both. nvbandwidth 0.8's ring
// (8-byte pointers, 2 MiB, each 128 bytes past the last) in mapped pinned host memory, walked
// by one thread; the walk's end is checked against the ring's arithmetic before any time is
// reported. Launches of --accesses steps from block 0 of one block are timed with CUDA events
// for --min-time in --rounds rounds; the best round's ns per access is printed:
//   chase-bare host_device_latency ns_per_access=812.3 accesses=2000000 verified=yes
//   gpubench_perf_chase_gpu [--accesses N] [--min-time S] [--rounds N] [--plan]
// --plan prints "plan: 1 cases, about S s" without touching a GPU. Exit status: 0, 1 on a CUDA
// error or a wrong walk, 2 on bad usage, 0 with "not checked" where there is no GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "perf/bare_peer.hpp"

namespace {

constexpr std::size_t kBytes = std::size_t{2} << 20;
constexpr std::uint64_t kStride = 16;  // 8-byte words: 128 bytes

constexpr bare_peer::Program kProgram{"chase-bare",
                                     "gpubench_perf_chase_gpu [--accesses N] [--min-time S] [--rounds N] [--plan]"};
void usage(const std::string& why) { bare_peer::usage(kProgram, why); }

__global__ void walk(const std::uint64_t* start, std::uint64_t steps, std::uint64_t* end) {
  const std::uint64_t* p = start;
  for (std::uint64_t i = 0; i < steps; ++i) p = reinterpret_cast<const std::uint64_t*>(*p);
  *end = reinterpret_cast<std::uint64_t>(p);
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t accesses = 20000;
  double min_time = 0.5;
  int rounds = 3;
  bool plan = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + ": needs a value");
      return argv[++i];
    };
    char* end = nullptr;
    if (a == "--accesses") {
      const std::string v = value();
      accesses = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || accesses < 1 || accesses > 100000000) usage("--accesses " + v + ": expected 1 to 1e8");
    } else if (a == "--min-time") {
      min_time = bare_peer::parse_min_time(kProgram, value());
    } else if (a == "--rounds") {
      rounds = bare_peer::parse_rounds(kProgram, value());
    } else if (a == "--plan") {
      plan = true;
    } else {
      usage("unknown argument '" + a + "'");
    }
  }
  if (plan) {
    std::printf("plan: 1 cases, about %.1f s\n", rounds * min_time + 1.0 /* CUDA context */);
    return 0;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("chase-bare: not checked, no CUDA device\n");
    return 0;
  }
  const std::uint64_t words = kBytes / 8;
  std::uint64_t* host = nullptr;
  BARE_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host), kBytes, cudaHostAllocMapped));
  std::uint64_t* ring = nullptr;
  BARE_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&ring), host, 0));
  for (std::uint64_t i = 0; i < words; ++i) host[i] = reinterpret_cast<std::uint64_t>(ring + (i + kStride) % words);
  std::uint64_t* end = nullptr;
  BARE_CHECK(cudaMalloc(reinterpret_cast<void**>(&end), sizeof(std::uint64_t)));
  cudaStream_t stream;
  BARE_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // The check: an uneven walk ends where the arithmetic says.
  const std::uint64_t steps = 3 * words / kStride + 5;
  walk<<<1, 1, 0, stream>>>(ring, steps, end);
  BARE_CHECK(cudaGetLastError());
  std::uint64_t got = 0;
  BARE_CHECK(cudaMemcpyAsync(&got, end, sizeof got, cudaMemcpyDeviceToHost, stream));
  BARE_CHECK(cudaStreamSynchronize(stream));
  const std::uint64_t expected = reinterpret_cast<std::uint64_t>(ring + (kStride * steps) % words);
  if (got != expected) {
    std::fprintf(stderr, "chase-bare: the walk stopped at %#llx, expected %#llx: no time reported\n",
                 static_cast<unsigned long long>(got), static_cast<unsigned long long>(expected));
    return 1;
  }
  cudaEvent_t start, stop;
  BARE_CHECK(cudaEventCreate(&start));
  BARE_CHECK(cudaEventCreate(&stop));
  double best = 1e30;
  std::uint64_t total_accesses = 0;
  for (int r = 0; r < rounds; ++r) {
    double total = 0;
    std::uint64_t done = 0;
    while (total < min_time) {
      BARE_CHECK(cudaEventRecord(start, stream));
      walk<<<1, 1, 0, stream>>>(ring, accesses, end);
      BARE_CHECK(cudaEventRecord(stop, stream));
      BARE_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      BARE_CHECK(cudaEventElapsedTime(&ms, start, stop));
      total += ms * 1e-3;
      done += accesses;
    }
    total_accesses += done;
    best = std::min(best, total / static_cast<double>(done) * 1e9);
  }
  std::printf("chase-bare host_device_latency ns_per_access=%.1f accesses=%llu verified=yes\n", best,
              static_cast<unsigned long long>(total_accesses));
  BARE_CHECK(cudaEventDestroy(start));
  BARE_CHECK(cudaEventDestroy(stop));
  BARE_CHECK(cudaStreamDestroy(stream));
  BARE_CHECK(cudaFree(end));
  BARE_CHECK(cudaFreeHost(host));
  return 0;
}
