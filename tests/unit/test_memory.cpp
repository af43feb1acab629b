#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include "bench/core/harness.hpp"
#include "bench/core/plan.hpp"
#include "bench/suites/memory/memory.hpp"
#include "fake_suite.hpp"
#include "test_util.hpp"
#include "kernels/common/random.hpp"
#include "kernels/memory/host_fma.hpp"
#include "kernels/memory/host_pool.hpp"
#include "kernels/memory/peak_inputs.hpp"
#include "kernels/memory/peak_reference.hpp"
#include "kernels/memory/pointer_chase.hpp"
#include "kernels/memory/stream_reference.hpp"

namespace gpubench {
namespace {

namespace mem = suites::memory;
using kernels::StreamOp;
using Json = nlohmann::ordered_json;

Point point(const std::string& test, std::int64_t size, std::int64_t peer = 0) {
  Point p;
  p.set("test", test);
  p.set("size", size);
  p.set("peer", peer);
  return p;
}

// Three GPUs; cuda:0 and cuda:2 cannot reach each other directly.
mem::Topology three_gpus() {
  return {[] { return 3; }, [](int a, int b) { return !((a == 0 && b == 2) || (a == 2 && b == 0)); }};
}

DeviceInfo gpu(int ordinal, int major = 9, int minor = 0) {
  DeviceInfo d = testing::fake_gpu(ordinal);
  d.cc_major = major;
  d.cc_minor = minor;
  d.sm_count = 132;
  d.max_sm_clock_mhz = 1980;
  return d;
}

// ---- byte and FLOP accounting -------------------------------------------------------------

TEST(MemoryAccounting, StreamBytesCountReadsAndWrites) {
  const double s = 1 << 20;
  EXPECT_DOUBLE_EQ(kernels::stream_bytes(StreamOp::Copy, s), 2 * s);
  EXPECT_DOUBLE_EQ(kernels::stream_bytes(StreamOp::Scale, s), 2 * s);
  EXPECT_DOUBLE_EQ(kernels::stream_bytes(StreamOp::Add, s), 3 * s);
  EXPECT_DOUBLE_EQ(kernels::stream_bytes(StreamOp::Triad, s), 3 * s);
  EXPECT_DOUBLE_EQ(kernels::stream_bytes(StreamOp::Dot, s), 2 * s);
  EXPECT_DOUBLE_EQ(kernels::stream_bytes(StreamOp::Fill, s), 1 * s);
  for (const char* name : {"copy", "scale", "add", "triad", "dot", "fill"}) {
    auto op = kernels::parse_stream_op(name);
    ASSERT_TRUE(op);
    EXPECT_STREQ(kernels::stream_op_name(*op), name);
  }
  EXPECT_FALSE(kernels::parse_stream_op("stream"));
}

TEST(MemoryAccounting, CopyBytes) {
  EXPECT_DOUBLE_EQ(mem::copy_bytes("h2d_pinned", 4096), 4096);
  EXPECT_DOUBLE_EQ(mem::copy_bytes("d2h_pageable", 4096), 4096);
  EXPECT_DOUBLE_EQ(mem::copy_bytes("h2d_sm", 4096), 4096);
  EXPECT_DOUBLE_EQ(mem::copy_bytes("bidir_pinned", 4096), 8192);  // both directions
  EXPECT_DOUBLE_EQ(mem::copy_bytes("bidir_pageable", 4096), 8192);
  EXPECT_DOUBLE_EQ(mem::copy_bytes("d2d", 4096), 8192);  // read + write of device memory
  EXPECT_DOUBLE_EQ(mem::copy_bytes("p2p", 4096), 4096);
  EXPECT_DOUBLE_EQ(mem::copy_bytes("p2p_noaccess", 4096), 4096);
  EXPECT_DOUBLE_EQ(mem::copy_bytes("p2p_bidir", 4096), 8192);
}

TEST(MemoryAccounting, FmaChainFlops) {
  using kernels::FmaType;
  // threads x 8 chains x iterations x (2, or 4 for packed pairs)
  EXPECT_DOUBLE_EQ(kernels::fma_flops(FmaType::F32, 1000, 10), 1000.0 * 8 * 10 * 2);
  EXPECT_DOUBLE_EQ(kernels::fma_flops(FmaType::F64, 1000, 10), 1000.0 * 8 * 10 * 2);
  EXPECT_DOUBLE_EQ(kernels::fma_flops(FmaType::I32, 1000, 10), 1000.0 * 8 * 10 * 2);
  EXPECT_DOUBLE_EQ(kernels::fma_flops(FmaType::F16x2, 1000, 10), 1000.0 * 8 * 10 * 4);
  EXPECT_DOUBLE_EQ(kernels::fma_flops(FmaType::BF16x2, 1000, 10), 1000.0 * 8 * 10 * 4);
}

TEST(MemoryAccounting, MmaShapesAndFlops) {
  using kernels::MmaType;
  for (MmaType t : {MmaType::F16, MmaType::BF16, MmaType::TF32, MmaType::I8, MmaType::FP8}) {
    const auto s = kernels::mma_shape(t);
    // Every A element is held by exactly one lane: M*K = 32 lanes x elements per lane, which
    // the kernel packs into 4 registers of 32 bits.
    EXPECT_EQ(s.m * s.k, 32 * s.a_elements_per_lane);
    EXPECT_EQ(s.m, 16);
    EXPECT_EQ(s.n, 8);
    const int bits = t == MmaType::TF32 ? 32 : (t == MmaType::F16 || t == MmaType::BF16) ? 16 : 8;
    EXPECT_EQ(s.a_elements_per_lane * bits, 4 * 32);
  }
  // warps x 4 accumulators x iterations x 2*M*N*K
  EXPECT_DOUBLE_EQ(kernels::mma_flops(MmaType::F16, 10, 100), 10.0 * 4 * 100 * 2 * 16 * 8 * 16);
  EXPECT_DOUBLE_EQ(kernels::mma_flops(MmaType::TF32, 10, 100), 10.0 * 4 * 100 * 2 * 16 * 8 * 8);
  EXPECT_DOUBLE_EQ(kernels::mma_flops(MmaType::I8, 10, 100), 10.0 * 4 * 100 * 2 * 16 * 8 * 32);
  EXPECT_DOUBLE_EQ(kernels::mma_flops(MmaType::FP8, 10, 100), 10.0 * 4 * 100 * 2 * 16 * 8 * 32);
  EXPECT_EQ(kernels::mma_min_arch(MmaType::FP8), 89);
  EXPECT_EQ(kernels::mma_min_arch(MmaType::BF16), 80);
}

TEST(MemoryAccounting, HostFmaFlops) {
  for (auto type : {kernels::HostFmaType::F32, kernels::HostFmaType::F64}) {
    const auto path = kernels::host_fma_path(type);
    EXPECT_DOUBLE_EQ(kernels::host_fma_flops(path, 1000), 2.0 * path.chains * path.lanes * 1000);
  }
  // A double vector holds half as many lanes as a float vector of the same width.
  EXPECT_EQ(kernels::host_fma_path(kernels::HostFmaType::F32).lanes, 2 * kernels::host_fma_path(kernels::HostFmaType::F64).lanes);
}

// ---- references ----------------------------------------------------------------------------

TEST(MemoryReference, StreamExpectedValues) {
  for (std::size_t i : {std::size_t{0}, std::size_t{17}, std::size_t{123456}}) {
    const double a = kernels::stream_initial(0, i), b = kernels::stream_initial(1, i), c = kernels::stream_initial(2, i);
    EXPECT_EQ(kernels::stream_expected(StreamOp::Copy, i), a);
    EXPECT_EQ(kernels::stream_expected(StreamOp::Scale, i), 0.4 * c);
    EXPECT_EQ(kernels::stream_expected(StreamOp::Add, i), a + b);
    EXPECT_EQ(kernels::stream_expected(StreamOp::Triad, i), b + 0.4 * c);
    EXPECT_EQ(kernels::stream_expected(StreamOp::Fill, i), kernels::kFillValue);
    EXPECT_NE(a, b);  // the three arrays differ
  }
  // The initial values are the device fill's: uniform_value(seed, i) widened to double.
  EXPECT_EQ(kernels::stream_initial(1, 99), static_cast<double>(kernels::uniform_value(kernels::kStreamSeed[1], 99)));
}

TEST(MemoryReference, HostStreamMatchesReference) {
  const std::size_t n = 10000;
  std::vector<double> a(n), b(n), c(n);
  for (StreamOp op : {StreamOp::Copy, StreamOp::Scale, StreamOp::Add, StreamOp::Triad, StreamOp::Fill}) {
    kernels::host_stream_init(a.data(), b.data(), c.data(), n);
    kernels::host_stream_run(op, a.data(), b.data(), c.data(), n);
    const int out = kernels::stream_output(op);
    const std::vector<double>& o = out == 0 ? a : out == 1 ? b : c;
    for (std::size_t i = 0; i < n; i += 7) ASSERT_NEAR(o[i], kernels::stream_expected(op, i), 1e-15) << i;
  }
  kernels::host_stream_init(a.data(), b.data(), c.data(), n);
  const double dot = kernels::host_stream_run(StreamOp::Dot, a.data(), b.data(), c.data(), n);
  const auto ref = kernels::stream_dot_reference(n);
  EXPECT_NEAR(dot, ref.value, 1e-12 * ref.abs_sum);
  EXPECT_GT(ref.abs_sum, 100.0);  // random inputs, not zeros
}

TEST(MemoryReference, HostFmaRunMatchesScalarChain) {
  for (auto type : {kernels::HostFmaType::F32, kernels::HostFmaType::F64}) {
    const auto path = kernels::host_fma_path(type);
    std::vector<double> out(static_cast<std::size_t>(path.chains * path.lanes));
    kernels::host_fma_run(type, 1000, out.data());
    for (int j = 0; j < path.chains * path.lanes; ++j) {
      const double want = kernels::host_fma_reference(type, path, j, 1000);
      EXPECT_EQ(out[static_cast<std::size_t>(j)], want) << path.isa << " lane " << j;
      EXPECT_NE(want, kernels::host_fma_start(j));  // the chain moved
    }
  }
}

TEST(MemoryReference, FmaReferenceChains) {
  using kernels::FmaType;
  // Zero steps: the sum of the start values as the type stores them.
  double starts = 0;
  for (int k = 0; k < kernels::kFmaChains; ++k) starts += static_cast<float>(kernels::fma_start(5, k, 0));
  EXPECT_EQ(kernels::fma_reference(FmaType::F32, 5, 0), starts);
  // One fp64 step by hand.
  double one = 0;
  for (int k = 0; k < kernels::kFmaChains; ++k) one += std::fma(kernels::fma_start(3, k, 0), 0.999, 0.001);
  EXPECT_EQ(kernels::fma_reference(FmaType::F64, 3, 1), one);
  // The start values lie in [0.5, 1) and the 16-bit chains stay near their fixed point 1.
  for (int k = 0; k < kernels::kFmaChains; ++k) {
    EXPECT_GE(kernels::fma_start(7, k, 1), 0.5);
    EXPECT_LT(kernels::fma_start(7, k, 1), 1.0);
  }
  const double h = kernels::fma_reference(FmaType::F16x2, 7, 2000);
  EXPECT_NEAR(h, 16.0, 16 * 0.02);
  EXPECT_NE(kernels::fma_reference(FmaType::I32, 1, 100), kernels::fma_reference(FmaType::I32, 2, 100));
}

TEST(MemoryReference, MmaWarpSumIsLayoutFreeSumOfA) {
  using kernels::MmaType;
  for (MmaType t : {MmaType::F16, MmaType::TF32, MmaType::I8, MmaType::FP8}) {
    const auto s = kernels::mma_shape(t);
    double a_sum = 0;
    std::set<double> values;
    for (int lane = 0; lane < 32; ++lane)
      for (int e = 0; e < s.a_elements_per_lane; ++e) {
        const double v = kernels::mma_a_value(t, 4, lane, e);
        values.insert(v);
        a_sum += v;
        // k/8 with |k| <= 8 (int8: k; fp8 the wgmma scheme, |k| <= 16): exact in every input format.
        const double k = t == MmaType::I8 ? v : v * 8;
        EXPECT_EQ(k, std::round(k));
        EXPECT_LE(std::fabs(k), t == MmaType::FP8 ? 16.0 : 8.0);
      }
    EXPECT_GT(values.size(), 8u);  // random, not constant
    if (t == MmaType::FP8) {
      // Issue 25 item 8: each register's 4 values sum to the warp's T, so every row of the
      // m16n8k32 fragment (8 registers) sums to T, and with B alternating +r, -r each D element
      // moves between 0 and T/2: exact, checked with the fp32 tolerance.
      const int tw = kernels::wgmma_fp8_register_sum(4);
      for (int lane = 0; lane < 32; ++lane)
        for (int r = 0; r < 4; ++r) {
          double reg = 0;
          for (int i = 0; i < 4; ++i) reg += kernels::mma_a_value(t, 4, lane, 4 * r + i) * 8;
          EXPECT_EQ(reg, tw) << lane << " " << r;
        }
    }
    // fp8's B alternates +r, -r (peak_reference.hpp): 101 iterations leave one in D, 100 none.
    const double net = t == MmaType::FP8 ? 1.0 : 101.0;
    EXPECT_DOUBLE_EQ(kernels::mma_warp_sum(t, 4, 101), net * kernels::kMmaAccumulators * 8 * kernels::mma_b_constant(t) * a_sum);
    if (t == MmaType::FP8) {
      EXPECT_DOUBLE_EQ(kernels::mma_warp_sum(t, 4, 100), 0.0);
    }
  }
}

// A call that throws on a worker reaches run()'s caller instead of ending the process; one that
// throws on the calling thread waits for the workers first (they read the job until then); the
// pool runs the next job as before.
TEST(MemoryReference, HostPoolCarriesExceptionsToTheCallerAndStaysUsable) {
  kernels::HostPool pool(3);
  EXPECT_THROW(pool.run([](int t) {
    if (t == 2) throw std::runtime_error("worker 2 failed");
  }),
               std::runtime_error);
  std::atomic<int> finished{0};
  try {
    pool.run([&](int t) {
      if (t == 0) throw std::invalid_argument("caller failed");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ++finished;
    });
    ADD_FAILURE() << "run() returned without the caller's exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "caller failed");
    EXPECT_EQ(finished.load(), 2);  // both workers had finished before it left
  }
  std::atomic<int> calls{0};
  pool.run([&](int) { ++calls; });
  EXPECT_EQ(calls.load(), 3);
}

TEST(MemoryReference, HostPoolRunsEveryThreadOnceAndSlicesCoverTheRange) {
  kernels::HostPool pool(3);
  ASSERT_EQ(pool.threads(), 3);
  for (int round = 0; round < 200; ++round) {  // back to back, and after the workers fell asleep
    std::vector<std::atomic<int>> calls(3);
    pool.run([&](int t) { calls[static_cast<std::size_t>(t)]++; });
    for (auto& c : calls) ASSERT_EQ(c.load(), 1);
    if (round == 100) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::size_t next = 0;
  for (int t = 0; t < 7; ++t) {
    auto [begin, end] = kernels::HostPool::slice(1000, t, 7);
    EXPECT_EQ(begin, next);
    EXPECT_GE(end - begin, 142u);
    next = end;
  }
  EXPECT_EQ(next, 1000u);
  EXPECT_GE(kernels::HostPool::shared().threads(), 1);
  EXPECT_EQ(kernels::host_threads(), kernels::usable_cpus());
}

TEST(MemoryReference, SampleIndices) {
  EXPECT_EQ(mem::sample_indices(5).size(), 5u);
  auto s = mem::sample_indices(1'000'000, 100);
  ASSERT_EQ(s.size(), 100u);
  EXPECT_EQ(s[0], 0u);
  EXPECT_EQ(s[1], 999'999u);
  std::set<std::size_t> distinct(s.begin(), s.end());
  EXPECT_GT(distinct.size(), 90u);
  for (std::size_t i : s) EXPECT_LT(i, 1'000'000u);
}

// ---- the suite: planning, unsupported reasons, CPU cases -----------------------------------

TEST(MemorySuite, QuickPresetOnTheCpuPlansOnlyCpuTestsWithoutSkips) {
  auto suite = mem::make_suite(three_gpus());
  PlanRequest r;
  auto plan = make_plan({suite.get()}, r, {testing::fake_cpu()});
  ASSERT_EQ(plan.size(), 11u);  // 6 bandwidth tests and host_latency at one size + 4 FMA tests at size=0
  for (const PlannedCase& c : plan) {
    EXPECT_FALSE(c.skip_reason) << c.name();
    const mem::TestInfo* t = mem::find_test(c.point.text("test"));
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(t->on_cpu);
    EXPECT_EQ(t->sized, c.point.integer("size") > 0) << c.name();
    EXPECT_EQ(c.point.integer("peer"), 0);
  }
}

TEST(MemorySuite, PeerMatrixWithFakeDevices) {
  auto suite = mem::make_suite(three_gpus());
  PlanRequest r;
  r.axis_overrides = {"test=p2p,p2p_noaccess,triad,device_device_latency", "size=0,4k"};
  auto plan = make_plan({suite.get()}, r, {gpu(0), gpu(1), gpu(2)});
  std::set<std::tuple<int, int, std::string>> runnable, skipped;
  int triads = 0;
  for (const PlannedCase& c : plan) {
    const std::string test = c.point.text("test");
    if (test == "triad") {
      ++triads;
      EXPECT_EQ(c.point.integer("peer"), 0);  // non-peer tests once per device
      continue;
    }
    auto key = std::make_tuple(c.device.ordinal, static_cast<int>(c.point.integer("peer")), test);
    EXPECT_NE(c.device.ordinal, c.point.integer("peer"));  // never a device with itself
    (c.skip_reason ? skipped : runnable).insert(key);
  }
  EXPECT_EQ(triads, 3);
  // Every ordered pair of 3 GPUs, for the three tests: 6 pairs x 3.
  EXPECT_EQ(runnable.size() + skipped.size(), 18u);
  // 0 <-> 2 cannot use peer access: those p2p and latency cases are skipped; the staged path runs.
  EXPECT_EQ(skipped, (std::set<std::tuple<int, int, std::string>>{{0, 2, "p2p"},
                                                                  {2, 0, "p2p"},
                                                                  {0, 2, "device_device_latency"},
                                                                  {2, 0, "device_device_latency"}}));
  EXPECT_TRUE(runnable.count({0, 1, "device_device_latency"}));
  EXPECT_TRUE(runnable.count({0, 2, "p2p_noaccess"}));
  EXPECT_TRUE(runnable.count({1, 2, "p2p"}));

  // One GPU: no peer case at all.
  auto single = mem::make_suite({[] { return 1; }, [](int, int) { return false; }});
  auto one = make_plan({single.get()}, r, {gpu(0)});
  EXPECT_EQ(one.size(), 1u);
  for (const PlannedCase& c : one) EXPECT_EQ(c.point.text("test"), "triad");

  EXPECT_TRUE(mem::peer_applies(gpu(1), 0, 2));
  EXPECT_FALSE(mem::peer_applies(gpu(1), 1, 2));
  EXPECT_FALSE(mem::peer_applies(gpu(1), 2, 2));
  EXPECT_FALSE(mem::peer_applies(testing::fake_cpu(), 0, 2));
  auto why = mem::peer_unsupported("p2p_bidir", gpu(2), 0, three_gpus());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("cudaDeviceCanAccessPeer"), std::string::npos);
  EXPECT_FALSE(mem::peer_unsupported("p2p_noaccess", gpu(2), 0, three_gpus()));
}

TEST(MemorySuite, QuickPresetOnOneGpuHasNoSkipsOnHopper) {
  auto suite = mem::make_suite({[] { return 1; }, [](int, int) { return false; }});
  PlanRequest r;
  auto plan = make_plan({suite.get()}, r, {gpu(0)});
  std::set<std::string> tests;
  for (const PlannedCase& c : plan) {
    EXPECT_FALSE(c.skip_reason) << c.name() << ": " << *c.skip_reason;
    tests.insert(c.point.text("test"));
  }
  EXPECT_TRUE(tests.count("mma_fp8"));
  EXPECT_TRUE(tests.count("h2d_pinned"));
  EXPECT_TRUE(tests.count("host_device_latency"));
  EXPECT_FALSE(tests.count("host_latency"));  // the CPU's
  EXPECT_FALSE(tests.count("device_device_latency"));  // needs a peer
  EXPECT_FALSE(tests.count("p2p"));
  EXPECT_FALSE(tests.count("fma_fp32_core"));
}

TEST(MemorySuite, UnsupportedReasons) {
  auto suite = mem::make_suite(three_gpus());
  auto fp8 = point("mma_fp8", 0);
  auto ampere = suite->unsupported(gpu(0, 8, 6), fp8);
  ASSERT_TRUE(ampere);
  EXPECT_NE(ampere->find("8.9"), std::string::npos);
  EXPECT_FALSE(suite->unsupported(gpu(0, 8, 9), fp8));
  EXPECT_FALSE(suite->unsupported(gpu(0, 12, 0), fp8));
  EXPECT_FALSE(suite->unsupported(gpu(0, 8, 0), point("mma_bf16", 0)));
  EXPECT_TRUE(suite->unsupported(gpu(0, 7, 0), point("triad", 1 << 20)));  // Volta
  EXPECT_TRUE(suite->unsupported(testing::fake_cpu(), point("h2d_pinned", 4096)));
  EXPECT_TRUE(suite->unsupported(testing::fake_cpu(), point("mma_fp16", 0)));
  EXPECT_TRUE(suite->unsupported(gpu(0), point("fma_fp32_core", 0)));
  auto odd = suite->unsupported(gpu(0), point("triad", 1000));
  ASSERT_TRUE(odd);
  EXPECT_NE(odd->find("multiple of 16"), std::string::npos);
  EXPECT_FALSE(suite->unsupported(gpu(0), point("h2d_pinned", 1000)));  // cudaMemcpy takes any size
  // Sized tests exist only at size > 0, the others only at size 0.
  EXPECT_FALSE(suite->applies(gpu(0), point("triad", 0)));
  EXPECT_FALSE(suite->applies(gpu(0), point("launch", 4096)));
  EXPECT_TRUE(suite->applies(gpu(0), point("malloc", 4096)));
  EXPECT_FALSE(suite->applies(gpu(0), point("launch", 0, 1)));  // peer axis only for p2p tests
  EXPECT_TRUE(suite->applies(gpu(0), point("host_device_latency", 0)));  // nvbandwidth's fixed 2 MiB ring
  EXPECT_FALSE(suite->applies(gpu(0), point("host_device_latency", 4096)));
  EXPECT_TRUE(suite->unsupported(testing::fake_cpu(), point("host_device_latency", 0)));
  EXPECT_TRUE(suite->unsupported(gpu(0), point("host_latency", 1 << 20)));
}

// nvbandwidth's concurrent patterns: the host ones once, on cuda:0, spanning every GPU; the
// peer ones per target GPU, skipped where a pair they need cannot reach each other.
TEST(MemorySuite, ConcurrentPatternsPlanOnceForTheHostAndPerTargetForPeers) {
  auto suite = mem::make_suite(three_gpus());
  PlanRequest r;
  r.axis_overrides = {"test=all_to_host_ce,host_to_all_sm,all_to_one_ce,one_to_all_sm", "size=4M"};
  auto plan = make_plan({suite.get()}, r, {gpu(0), gpu(1), gpu(2)});
  std::map<std::string, std::vector<int>> runnable, skipped;
  for (const PlannedCase& c : plan) (c.skip_reason ? skipped : runnable)[c.point.text("test")].push_back(c.device.ordinal);
  EXPECT_EQ(runnable["all_to_host_ce"], std::vector<int>{0});
  EXPECT_EQ(runnable["host_to_all_sm"], std::vector<int>{0});
  // 0 <-> 2 have no peer access: every GPU but cuda:1 misses a pair.
  EXPECT_EQ(runnable["all_to_one_ce"], std::vector<int>{1});
  EXPECT_EQ(skipped["all_to_one_ce"], (std::vector<int>{0, 2}));
  EXPECT_EQ(runnable["one_to_all_sm"], std::vector<int>{1});
  auto why = mem::pattern_unsupported("all_to_one_ce", gpu(0), three_gpus());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("cuda:2 cannot access cuda:0"), std::string::npos) << *why;
  // One GPU: the host patterns only.
  auto single = mem::make_suite({[] { return 1; }, [](int, int) { return false; }});
  auto one = make_plan({single.get()}, r, {gpu(0)});
  std::set<std::string> tests;
  for (const PlannedCase& c : one) tests.insert(c.point.text("test"));
  EXPECT_EQ(tests, (std::set<std::string>{"all_to_host_ce", "host_to_all_sm"}));
  // Copy kernels move 16-byte vectors.
  EXPECT_TRUE(suite->unsupported(gpu(0), point("host_to_all_sm", 1000)));
  EXPECT_FALSE(suite->unsupported(gpu(0), point("host_to_all_ce", 1000)));
  EXPECT_TRUE(suite->unsupported(testing::fake_cpu(), point("all_to_host_ce", 4096)));
}

// The pointer-chase rings (kernels/memory/pointer_chase.hpp), by hand.
TEST(MemoryChase, StridedRingEndsWhereTheArithmeticSays) {
  // 8 words, stride 3: 0 -> 3 -> 6 -> 1 (9 mod 8) -> 4 -> 7 -> 2 -> 5 -> 0.
  std::vector<std::uint64_t> words(8);
  kernels::fill_strided_ring(words.data(), 8, 3, 1000);
  EXPECT_EQ(words[0], 1000u + 8 * 3);
  EXPECT_EQ(words[6], 1000u + 8 * 1);
  EXPECT_EQ(kernels::strided_ring_end(8, 3, 0), 0u);
  EXPECT_EQ(kernels::strided_ring_end(8, 3, 3), 1u);
  EXPECT_EQ(kernels::strided_ring_end(8, 3, 8), 0u);
  EXPECT_EQ(kernels::strided_ring_end(8, 3, 8 + 5), 7u);
  // nvbandwidth's: 2 MiB of 8-byte words, 16 apart: the walk visits 16384 lines before it returns.
  const std::uint64_t n = kernels::kChaseBufferBytes / 8;
  EXPECT_EQ(kernels::strided_ring_end(n, kernels::kChaseStrideNodes, n / 16), 0u);
  EXPECT_EQ(kernels::strided_ring_end(n, kernels::kChaseStrideNodes, n / 16 + 1), 16u);
  // A walk through real memory agrees with the arithmetic.
  std::vector<std::uint64_t> ring(64);
  kernels::fill_strided_ring(ring.data(), 64, 16, reinterpret_cast<std::uint64_t>(ring.data()));
  EXPECT_EQ(kernels::chase(ring.data(), 7), &ring[kernels::strided_ring_end(64, 16, 7)]);
}

TEST(MemoryChase, RandomCycleVisitsEveryLineOnceAndIsSeeded) {
  for (std::uint32_t lines : {2u, 3u, 17u, 4096u}) {
    const auto next = kernels::random_cycle(lines, 41);
    EXPECT_EQ(next, kernels::random_cycle(lines, 41));
    std::vector<bool> seen(lines, false);
    std::uint32_t at = 0;
    for (std::uint32_t k = 0; k < lines; ++k) {
      EXPECT_FALSE(seen[at]) << lines;
      seen[at] = true;
      at = next[at];
    }
    EXPECT_EQ(at, 0u) << "one cycle through all " << lines << " lines";
  }
  EXPECT_NE(kernels::random_cycle(4096, 41), kernels::random_cycle(4096, 42));
  // Not a stride: consecutive lines are not neighbours for most of the walk.
  const auto next = kernels::random_cycle(4096, 41);
  int neighbours = 0;
  for (std::uint32_t i = 0; i < 4096; ++i) neighbours += next[i] == i + 1;
  EXPECT_LT(neighbours, 20);
}

TEST(MemorySuite, CpuCasesSetupVerifyRun) {
  auto suite = mem::make_suite(three_gpus());
  const DeviceInfo cpu = testing::fake_cpu();
  const std::int64_t size = 64 << 10;
  for (const char* test : {"copy", "scale", "add", "triad", "dot", "fill"}) {
    auto c = suite->make_case(cpu, point(test, size));
    c->setup();
    Verification v = c->verify();
    EXPECT_TRUE(v.passed) << test << ": " << v.detail;
    EXPECT_GT(v.checked, 0);
    c->run();
    const Metrics m = c->metrics();
    EXPECT_EQ(m.flops, 0);  // a bandwidth case: GB/s, not TFLOP/s
    EXPECT_DOUBLE_EQ(m.bytes, kernels::stream_bytes(*kernels::parse_stream_op(test), size));
    EXPECT_EQ(m.peak_key, "memory_bandwidth");
  }
  {
    auto c = suite->make_case(cpu, point("host_latency", size));
    c->setup();
    const Verification v = c->verify();
    EXPECT_TRUE(v.passed) << v.detail;
    EXPECT_EQ(v.checked, size / 64);  // every line of the cycle
    c->run();
    const Metrics m = c->metrics();
    EXPECT_EQ(m.items, kernels::kHostChaseAccessesPerRun);
    nlohmann::ordered_json g;
    c->annotate(g, 0.01);
    EXPECT_DOUBLE_EQ(g["metrics"]["ns_per_access"].get<double>(), 0.01 * 1e9 / kernels::kHostChaseAccessesPerRun);
  }
  for (const char* test : {"fma_fp64", "fma_fp32", "fma_fp64_core", "fma_fp32_core"}) {
    auto c = suite->make_case(cpu, point(test, 0));
    c->setup();
    Verification v = c->verify();
    EXPECT_TRUE(v.passed) << test << ": " << v.detail;
    const bool f32 = std::string(test).find("fp32") != std::string::npos;
    const auto path = kernels::host_fma_path(f32 ? kernels::HostFmaType::F32 : kernels::HostFmaType::F64);
    const int threads = std::string(test).find("_core") != std::string::npos ? 1 : kernels::host_threads();
    const int lanes = path.chains * path.lanes;
    EXPECT_EQ(v.checked, ((lanes - 1) / 7 + 1 + ((lanes - 1) % 7 != 0 ? 1 : 0)) * threads);
    const Metrics m = c->metrics();
    EXPECT_DOUBLE_EQ(m.flops, 2.0 * lanes * (1 << 21) * threads);
    EXPECT_EQ(m.peak_key, f32 ? "fp32" : "fp64");
  }
}

// ---- the ceilings summary ------------------------------------------------------------------

Json entry(const std::string& device, const std::string& test, std::int64_t size, Json metrics, double mean_s,
           std::int64_t peer = 0, const std::string& status = "ok") {
  return {{"name", "memory/x"},
          {"run_type", "iteration"},
          {"gpubench",
           {{"suite", "memory"},
            {"device", device},
            {"device_name", device == "cpu" ? "Test CPU" : "NVIDIA H100 80GB HBM3"},
            {"axes", {{"test", test}, {"size", size}, {"peer", peer}}},
            {"status", status},
            {"metrics", metrics},
            {"measurement", {{"mean_s", mean_s}}}}}};
}

// The datasheet's tensor figures assume a clock below the boost clock (H200: 1830 MHz, boosting
// to 1980): a loop measured at 1980 MHz that delivers 108% of the datasheet figure is at 99.8%
// of that figure scaled to its clock, not 116.9% (which scaling by the maximum would claim).
TEST(MemorySummary, ClockScaledPeakUsesTheClockTheDatasheetAssumes) {
  mem::Observations obs;
  obs.record_device(gpu(0));  // maximum 1980 MHz
  obs.record_clock("cuda:0", "mma_fp8", 1980);
  obs.record_clock("cuda:0", "mma_bf16", 1980);
  std::vector<Json> e{
      entry("cuda:0", "mma_fp8", 0,
            {{"tflops", 2137.0}, {"peak_key", "fp8_tensor"}, {"pct_of_peak", 108.0}, {"peak_clock_mhz", 1830.0}}, 1e-3),
      entry("cuda:0", "mma_bf16", 0, {{"tflops", 900.0}, {"peak_key", "bf16_tensor"}, {"pct_of_peak", 91.0}}, 1e-3),
  };
  const Json g = mem::summarize(e, obs)["devices"]["cuda:0"];
  const Json& fp8 = g["peak"]["fp8_tensor"];
  EXPECT_DOUBLE_EQ(fp8["peak_clock_mhz"].get<double>(), 1830.0);
  EXPECT_NEAR(fp8["pct_of_clock_scaled_peak"].get<double>(), 108.0 * 1830 / 1980, 1e-9);
  // Where the sheet states no clock, the device's maximum stands in: 91% at the maximum stays 91%.
  const Json& bf16 = g["peak"]["bf16_tensor"];
  EXPECT_DOUBLE_EQ(bf16["peak_clock_mhz"].get<double>(), 1980.0);
  EXPECT_NEAR(bf16["pct_of_clock_scaled_peak"].get<double>(), 91.0, 1e-9);
}

TEST(MemorySummary, Shape) {
  mem::Observations obs;
  obs.record_device(gpu(0));
  obs.record_clock("cuda:0", "mma_bf16", 1500);  // measured below the 1980 MHz maximum
  std::vector<Json> e{
      entry("cuda:0", "triad", 8 << 20, {{"gbps", 5000.0}, {"peak_key", "memory_bandwidth"}}, 1e-5),  // L2-resident
      entry("cuda:0", "triad", 1 << 30, {{"gbps", 3000.0}, {"pct_of_peak", 90.0}}, 1e-3),
      entry("cuda:0", "copy", 1 << 30, {{"gbps", 3100.0}}, 1e-3),
      entry("cuda:0", "copy", 1 << 30, {{"gbps", 9999.0}}, 1e-3, 0, "failed"),  // ignored
      entry("cuda:0", "h2d_pinned", 4096, {{"gbps", 1.0}}, 4e-6),
      entry("cuda:0", "h2d_pinned", 1 << 30, {{"gbps", 55.0}}, 0.02),
      entry("cuda:0", "d2h_pinned", 1 << 30, {{"gbps", 53.0}}, 0.02),
      entry("cuda:0", "p2p", 1 << 20, {{"gbps", 300.0}}, 3e-6, 1),
      entry("cuda:0", "mma_bf16", 0, {{"tflops", 600.0}, {"peak_key", "bf16_tensor"}, {"pct_of_peak", 60.0}}, 1e-3),
      entry("cuda:0", "fma_fp16x2", 0, {{"tflops", 100.0}}, 1e-3),
      entry("cuda:0", "launch", 0, Json::object(), 2.5e-6),
      entry("cuda:0", "malloc", 4096, Json::object(), 8e-6),
      entry("cpu", "triad", 64 << 20, {{"gbps", 12.0}}, 1e-2),
      entry("cpu", "fma_fp32_core", 0, {{"tflops", 0.1}, {"peak_key", "fp32"}}, 1e-3),
  };
  Json aggregate = e[1];
  aggregate["run_type"] = "aggregate";
  aggregate["gpubench"]["metrics"]["gbps"] = 1e6;
  e.push_back(aggregate);  // ignored: aggregates carry no metrics of their own

  const Json s = mem::summarize(e, obs);
  ASSERT_TRUE(s.contains("devices"));
  const Json& g = s["devices"]["cuda:0"];
  EXPECT_EQ(g["device_name"], "NVIDIA H100 80GB HBM3");
  // DRAM ceiling: the best rate at the largest size, not the L2-resident one.
  EXPECT_EQ(g["memory_bandwidth"]["test"], "copy");
  EXPECT_DOUBLE_EQ(g["memory_bandwidth"]["gbps"].get<double>(), 3100.0);
  EXPECT_DOUBLE_EQ(g["best_bandwidth_any_size"]["gbps"].get<double>(), 5000.0);
  EXPECT_DOUBLE_EQ(g["h2d_pinned_gbps"].get<double>(), 55.0);
  EXPECT_DOUBLE_EQ(g["d2h_pinned_gbps"].get<double>(), 53.0);
  const Json& h2d = g["copies"]["h2d_pinned"];
  EXPECT_DOUBLE_EQ(h2d["best_gbps"].get<double>(), 55.0);
  EXPECT_EQ(h2d["best_size"], 1 << 30);
  EXPECT_DOUBLE_EQ(h2d["latency_us"].get<double>(), 4.0);
  EXPECT_EQ(h2d["latency_size"], 4096);
  EXPECT_DOUBLE_EQ(g["peer"]["cuda:1"]["p2p"]["best_gbps"].get<double>(), 300.0);
  const Json& bf16 = g["peak"]["bf16_tensor"];
  EXPECT_DOUBLE_EQ(bf16["tflops"].get<double>(), 600.0);
  EXPECT_DOUBLE_EQ(bf16["sm_clock_mhz"].get<double>(), 1500.0);
  EXPECT_NEAR(bf16["pct_of_clock_scaled_peak"].get<double>(), 60.0 * 1980 / 1500, 1e-9);
  EXPECT_FALSE(g["peak"]["fp16x2"].contains("pct_of_peak"));  // no datasheet figure: none invented
  EXPECT_FALSE(g["peak"]["fp16x2"].contains("pct_of_clock_scaled_peak"));
  EXPECT_DOUBLE_EQ(g["launch_latency_us"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(g["overheads_us"]["malloc"]["4096"].get<double>(), 8.0);

  const Json& c = s["devices"]["cpu"];
  EXPECT_DOUBLE_EQ(c["memory_bandwidth"]["gbps"].get<double>(), 12.0);
  EXPECT_DOUBLE_EQ(c["peak"]["fp32_core"]["tflops"].get<double>(), 0.1);
  EXPECT_FALSE(c.contains("launch_latency_us"));

  EXPECT_TRUE(mem::summarize({}, obs).empty());  // nothing measured: nothing written
}

// The DRAM ceiling never comes from a size the cache in front of the memory holds, even when
// it is the largest that ran (the H200's triad at 8 MiB per array read 5.7 TB/s from its L2,
// and the console called the ceiling suspect); a CPU's last-level cache counts alike.
TEST(MemorySummary, NoDramCeilingFromASizeTheCacheHolds) {
  mem::Observations obs;
  DeviceInfo g = gpu(0);
  g.l2_bytes = 60 << 20;
  obs.record_device(g);
  DeviceInfo cpu = describe_cpu();
  cpu.llc_bytes = 32 << 20;
  obs.record_device(cpu);
  auto triad = [](const std::string& dev, std::int64_t size, double gbps) {
    return entry(dev, "triad", size, {{"gbps", gbps}, {"bytes", 3.0 * static_cast<double>(size)}, {"peak_key", "memory_bandwidth"}}, 1e-5);
  };
  const Json only_small = mem::summarize({triad("cuda:0", 8 << 20, 5724.0), triad("cpu", 8 << 20, 200.0)}, obs)["devices"];
  EXPECT_FALSE(only_small["cuda:0"].contains("memory_bandwidth")) << only_small.dump();
  EXPECT_DOUBLE_EQ(only_small["cuda:0"]["best_bandwidth_any_size"]["gbps"].get<double>(), 5724.0);
  EXPECT_FALSE(only_small["cpu"].contains("memory_bandwidth"));
  const Json both = mem::summarize({triad("cuda:0", 8 << 20, 5724.0), triad("cuda:0", 256 << 20, 4015.0),
                                    triad("cpu", 8 << 20, 200.0), triad("cpu", 256 << 20, 101.0)}, obs)["devices"];
  EXPECT_DOUBLE_EQ(both["cuda:0"]["memory_bandwidth"]["gbps"].get<double>(), 4015.0);
  EXPECT_DOUBLE_EQ(both["cpu"]["memory_bandwidth"]["gbps"].get<double>(), 101.0);
}

// Ceilings are ceilings (issue 15 item 14): the best sample's rate, not the mean; and a CPU
// FMA run whose threads shared cores keeps the rate over its threads' CPU time.
TEST(MemorySummary, CeilingsAreTheBestSampleAndSurviveStackedThreads) {
  mem::Observations obs;
  auto with_samples = [](Json e, double mean_s, double min_s) {
    e["gpubench"]["measurement"] = {{"mean_s", mean_s}, {"min_s", min_s}};
    return e;
  };
  Json stacked = with_samples(entry("cpu", "fma_fp32", 0, {{"tflops", 0.118}, {"peak_key", "fp32"}}, 2e-2), 2e-2, 1.9e-2);
  stacked["gpubench"]["details"] = {{"threads", 2}, {"parallelism", 1.01}, {"thread_cpu_tflops", 0.234}};
  Json alone = with_samples(entry("cpu", "fma_fp64", 0, {{"tflops", 0.118}, {"peak_key", "fp64"}}, 1e-2), 1e-2, 0.9e-2);
  alone["gpubench"]["details"] = {{"threads", 2}, {"parallelism", 1.98}, {"thread_cpu_tflops", 0.12}};
  const std::vector<Json> e{
      with_samples(entry("cuda:0", "triad", 1 << 30, {{"gbps", 3000.0}, {"pct_of_peak", 90.0}}, 1e-3), 1e-3, 0.8e-3),
      with_samples(entry("cuda:0", "h2d_pinned", 1 << 30, {{"gbps", 50.0}}, 0.02), 0.02, 0.016),
      with_samples(entry("cuda:0", "mma_bf16", 0, {{"tflops", 600.0}, {"peak_key", "bf16_tensor"}}, 1e-3), 1e-3, 0.75e-3),
      stacked, alone};
  const Json s = mem::summarize(e, obs);
  const Json& g = s["devices"]["cuda:0"];
  EXPECT_DOUBLE_EQ(g["memory_bandwidth"]["gbps"].get<double>(), 3750.0);  // 3000 x 1.0 / 0.8
  EXPECT_DOUBLE_EQ(g["memory_bandwidth"]["mean_gbps"].get<double>(), 3000.0);
  EXPECT_DOUBLE_EQ(g["memory_bandwidth"]["pct_of_peak"].get<double>(), 112.5);
  EXPECT_EQ(g["memory_bandwidth"]["basis"], "best_sample");
  EXPECT_DOUBLE_EQ(g["copies"]["h2d_pinned"]["best_gbps"].get<double>(), 62.5);
  EXPECT_DOUBLE_EQ(g["h2d_pinned_gbps"].get<double>(), 62.5);
  EXPECT_DOUBLE_EQ(g["peak"]["bf16_tensor"]["tflops"].get<double>(), 800.0);
  const Json& c = s["devices"]["cpu"];
  EXPECT_DOUBLE_EQ(c["peak"]["fp32"]["tflops"].get<double>(), 0.234);  // two cores, not one
  EXPECT_EQ(c["peak"]["fp32"]["basis"], "thread_cpu_time");
  EXPECT_TRUE(c["peak"]["fp32"].contains("note"));
  EXPECT_NEAR(c["peak"]["fp64"]["tflops"].get<double>(), 0.118 / 0.9, 1e-12);  // ran on two cores: best sample
  EXPECT_EQ(c["peak"]["fp64"]["basis"], "best_sample");
}

// Issue 25 item 1: a mma.sync loop on sm_90 cannot reach the dense Tensor Core rate (wgmma can),
// so its figure is recorded apart and is not a ceiling that cuBLAS would "beat".
TEST(MemorySummary, ALoopThatCannotReachTheRateIsRecordedButNotACeiling) {
  EXPECT_TRUE(gpubench::kernels::mma_sync_not_a_ceiling(90).has_value());
  EXPECT_TRUE(gpubench::kernels::mma_sync_not_a_ceiling(100).has_value());
  for (int cc : {80, 86, 89, 120}) EXPECT_FALSE(gpubench::kernels::mma_sync_not_a_ceiling(cc).has_value()) << cc;
  mem::Observations obs;
  Json mma = entry("cuda:0", "mma_bf16", 0,
                   {{"tflops", 650.0}, {"peak_key", "bf16_tensor"}, {"ceiling", false},
                    {"not_a_ceiling", *gpubench::kernels::mma_sync_not_a_ceiling(90)}},
                   1e-3);
  Json fp8 = entry("cuda:0", "mma_fp8", 0, {{"tflops", 1900.0}, {"peak_key", "fp8_tensor"}}, 1e-3);
  const Json s = mem::summarize({mma, fp8}, obs);
  const Json& g = s["devices"]["cuda:0"];
  EXPECT_FALSE(g["peak"].contains("bf16_tensor")) << g.dump();
  EXPECT_TRUE(g["peak"].contains("fp8_tensor"));
  ASSERT_TRUE(g["peak_not_ceiling"].contains("bf16_tensor")) << g.dump();
  EXPECT_NE(g["peak_not_ceiling"]["bf16_tensor"]["why"].get<std::string>().find("wgmma"), std::string::npos);
}

// The CPU FMA case reports how many threads ran at once and the CPU-time rate.
TEST(MemoryCpu, FmaCaseReportsParallelismAndThreadCpuRate) {
  auto suite = mem::make_suite(three_gpus());
  auto c = suite->make_case(testing::fake_cpu(), point("fma_fp32_core", 0));
  c->setup();
  for (int i = 0; i < 3; ++i) c->run();
  const Json d = c->details(2);
  EXPECT_EQ(d["threads"], 1);
  ASSERT_TRUE(d.contains("parallelism"));
  EXPECT_GT(d["parallelism"].get<double>(), 0.0);
  EXPECT_LE(d["parallelism"].get<double>(), 1.05);  // one thread cannot run on more than one core
  EXPECT_GT(d["thread_cpu_tflops"].get<double>(), 0.0);
}

TEST(MemorySummary, WrittenToTheResultsFileThroughTheHarness) {
  auto suite = mem::make_suite(three_gpus());
  PlanRequest r;
  r.axis_overrides = {"test=triad,fma_fp32_core", "size=0,256k"};
  auto plan = make_plan({suite.get()}, r, {testing::fake_cpu()});
  ASSERT_EQ(plan.size(), 2u);
  const HarnessOptions h = testing::fast_harness_options(3);
  const auto file = std::filesystem::temp_directory_path() / ("gpubench-memory-" + std::to_string(::getpid()) + ".json");
  {
    ResultsFile results(file, {{"host_name", "test"}});
    RunSummary s = run_plan(plan, h, results);
    EXPECT_EQ(s.ok, 2);
  }
  std::ifstream in(file);
  const Json doc = Json::parse(in);
  std::filesystem::remove(file);
  const Json& cpu = doc["gpubench"]["summaries"]["memory"]["devices"]["cpu"];
  EXPECT_GT(cpu["memory_bandwidth"]["gbps"].get<double>(), 0.0);
  EXPECT_EQ(cpu["memory_bandwidth"]["test"], "triad");
  EXPECT_GT(cpu["peak"]["fp32_core"]["tflops"].get<double>(), 0.0);
}

}  // namespace
}  // namespace gpubench
