#include <fmt/format.h>

#include <algorithm>

#include "bench/core/sizes.hpp"
#include "bench/suites/memory/memory.hpp"
#include "kernels/memory/peak_reference.hpp"

namespace gpubench::suites::memory {
namespace {

using kernels::StreamOp;

class MemorySuite final : public Suite {
 public:
  explicit MemorySuite(Topology topology)
      : topology_(std::move(topology)), observations_(std::make_shared<Observations>()) {}

  std::string name() const override { return "memory"; }
  std::string description() const override {
    return "Ceilings: device and host memory bandwidth, host/device/peer copies, FMA and mma.sync peaks, launch and "
           "allocation overheads";
  }

  std::vector<AxisSpec> axes() const override {
    std::vector<std::string> names;
    for (const TestInfo& t : tests()) names.push_back(t.name);
    return {
        {"test", AxisKind::Enum, "benchmark (see docs/suite-memory.md)", names, 1},
        {"size", AxisKind::Int, "bytes per buffer for bandwidth, copy, peer and malloc tests; 0 for the others", {}, 0, {}, kMaxAxisBytes},
        {"peer", AxisKind::Int, "destination GPU ordinal of the p2p tests; 0 for the others", {}, 0, {}, 1023},
    };
  }

  std::vector<Preset> presets() const override {
    std::vector<std::string> gpu, cpu;
    for (const TestInfo& t : tests()) {
      if (t.on_cuda) gpu.push_back(t.name);
      if (t.on_cpu) cpu.push_back(t.name);
    }
    const std::string g = fmt::format("{}", fmt::join(gpu, ",")), c = fmt::format("{}", fmt::join(cpu, ","));
    // quick: the peer matrix with peer access only (G GPUs: G(G-1) pairs per size).
    std::string g_quick;
    for (const std::string& name : gpu) {
      if (name == "p2p_noaccess" || name == "p2p_bidir") continue;
      if (name.ends_with("_sm") && find_test(name)->group == Group::Pattern) continue;  // quick: copy engines only
      g_quick += (g_quick.empty() ? "" : ",") + name;
    }
    return {
        {"quick", {{"test", g_quick}, {"size", "0,4k,8M,256M"}, {"peer", "0:15:1"}}, {{"test", c}, {"size", "0,64M"}, {"peer", "0"}}},
        {"standard",
         {{"test", g}, {"size", "0,4k:4096M:x4"}, {"peer", "0:15:1"}},
         {{"test", c}, {"size", "0,256k:256M:x4"}, {"peer", "0"}}},
        {"full",
         {{"test", g}, {"size", "0,4k:8192M:x2"}, {"peer", "0:15:1"}},
         {{"test", c}, {"size", "0,16k:1024M:x2"}, {"peer", "0"}}},
    };
  }

  bool applies(const DeviceInfo& device, const Point& point) const override {
    observations_->record_device(device);
    const TestInfo* t = find_test(point.text("test"));
    if (t == nullptr) return false;
    if (t->sized != (point.integer("size") > 0)) return false;
    const std::int64_t peer = point.integer("peer");
    if (t->group == Group::Peer && device.is_cuda()) return peer_applies(device, peer, topology_.device_count());
    if (t->group == Group::Pattern && device.is_cuda() && peer == 0) {
      // The host patterns span every GPU in one case, planned on the first; the peer patterns
      // run per target GPU and need another GPU.
      const bool host_pattern = point.text("test").find("host") != std::string::npos;
      return host_pattern ? device.ordinal == 0 : topology_.device_count() >= 2;
    }
    return peer == 0;
  }

