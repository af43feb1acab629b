// A bare cudaMemcpyAsync loop, the memory suite's peer for its d2d and h2d_pinned tests: no
// gpubench code at all (only the CUDA runtime), so a harness mistake cannot hide in both.
// Per copy kind: a pattern is copied once and checked byte for byte (a wrong copy reports no
// time), then batches of copies of about 50 ms each are timed with CUDA events on one stream
// until --min-time has passed, in --rounds rounds; the best round is reported (load only adds
// time). Async copies on a non-blocking stream, as the suite issues them: a synchronous
// cudaMemcpy would add a host round trip per copy that the suite does not pay.
// Bytes: d2d counts read + write (2 x size), h2d one crossing of the link (size), as the suite.
//   gpubench_perf_memcpy [--size BYTES (k, M: 1024, 1024^2)] [--min-time S] [--rounds N] [--plan]
// Output, one line per kind, for scripts (gpu-smoke.sh reads it):
//   memcpy-bare d2d size=268435456 s_per_copy=1.23e-04 gbps=4364.2 copies=4000 verified=yes
// --plan prints "plan: 2 cases, about S s" without touching a GPU. Exit status: 0, 1 on a
// CUDA error or a wrong copy, 2 on bad usage, 0 with "not checked" where there is no GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "perf/bare_peer.hpp"

namespace {

constexpr bare_peer::Program kProgram{"memcpy-bare", "gpubench_perf_memcpy [--size BYTES] [--min-time S] [--rounds N] [--plan]"};
void usage(const std::string& why) { bare_peer::usage(kProgram, why); }

// Byte i of the pattern: varies within every 4 KiB and from copy kind to copy kind.
unsigned char pattern(std::size_t i, unsigned seed) { return static_cast<unsigned char>((i * 131u + seed * 7u + (i >> 12)) & 0xff); }

struct Options {
  std::size_t size = std::size_t{256} << 20;
  double min_time = 0.5;
  int rounds = 3;
  bool plan = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + ": needs a value");
      return argv[++i];
    };
    char* end = nullptr;
    if (a == "--size") {
      // Bytes, or with gpubench's axis suffixes: k/K = 1024, M = 1024^2.
      const std::string v = value();
      unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (*end == 'k' || *end == 'K') n *= 1024, ++end;
      else if (*end == 'M') n *= 1024 * 1024, ++end;
      if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])) || *end != '\0' || n < 4096 || n > (1ull << 40)) {
        usage("--size " + v + ": expected 4096 to 2^40 bytes (k and M suffixes: 1024, 1024^2)");
      }
      o.size = static_cast<std::size_t>(n);
    } else if (a == "--min-time") {
      o.min_time = bare_peer::parse_min_time(kProgram, value());
    } else if (a == "--rounds") {
      o.rounds = bare_peer::parse_rounds(kProgram, value());
    } else if (a == "--plan") {
      o.plan = true;
    } else {
      usage("unknown argument '" + a + "'");
    }
  }
  return o;
}

struct Kind {
  const char* name;
  cudaMemcpyKind direction;
  double bytes_factor;  // bytes counted per copied byte
  unsigned seed;
};

// Best seconds per copy over the rounds, after one checked copy.
double measure(const Kind& k, const Options& o, void* dst, const void* src, unsigned char* check, cudaStream_t stream,
               long& copies) {
  BARE_CHECK(cudaMemcpyAsync(dst, src, o.size, k.direction, stream));
  BARE_CHECK(cudaStreamSynchronize(stream));
  BARE_CHECK(cudaMemcpy(check, dst, o.size, cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < o.size; ++i) {
    if (check[i] != pattern(i, k.seed)) {
      std::fprintf(stderr, "memcpy-bare %s: byte %zu is %u, expected %u: the copy is wrong, no time reported\n", k.name, i,
                   check[i], pattern(i, k.seed));
      std::exit(1);
    }
  }
  cudaEvent_t start, stop;
  BARE_CHECK(cudaEventCreate(&start));
  BARE_CHECK(cudaEventCreate(&stop));
  // One copy sizes the batches.
  BARE_CHECK(cudaEventRecord(start, stream));
  BARE_CHECK(cudaMemcpyAsync(dst, src, o.size, k.direction, stream));
  BARE_CHECK(cudaEventRecord(stop, stream));
  BARE_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  BARE_CHECK(cudaEventElapsedTime(&ms, start, stop));
  const int per_batch = std::clamp(static_cast<int>(0.05 / std::max(1e-7, ms * 1e-3)), 1, 100000);
  double best = 1e30;
  copies = 0;
  for (int r = 0; r < o.rounds; ++r) {
    double total = 0;
    long runs = 0;
    while (total < o.min_time) {
      BARE_CHECK(cudaEventRecord(start, stream));
      for (int i = 0; i < per_batch; ++i) BARE_CHECK(cudaMemcpyAsync(dst, src, o.size, k.direction, stream));
      BARE_CHECK(cudaEventRecord(stop, stream));
      BARE_CHECK(cudaEventSynchronize(stop));
      BARE_CHECK(cudaEventElapsedTime(&ms, start, stop));
      total += ms * 1e-3;
      runs += per_batch;
    }
    copies += runs;
    best = std::min(best, total / static_cast<double>(runs));
  }
  BARE_CHECK(cudaEventDestroy(start));
  BARE_CHECK(cudaEventDestroy(stop));
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const Kind kinds[] = {{"d2d", cudaMemcpyDeviceToDevice, 2.0, 1}, {"h2d_pinned", cudaMemcpyHostToDevice, 1.0, 2}};
  if (o.plan) {
    // Per kind: the timed rounds, plus filling and checking the pattern (about a second per GiB
    // on the host, an allowance) and a batch to size the loop.
    const double per_kind = o.rounds * o.min_time + static_cast<double>(o.size) / (1 << 30) + 0.05;
    std::printf("plan: 2 cases, about %.1f s\n", 2 * per_kind + 1.0 /* CUDA context */);
    return 0;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("memcpy-bare: not checked, no CUDA device\n");
    return 0;
  }
  cudaStream_t stream;
  BARE_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<unsigned char> check(o.size);
  void *dev_src = nullptr, *dev_dst = nullptr, *host_src = nullptr;
  BARE_CHECK(cudaMalloc(&dev_src, o.size));
  BARE_CHECK(cudaMalloc(&dev_dst, o.size));
  BARE_CHECK(cudaMallocHost(&host_src, o.size));
  for (const Kind& k : kinds) {
    // The source holds this kind's pattern (the device source is filled from the host once).
    auto* h = static_cast<unsigned char*>(host_src);
    for (std::size_t i = 0; i < o.size; ++i) h[i] = pattern(i, k.seed);
    const void* src = host_src;
    if (k.direction == cudaMemcpyDeviceToDevice) {
      BARE_CHECK(cudaMemcpy(dev_src, host_src, o.size, cudaMemcpyHostToDevice));
      src = dev_src;
    }
    BARE_CHECK(cudaMemset(dev_dst, 0, o.size));
    long copies = 0;
    const double s = measure(k, o, dev_dst, src, check.data(), stream, copies);
    std::printf("memcpy-bare %s size=%zu s_per_copy=%.6e gbps=%.1f copies=%ld verified=yes\n", k.name, o.size, s,
                k.bytes_factor * static_cast<double>(o.size) / s / 1e9, copies);
  }
  BARE_CHECK(cudaFreeHost(host_src));
  BARE_CHECK(cudaFree(dev_dst));
  BARE_CHECK(cudaFree(dev_src));
  BARE_CHECK(cudaStreamDestroy(stream));
  return 0;
}