  std::optional<std::string> unsupported(const DeviceInfo& device, const Point& point) const override {
    const std::string& name = point.text("test");
    const TestInfo* t = find_test(name);
    if (t == nullptr) return "unknown test " + name;
    if (!device.is_cuda()) {
      if (!t->on_cpu) return fmt::format("{} needs a CUDA device", name);
    } else {
      if (!t->on_cuda) return fmt::format("{} runs on the CPU only", name);
      if (device.cc_major < 8) {
        return fmt::format("compute capability {}.{}: gpubench targets sm_80 and newer", device.cc_major, device.cc_minor);
      }
      if (auto mma = kernels::parse_mma_type(name.substr(name.find('_') + 1)); mma && name.rfind("mma_", 0) == 0) {
        const int arch = device.cc_major * 10 + device.cc_minor;
        if (arch < kernels::mma_min_arch(*mma)) {
          return fmt::format("{} needs compute capability {}.{} or newer (this GPU: {}.{})", name,
                             kernels::mma_min_arch(*mma) / 10, kernels::mma_min_arch(*mma) % 10, device.cc_major,
                             device.cc_minor);
        }
      }
      if (t->group == Group::Peer) {
        if (auto why = peer_unsupported(name, device, point.integer("peer"), topology_)) return why;
      }
      if (t->group == Group::Pattern) {
        if (auto why = pattern_unsupported(name, device, topology_)) return why;
      }
    }
    const std::int64_t size = point.integer("size");
    const bool vectorized = t->group == Group::Bandwidth || name == "h2d_sm" || name == "d2h_sm" ||
                            (t->group == Group::Pattern && name.ends_with("_sm"));
    if (vectorized && size % 16 != 0) return fmt::format("{} moves 16-byte vectors: size must be a multiple of 16", name);
    return std::nullopt;
  }

  // The Tensor Core peaks name their instruction (peak_plan_note, peak.cpp).
  std::optional<std::string> plan_note(const DeviceInfo& device, const Point& point) const override {
    return device.is_cuda() ? peak_plan_note(device, point.text("test")) : std::nullopt;
  }

  std::unique_ptr<Case> make_case(const DeviceInfo& device, const Point& point) const override {
    const std::string& name = point.text("test");
    const TestInfo& t = *find_test(name);
    const std::int64_t size = point.integer("size");
    if (!device.is_cuda()) {
      if (t.group == Group::Bandwidth) return make_host_bandwidth_case(*kernels::parse_stream_op(name), size);
      if (name == "host_latency") return make_host_latency_case(size);
      const bool f32 = name.rfind("fma_fp32", 0) == 0;
      const bool all_cores = name.find("_core") == std::string::npos;
      return make_host_fma_case(f32 ? kernels::HostFmaType::F32 : kernels::HostFmaType::F64, all_cores);
    }
    switch (t.group) {
      case Group::Bandwidth: return make_bandwidth_case(device, *kernels::parse_stream_op(name), size);
      case Group::Copy: return make_copy_case(device, name, size);
      case Group::Peer:
        if (name == "device_device_latency") return make_chase_case(device, name, static_cast<int>(point.integer("peer")));
        return make_peer_case(device, static_cast<int>(point.integer("peer")), name, size);
      case Group::Pattern: {
        // The host patterns span every GPU; with a device number beyond what the runtime
        // reports (an assumed plan), as many as that needs.
        const int gpus = std::max(topology_.device_count(), device.ordinal + 1);
        return make_pattern_case(device, name, size, gpus);
      }
      case Group::Peak: return make_peak_case(device, name, observations_);
      case Group::Latency:
        if (name == "host_device_latency") return make_chase_case(device, name, -1);
        return make_latency_case(device, name, size);
    }
    throw std::logic_error("memory: no case for " + name);
  }

  nlohmann::ordered_json summarize(const std::vector<nlohmann::ordered_json>& entries) const override {
    return memory::summarize(entries, *observations_);
  }

 private:
  Topology topology_;
  std::shared_ptr<Observations> observations_;
};

}  // namespace

const std::vector<TestInfo>& tests() {
  static const std::vector<TestInfo> all = [] {
    std::vector<TestInfo> v;
    auto add = [&](std::string name, Group g, bool sized, bool cuda, bool cpu, std::string help) {
      v.push_back({std::move(name), g, sized, cuda, cpu, std::move(help)});
    };
    for (const char* op : {"copy", "scale", "add", "triad", "dot", "fill"}) {
      add(op, Group::Bandwidth, true, true, true, "memory bandwidth, BabelStream-style array operation");
    }
    for (const char* c : {"h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable", "bidir_pinned", "bidir_pageable",
                          "d2d"}) {
      add(c, Group::Copy, true, true, false, "cudaMemcpyAsync (copy engines)");
    }
    add("h2d_sm", Group::Copy, true, true, false, "copy kernel reading mapped pinned host memory");
    add("d2h_sm", Group::Copy, true, true, false, "copy kernel writing mapped pinned host memory");
    add("p2p", Group::Peer, true, true, false, "cudaMemcpyPeerAsync with peer access enabled");
    add("p2p_noaccess", Group::Peer, true, true, false, "cudaMemcpyPeerAsync with peer access disabled");
    add("p2p_bidir", Group::Peer, true, true, false, "both directions at once, peer access enabled");
    for (const char* pattern : {"all_to_host", "host_to_all", "all_to_one", "one_to_all"}) {
      add(fmt::format("{}_ce", pattern), Group::Pattern, true, true, false,
          "every copy of the pattern at once, copy engines (nvbandwidth's *_memcpy_ce / *_write_ce)");
      add(fmt::format("{}_sm", pattern), Group::Pattern, true, true, false,
          "every copy of the pattern at once, copy kernels on the issuing GPUs (nvbandwidth's *_sm)");
    }
    add("device_device_latency", Group::Peer, false, true, false,
        "pointer chase from this GPU's SMs in the peer's memory, ns per access (nvbandwidth)");
    for (const char* d : {"fp64", "fp32"}) add(fmt::format("fma_{}", d), Group::Peak, false, true, true, "FMA chains");
    for (const char* d : {"fp16x2", "bf16x2", "int32"}) add(fmt::format("fma_{}", d), Group::Peak, false, true, false, "FMA chains");
    for (const char* d : {"fp16", "bf16", "tf32", "int8", "fp8"}) {
      add(fmt::format("mma_{}", d), Group::Peak, false, true, false,
          std::string(d) == "fp8" ? "Tensor Core loop: mma.sync on sm_89/sm_12x, wgmma on sm_90 (sm_90a code)"
                                  : "mma.sync loop (Tensor Cores)");
    }
    add("fma_fp64_core", Group::Peak, false, false, true, "FMA chains on one core");
    add("fma_fp32_core", Group::Peak, false, false, true, "FMA chains on one core");
    add("launch", Group::Latency, false, true, false, "empty kernel, launched and waited for (host clock)");
    add("launch_queue", Group::Latency, false, true, false, "empty kernels queued back to back (launch throughput)");
    add("graph_launch", Group::Latency, false, true, false, "one-kernel CUDA Graph, launched and waited for");
    add("graph_queue", Group::Latency, false, true, false, "one-kernel CUDA Graph, queued back to back");
    add("sync", Group::Latency, false, true, false, "event record + cudaEventSynchronize on an idle stream");
    add("malloc", Group::Latency, true, true, false, "cudaMalloc + cudaFree of size bytes");
    add("malloc_async", Group::Latency, true, true, false, "cudaMallocAsync + cudaFreeAsync (stream-ordered pool)");
    add("host_device_latency", Group::Latency, false, true, false,
        "pointer chase from an SM in mapped pinned host memory, ns per access (nvbandwidth)");
    add("host_latency", Group::Latency, true, false, true, "pointer chase in host memory in random order, ns per access");
    return v;
  }();
  return all;
}

const TestInfo* find_test(const std::string& name) {
  for (const TestInfo& t : tests()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::optional<std::string> pattern_unsupported(const std::string& test, const DeviceInfo& device, const Topology& topology) {
  if (!device.is_cuda()) return fmt::format("{} needs a CUDA device", test);
  const bool into = test.rfind("all_to_one", 0) == 0, out_of = test.rfind("one_to_all", 0) == 0;
  if (!into && !out_of) return std::nullopt;  // host patterns: every GPU reaches its host
  const int self = device.ordinal;
  for (int g = 0; g < topology.device_count(); ++g) {
    if (g == self) continue;
    // The issuing GPU writes into the other: the sources into this one, or this one into each.
    const int from = into ? g : self, to = into ? self : g;
    if (!topology.can_access(from, to)) {
      return fmt::format("{}: cuda:{} cannot access cuda:{} as a peer (cudaDeviceCanAccessPeer is 0)", test, from, to);
    }
  }
  return std::nullopt;
}

bool peer_applies(const DeviceInfo& device, std::int64_t peer, int device_count) {
  return device.is_cuda() && peer != device.ordinal && peer >= 0 && peer < device_count;
}

std::optional<std::string> peer_unsupported(const std::string& test, const DeviceInfo& device, std::int64_t peer,
                                            const Topology& topology) {
  if (!device.is_cuda()) return fmt::format("{} needs a CUDA device", test);
  if (peer == device.ordinal) return fmt::format("{}: cuda:{} is this device", test, peer);
  if (peer < 0 || peer >= topology.device_count()) return fmt::format("{}: there is no cuda:{}", test, peer);
  if (test != "p2p_noaccess" && !topology.can_access(device.ordinal, static_cast<int>(peer))) {
    return fmt::format("{}: cuda:{} cannot access cuda:{} as a peer (cudaDeviceCanAccessPeer is 0); p2p_noaccess "
                       "measures the staged path",
                       test, device.ordinal, peer);
  }
  return std::nullopt;
}

void Observations::record_device(const DeviceInfo& d) {
  std::lock_guard lock(mutex);
  devices[d.id()] = d;
}

void Observations::record_clock(const std::string& device_id, const std::string& test, double mhz) {
  std::lock_guard lock(mutex);
  sm_clock_mhz[device_id + "/" + test] = mhz;
}

double copy_bytes(const std::string& test, std::int64_t size) {
  const double s = static_cast<double>(size);
  if (test.rfind("bidir_", 0) == 0 || test == "p2p_bidir") return 2 * s;  // both directions
  if (test == "d2d") return 2 * s;                                        // read + write of device memory
  return s;                                                               // one crossing of the link
}

Metrics access_metrics(std::int64_t accesses) {
  Metrics m{0, 0, ""};
  m.items = static_cast<double>(accesses);
  m.items_unit = "accesses";
  return m;
}

void annotate_access(nlohmann::ordered_json& g, double seconds_per_run, std::int64_t accesses, std::size_t buffer_bytes,
                     const std::string& memory) {
  nlohmann::ordered_json& m = g["metrics"];
  m["ns_per_access"] = seconds_per_run * 1e9 / static_cast<double>(accesses);
  m["buffer_bytes"] = buffer_bytes;
  m["memory"] = memory;
}

std::vector<std::size_t> sample_indices(std::size_t n, std::size_t count) {
  std::vector<std::size_t> out;
  if (n == 0) return out;
  if (n <= count) {
    for (std::size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  out.push_back(0);
  out.push_back(n - 1);
  // A fixed odd stride walk (golden-ratio spacing) visits scattered indices, not just a grid.
  const std::size_t step = static_cast<std::size_t>(static_cast<double>(n) * 0.6180339887498949) | 1;
  std::size_t i = n / 2;
  while (out.size() < count) {
    out.push_back(i);
    i = (i + step) % n;
  }
  return out;
}

std::unique_ptr<Suite> make_suite() { return std::make_unique<MemorySuite>(cuda_topology()); }
std::unique_ptr<Suite> make_suite(Topology topology) { return std::make_unique<MemorySuite>(std::move(topology)); }

}  // namespace gpubench::suites::memory
