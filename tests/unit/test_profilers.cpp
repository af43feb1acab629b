// The instruments without a GPU: --profile parsing, activity records -> breakdown, gaps and
// trace events (recorded synthetic records through the ActivitySource interface the CUPTI
// source implements), the trace file read back, telemetry arithmetic, the host sampler's
// parsing, and every "off: reason" path.
#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "bench/core/errors.hpp"
#include "profilers/cupti/reasons.hpp"
#include "profilers/cupti_metrics/metrics.hpp"
#include "profilers/cupti_trace/analysis.hpp"
#include "profilers/cupti_trace/cupti_records.hpp"
#include "profilers/cupti_trace/cupti_source.hpp"
#include "profilers/cupti_trace/trace.hpp"
#include "profilers/host/host.hpp"
#include "profilers/nvml/telemetry.hpp"
#include "profilers/profile.hpp"

namespace gpubench::profilers {
namespace {

// --- --profile ---------------------------------------------------------------------------

TEST(Profile, DefaultIsNvtxTelemetryHost) {
  const ProfileSelection s = parse_profile(kDefaultProfile);
  EXPECT_TRUE(s.nvtx && s.telemetry && s.host);
  EXPECT_FALSE(s.trace || s.metrics);
}

TEST(Profile, ListsNoneAndMetricNames) {
  const ProfileSelection none = parse_profile("none");
  EXPECT_FALSE(none.nvtx || none.telemetry || none.host || none.trace || none.metrics);
  const ProfileSelection s = parse_profile("trace,metrics=sm__throughput.avg.pct_of_peak_sustained_elapsed:lts__t_bytes.sum");
  EXPECT_TRUE(s.trace && s.metrics);
  EXPECT_FALSE(s.nvtx);
  EXPECT_EQ(s.metric_names, (std::vector<std::string>{"sm__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_bytes.sum"}));
  EXPECT_TRUE(parse_profile("metrics").metric_names.empty());  // the default set
}

TEST(Profile, RejectsBadLists) {
  for (const char* bad : {"cupti", "nvtx,", ",nvtx", "none,nvtx", "trace=1", "metrics=", "metrics=a::b", "metrics=sm throughput",
                          "metrics=a,b;c", "NVTX"}) {
    EXPECT_THROW(parse_profile(bad), UsageError) << bad;
  }
  try {
    parse_profile("nvtx,cupti");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--profile 'cupti': unknown instrument"), std::string::npos) << e.what();
  }
}

// --- activity records --------------------------------------------------------------------

KernelRecord kernel(std::string_view name, std::uint64_t start, std::uint64_t end, std::uint32_t stream = 7,
                    std::uint32_t correlation = 0) {
  KernelRecord k;
  k.name = name;
  k.start = start, k.end = end, k.stream = stream, k.correlation = correlation;
  k.grid[0] = 128, k.block[0] = 256;
  k.registers_per_thread = 32;
  k.static_shared_bytes = 1024, k.dynamic_shared_bytes = 3072;
  return k;
}

// Measure window 1000..11000 ns (10 us). Stream 7: gemm 1000-4000, gemm 5000-8000; stream 9:
// a concurrent "_Z6reducePfi" 3000-6000; a copy 9000-10000; a kernel before the window (setup).
ActivityBatch recorded() {
  ActivityBatch b;
  b.kernels = {kernel("setup_fill", 0, 500), kernel("gemm", 1000, 4000, 7, 11), kernel("gemm", 5000, 8000, 7, 12),
               kernel("_Z6reducePfi", 3000, 6000, 9, 13)};
  b.copies = {{"DtoH", 9000, 10000, 4096, 0, 7, 14}};
  b.ranges = {{"user range", "mylib", 1200, 9500, 42}, {"measure", "gpubench", 1000, 11000, 42}};
  b.api = {{"cudaLaunchKernel", 900, 950, 42, 11}, {"cudaLaunchKernel", 960, 990, 42, 12},
           {"cudaLaunchKernel", 995, 999, 42, 13}, {"cudaMemcpyAsync", 1001, 1010, 42, 14}};
  b.overheads = {{"buffer flush", 10500, 10700, 42}, {"instrumentation", 50, 60, 42}};
  b.dropped = 2;
  return b;
}

TEST(Activity, DemanglesCppNamesOnly) {
  EXPECT_EQ(demangle("_Z6reducePfi"), "reduce(float*, int)");
  EXPECT_EQ(demangle("gemm"), "gemm");
  EXPECT_EQ(demangle("_Znotvalid!"), "_Znotvalid!");
}

TEST(Activity, BreakdownBusyAndGaps) {
  const CaseActivity a = analyze(recorded(), {1000, 11000});
  EXPECT_EQ(a.wall_ns, 10000u);
  EXPECT_EQ(a.launches, 3);  // the setup kernel started before the window
  EXPECT_EQ(a.kernel_ns, 9000u);
  // Busy: 1000-8000 (gemm, reduce and gemm overlap into one stretch) + 9000-10000 (copy).
  EXPECT_EQ(a.busy_ns, 8000u);
  EXPECT_EQ(a.gaps, 1);
  EXPECT_EQ(a.gap_total_ns, 1000u);
  EXPECT_EQ(a.gap_max_ns, 1000u);
  EXPECT_FALSE(a.launch_bound());
  ASSERT_EQ(a.kernels.size(), 2u);
  EXPECT_EQ(a.kernels[0].name, "gemm");
  EXPECT_EQ(a.kernels[0].count, 2);
  EXPECT_EQ(a.kernels[0].total_ns, 6000u);
  EXPECT_EQ(a.kernels[0].shared_bytes, 4096u);
  EXPECT_EQ(a.kernels[1].name, "reduce(float*, int)");
  ASSERT_EQ(a.copies.count("DtoH"), 1u);
  EXPECT_EQ(a.copies.at("DtoH").bytes, 4096u);
  EXPECT_EQ(a.overhead_ns, 200u);  // the flush inside the window only
  EXPECT_EQ(a.dropped, 2u);

  const nlohmann::ordered_json j = to_json(a);
  EXPECT_DOUBLE_EQ(j["gpu_busy_pct"].get<double>(), 80.0);
  EXPECT_DOUBLE_EQ(j["kernels"][0]["mean_us"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(j["kernels"][0]["pct_of_kernel_time"].get<double>(), 100.0 * 6000 / 9000);
  EXPECT_DOUBLE_EQ(j["kernels"][0]["pct_of_wall"].get<double>(), 60.0);
  EXPECT_EQ(j["kernels"][0]["grid"], nlohmann::ordered_json({128, 1, 1}));
  EXPECT_EQ(j["kernels"][0]["block"], nlohmann::ordered_json({256, 1, 1}));
  EXPECT_EQ(j["kernels"][0]["registers_per_thread"], 32);
  EXPECT_DOUBLE_EQ(j["copies"]["DtoH"]["gbps"].get<double>(), 4.096);
  EXPECT_DOUBLE_EQ(j["overhead"]["cupti_us"].get<double>(), 0.2);
  EXPECT_EQ(j["gaps"]["count"], 1);
  // Only the top kernels are listed; the rest are summed.
  const nlohmann::ordered_json top1 = to_json(a, 1);
  EXPECT_EQ(top1["kernels"].size(), 1u);
  EXPECT_EQ(top1["other_kernels"]["count"], 1);
}

TEST(Activity, LaunchBoundWhenTheGpuIdlesMostOfTheTime) {
  ActivityBatch b;
  for (std::uint64_t t = 0; t < 100; ++t) b.kernels.push_back(kernel("tiny", t * 1000, t * 1000 + 100));
  const CaseActivity a = analyze(b, {0, 100000});
  EXPECT_EQ(a.busy_ns, 10000u);
  EXPECT_EQ(a.gaps, 99);
  EXPECT_EQ(a.gap_max_ns, 900u);
  EXPECT_TRUE(a.launch_bound());
  EXPECT_EQ(kernel_time_ns(b.kernels, {0, 50000}), 5000u);
  EXPECT_FALSE(analyze({}, {0, 1000}).launch_bound());  // no kernels: nothing to say
}

KernelRecord on_device(std::uint32_t device, std::uint64_t start, std::uint64_t end, std::uint32_t stream = 7) {
  KernelRecord k = kernel("k", start, end, stream);
  k.device = device;
  return k;
}

TEST(Activity, CuptiTimeIsTheUnionOfKernelIntervalsNotTheirSum) {
  // One stream, back to back: the union is the sum.
  EXPECT_EQ(kernel_time_ns({kernel("a", 1000, 2000), kernel("b", 2000, 2500), kernel("c", 3000, 3100)}, {0, 10000}),
            1600u);
  // Two streams overlapping 1500-2000: that stretch counts once (the sum would be 2000).
  const std::vector<KernelRecord> streams = {kernel("a", 1000, 2000, 7), kernel("b", 1500, 2500, 9)};
  EXPECT_EQ(kernel_time_ns(streams, {0, 10000}), 1500u);
  // A kernel nested inside another adds nothing.
  EXPECT_EQ(kernel_time_ns({kernel("a", 1000, 5000, 7), kernel("b", 2000, 3000, 9)}, {0, 10000}), 4000u);
  // Only kernels that started in the window count (a kernel running into it from before does not).
  EXPECT_EQ(kernel_time_ns({kernel("early", 0, 1500), kernel("a", 1000, 2000)}, {1000, 10000}), 1000u);
  EXPECT_EQ(kernel_time_ns({}, {0, 10000}), 0u);
  // The cold-mode L2 flush (a kernel the harness launches just before a cold sample's timer
  // starts, which may begin on the GPU inside the window) is never the case's time.
  const char* flush = "_ZN8gpubench7kernels46_GLOBAL__N__f794c131_11_l2_flush_cu_20l2_flush_read_kernelEP5uint4m";
  EXPECT_TRUE(is_cold_flush_kernel(flush));
  EXPECT_FALSE(is_cold_flush_kernel("_Z12triad_kernelPdS_S_dm"));
  EXPECT_EQ(kernel_time_ns({kernel(flush, 1000, 3000), kernel("a", 3000, 3500)}, {500, 10000}), 500u);
}

// Issue 25 item 5: a training step zeroes its gradients with a memset and a pipeline copies;
// kernels alone left that work out of the timed figure and inflated its rates.
TEST(Activity, CuptiTimeCountsMemsetsAndCopiesTheCaseIssues) {
  ActivityBatch b;
  b.kernels = {kernel("step", 2000, 5000)};
  b.copies.push_back({"memset", 1000, 2000, 1 << 20, 0, 7, 1});  // gradient zeroing before the step
  b.copies.push_back({"HtoD", 4000, 6000, 1 << 20, 0, 9, 2});    // overlaps the kernel 4000-5000
  b.copies.push_back({"DtoH", 6500, 7000, 1 << 10, 3, 9, 3});    // on another GPU: not the case's
  EXPECT_EQ(kernel_time_ns(b.kernels, {0, 10000}, {0}), 3000u);
  EXPECT_EQ(gpu_time_ns(b, {0, 10000}, {0}), 5000u);  // 1000 .. 6000, overlap counted once
  EXPECT_EQ(gpu_time_ns(b, {0, 10000}), 5500u);       // every device: the DtoH too
  EXPECT_EQ(gpu_time_ns(b, {1500, 10000}, {0}), 4000u);  // the memset started before the window
  // A copy-only batch (cudaMemcpy cases) is timed, not "no kernel".
  ActivityBatch copies;
  copies.copies.push_back({"DtoD", 100, 900, 1 << 20, 0, 7, 1});
  EXPECT_EQ(gpu_time_ns(copies, {0, 1000}, {0}), 800u);
  // The cold-mode L2 flush stays out.
  const char* flush = "_ZN8gpubench7kernels46_GLOBAL__N__f794c131_11_l2_flush_cu_20l2_flush_read_kernelEP5uint4m";
  ActivityBatch cold;
  cold.kernels = {kernel(flush, 0, 3000)};
  cold.copies.push_back({"memset", 3000, 3400, 64, 0, 7, 1});
  EXPECT_EQ(gpu_time_ns(cold, {0, 10000}, {0}), 400u);
}

TEST(Activity, CuptiTimeOfACollectiveOnFourGpusIsOneCollectiveNotFour) {
  // A single-process all_reduce on GPUs 0-3: one kernel per GPU, nearly simultaneous (a little
  // launch skew), and a stray kernel on GPU 5 that is not the case's.
  std::vector<KernelRecord> k;
  for (std::uint32_t d = 0; d < 4; ++d) k.push_back(on_device(d, 1000 + 10 * d, 11000 + 10 * d));
  k.push_back(on_device(5, 20000, 90000));
  const DeviceSet gpus{0, 1, 2, 3};
  EXPECT_EQ(kernel_time_ns(k, {0, 100000}, gpus), 10030u);  // 1000 .. 11030: once, not 4 x 10000
  EXPECT_EQ(kernel_time_ns(k, {0, 100000}, {0}), 10000u);   // GPU 0 alone
  EXPECT_EQ(kernel_time_ns(k, {0, 100000}), 80030u);        // every device: the stray kernel too
  EXPECT_EQ(kernel_devices(k, {0, 15000}), gpus);
  EXPECT_EQ(kernel_devices(k, {0, 100000}), (DeviceSet{0, 1, 2, 3, 5}));

  // The case's profile through the same filter: copies of another device do not count either.
  ActivityBatch b;
  b.kernels = k;
  b.copies = {{"DtoH", 12000, 13000, 4096, 0, 7, 0}, {"DtoH", 14000, 15000, 4096, 5, 7, 0}};
  const CaseActivity a = analyze(b, {0, 100000}, gpus);
  EXPECT_EQ(a.launches, 4);
  EXPECT_EQ(a.kernel_ns, 40000u);       // the plain sum, as documented
  EXPECT_EQ(a.kernel_busy_ns, 10030u);  // each instant once
  EXPECT_EQ(a.busy_ns, 11030u);         // + the copy on GPU 0
  ASSERT_EQ(a.copies.count("DtoH"), 1u);
  EXPECT_EQ(a.copies.at("DtoH").count, 1);
  const nlohmann::ordered_json j = to_json(a);
  EXPECT_DOUBLE_EQ(j["kernel_busy_us"].get<double>(), 10.03);
  EXPECT_EQ(j["devices"], nlohmann::ordered_json({0, 1, 2, 3}));
  EXPECT_FALSE(to_json(analyze(b, {0, 100000})).contains("devices"));  // no filter: not listed
}

// Reads a JSON Array Format trace back and checks every event against the trace-event format.
nlohmann::json load_trace(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);  // throws on invalid JSON
}

void expect_valid_events(const nlohmann::json& events) {
  ASSERT_TRUE(events.is_array());
  for (const auto& e : events) {
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e;
    ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e;
    ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << e;
    ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e;
    const std::string ph = e["ph"];
    EXPECT_TRUE(ph == "X" || ph == "M" || ph == "s" || ph == "f") << e;
    if (ph == "X") {
      ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number()) << e;
      EXPECT_GE(e["dur"].get<double>(), 0) << e;
    }
    if (ph == "s" || ph == "f") {
      EXPECT_TRUE(e["ts"].is_number() && e.contains("id")) << e;
    }
  }
}

TEST(Activity, TraceEventsOnPerStreamTracksReadBack) {
  const auto path = std::filesystem::temp_directory_path() / ("gpubench-trace-" + std::to_string(::getpid()) + ".json");
  {
    TraceFile file(path.string());
    TraceBuilder builder(4242, 0);
    const std::vector<RangeRecord> own = {{"fake/case", "gpubench", 0, 12000, 42}, {"measure", "gpubench", 1000, 11000, 42}};
    file.append(builder.events(recorded(), own, "fake/case"));
    file.append(builder.events(recorded(), {}, "fake/case2"));  // tracks are named once only
  }
  const nlohmann::json events = load_trace(path.string());
  std::filesystem::remove(path);
  expect_valid_events(events);

  std::set<std::pair<int, int>> named, used;
  int kernels = 0, copies = 0, nvtx = 0, gpubench_ranges = 0, flows = 0, thread_names = 0;
  for (const auto& e : events) {
    const std::pair<int, int> track{e["pid"].get<int>(), e["tid"].get<int>()};
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      named.insert(track);
      ++thread_names;
    }
    if (e["ph"] == "X") used.insert(track);
    if (e["ph"] == "s") ++flows;
    if (e["ph"] != "X") continue;
    if (e["cat"] == "kernel") ++kernels;
    if (e["cat"] == "memcpy") ++copies;
    if (e["cat"] == "nvtx") ++nvtx;
    if (e["cat"] == "gpubench") ++gpubench_ranges;
  }
  EXPECT_EQ(kernels, 8);  // 4 per batch
  EXPECT_EQ(copies, 2);
  EXPECT_EQ(nvtx, 2);  // the "gpubench" domain's NVTX records are left out (own ranges stand for them)
  EXPECT_EQ(gpubench_ranges, 2);
  EXPECT_EQ(flows, 8);  // every kernel and copy tied to its launch
  EXPECT_EQ(named, used);  // every track used has a name
  EXPECT_EQ(thread_names, static_cast<int>(named.size()));  // ... given once
  EXPECT_TRUE(used.count({kGpuPidBase, 7}) && used.count({kGpuPidBase, 9}));  // one track per stream
  // A kernel on stream 9 at 3 us lasting 3 us, named demangled, with its launch parameters.
  bool found = false;
  for (const auto& e : events) {
    if (e["ph"] == "X" && e["name"] == "reduce(float*, int)") {
      found = true;
      EXPECT_EQ(e["pid"], kGpuPidBase);
      EXPECT_EQ(e["tid"], 9);
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 3.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 3.0);
      EXPECT_EQ(e["args"]["shared_memory_bytes"], 4096);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Activity, TraceEventsAreCappedKernelsBeforeApiCalls) {
  TraceBuilder builder(4242, 0);
  std::size_t dropped = 0;
  // Budget 6: the NVTX range (1), the setup kernel (1, no launch recorded), a gemm with its flow
  // (3); the next gemm and its flow (3) no longer fit, nor does anything after it.
  const auto events = builder.events(recorded(), {}, "c", 6, &dropped);
  int kernels = 0, api = 0, x = 0;
  for (const auto& e : events) {
    if (e["ph"] == "M") continue;
    ++x;
    if (e["cat"] == "kernel") ++kernels;
    if (e["cat"] == "cuda_api") ++api;
  }
  EXPECT_EQ(x, 5);
  EXPECT_EQ(kernels, 2);
  EXPECT_EQ(api, 0);
  EXPECT_EQ(dropped, 3u + 3 + 3 + 4 + 2);  // gemm, reduce, the copy (each with flow), 4 API calls, 2 overheads
}

// --- the trace instrument over a recorded source -----------------------------------------

class RecordedSource final : public ActivitySource {
 public:
  std::optional<std::string> unavailable() const override { return off; }
  std::uint64_t now_ns() override { return clock += 1000; }
  ActivityBatch take() override {
    ++takes;
    ActivityBatch b = std::move(next);
    next = {};
    return b;
  }
  std::optional<std::string> off;
  std::uint64_t clock = 0;
  ActivityBatch next;
  int takes = 0;
};

DeviceInfo cuda_device() {
  DeviceInfo d;
  d.kind = DeviceKind::Cuda;
  d.ordinal = 0;
  d.pci_bus_id = "0000:17:00.0";
  return d;
}

class CountingTimer final : public Timer {
 public:
  void start() override {}
  double stop() override { return 1.0; }
  const char* kind() const override { return "cuda_event"; }
};

TEST(TraceInstrument, CaseFieldsFromARecordedSourceAndTheCuptiTimer) {
  auto source = std::make_shared<RecordedSource>();
  const auto path = std::filesystem::temp_directory_path() / ("gpubench-trace-i-" + std::to_string(::getpid()) + ".json");
  TraceOptions o;
  o.cupti_timer = true;
  o.trace_path = path.string();
  auto trace = make_trace_instrument(source, o);
  EXPECT_EQ(trace->status(), "on");
  const DeviceInfo dev = cuda_device();
  trace->begin_case({"fake/case", "fake", &dev});  // clock 2000 (1000 went to the file's origin)
  trace->begin_phase("measure");                    // 3000: the window opens
  auto timer = trace->timer(std::make_unique<CountingTimer>());
  EXPECT_STREQ(timer->kind(), "cupti_kernel");
  timer->start();  // t0 = 4000
  source->next.kernels = {kernel("k", 4100, 4600), kernel("k", 4700, 4900), kernel("early", 3500, 3900)};
  EXPECT_DOUBLE_EQ(timer->stop(), 700e-9);  // kernels that started in [4000, 5000)
  timer->start();
  EXPECT_THROW(timer->stop(), CaseSkipped);  // a batch without kernels cannot be timed this way
  trace->end_phase();  // the window closes at 8000
  nlohmann::ordered_json profile = nlohmann::ordered_json::object();
  trace->end_case({}, profile);
  EXPECT_EQ(profile["launches"], 3);
  EXPECT_EQ(profile["kernels"][0]["name"], "k");
  EXPECT_EQ(profile["trace_file"], path.string());
  ASSERT_TRUE(profile["overhead"].contains("flush_us"));
  trace.reset();  // closes the file
  const nlohmann::json events = load_trace(path.string());
  std::filesystem::remove(path);
  expect_valid_events(events);
  int ranges = 0;
  for (const auto& e : events) ranges += e["ph"] == "X" && e["cat"] == "gpubench";
  EXPECT_EQ(ranges, 2);  // the case and its measure phase
}

TEST(TraceInstrument, CuptiTimerCountsTheCaseDevicesOnceEach) {
  auto source = std::make_shared<RecordedSource>();
  TraceOptions o;
  o.cupti_timer = true;
  auto trace = make_trace_instrument(source, o);
  const DeviceInfo dev = cuda_device();  // cuda:0
  trace->begin_case({"collectives/all_reduce", "collectives", &dev});  // clock 1000
  trace->begin_phase("verify");                                        // 2000
  trace->end_phase();                                                  // 3000
  trace->begin_phase("measure");  // 4000
  auto timer = trace->timer(std::make_unique<CountingTimer>());
  timer->start();  // t0 = 5000
  // The first take holds what verification ran: the collective's kernel on GPUs 0 and 1 (the
  // case spans both). Then one timed batch: two collectives, each a kernel on GPU 0 and on GPU 1
  // at the same time, and a kernel on GPU 2 (not the case's) that a sum over every device adds.
  source->next.kernels = {on_device(0, 2100, 2900), on_device(1, 2100, 2950),
                          on_device(0, 5100, 5400), on_device(1, 5110, 5400), on_device(0, 5500, 5800),
                          on_device(1, 5500, 5810), on_device(2, 5100, 5900)};
  EXPECT_DOUBLE_EQ(timer->stop(), 610e-9);  // 5100-5400 and 5500-5810, not 1220 ns (sum) or 800 (all GPUs)
  trace->end_phase();
  nlohmann::ordered_json profile = nlohmann::ordered_json::object();
  trace->end_case({}, profile);
  EXPECT_EQ(profile["devices"], nlohmann::ordered_json({0, 1}));
  EXPECT_EQ(profile["launches"], 4);
}

TEST(TraceInstrument, OffWhenTheSourceIsAndForCpuCases) {
  auto source = std::make_shared<RecordedSource>();
  source->off = "off: no CUDA device (no driver)";
  auto trace = make_trace_instrument(source, {});
  EXPECT_EQ(trace->status(), "off: no CUDA device (no driver)");
  const DeviceInfo dev = cuda_device();
  trace->begin_case({"x", "fake", &dev});
  auto base = std::make_unique<CountingTimer>();
  Timer* raw = base.get();
  EXPECT_EQ(trace->timer(std::move(base)).get(), raw);  // the timer stays as it was
  nlohmann::ordered_json profile = nlohmann::ordered_json::object();
  trace->end_case({}, profile);
  EXPECT_TRUE(profile.empty());
  EXPECT_EQ(source->takes, 0);

  auto on = make_trace_instrument(std::make_shared<RecordedSource>(), {});
  const DeviceInfo cpu;
  on->begin_case({"y", "fake", &cpu});
  on->end_case({}, profile);
  EXPECT_TRUE(profile.empty());
}

TEST(OffReasons, CuptiWithoutADeviceTouchesNothing) {
  // The real CUPTI source, told there is no working device: it must not call CUPTI (some calls
  // crash without a device) and says why.
  auto source = start_cupti_activity(false, "no NVIDIA driver is loaded");
  EXPECT_EQ(source->unavailable(), "off: no CUDA device (no NVIDIA driver is loaded)");
  EXPECT_TRUE(source->take().empty());
  auto metrics = make_metrics_instrument({}, false, "no NVIDIA driver is loaded");
  EXPECT_EQ(metrics->status(), "off: no CUDA device (no NVIDIA driver is loaded)");
  EXPECT_FALSE(metrics->wants_replay());
}

TEST(OffReasons, TelemetryWithoutACudaDevice) {
  const DeviceInfo cpu;
  auto t = make_telemetry_instrument({cpu}, "no NVIDIA driver is loaded", 50);
  EXPECT_EQ(t->status(), "off: no CUDA device in this run (no NVIDIA driver is loaded)");
  t->begin_case({"x", "fake", &cpu});
  t->begin_phase("measure");
  t->end_phase();
  nlohmann::ordered_json profile = nlohmann::ordered_json::object();
  t->end_case({}, profile);
  EXPECT_TRUE(profile.empty());
}

TEST(OffReasons, EveryCuptiRefusalHasItsRemedy) {
  const std::vector<std::pair<int, std::string>> cases = {
      {35, "NVreg_RestrictProfilingToAdminUsers=0"}, {39, "another profiler holds CUPTI"},
      {43, "MIG instance"},                           {33, "vGPU"},
      {40, "vGPU"},                                   {41, "confidential computing"},
      {42, "crypto-mining"},                          {44, "SLI"},
      {45, "WSL"},                                    {27, "not supported on this device"},
      {999, "CUPTI failed: X"}};
  for (const auto& [code, words] : cases) {
    const std::string r = cupti::off_reason(code, "X");
    EXPECT_EQ(r.rfind("off: ", 0), 0u) << r;
    EXPECT_NE(r.find(words), std::string::npos) << code << ": " << r;
  }
}

TEST(Metrics, FriendlyNamesForTheDefaultSet) {
  const nlohmann::ordered_json j = summarize_metrics({{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 91.5},
                                                      {"dram__bytes_op_read.sum", 1000},
                                                      {"dram__bytes_op_write.sum", 24},
                                                      {"lts__t_bytes.sum", 5e6},
                                                      {"gpu__time_duration.sum", 2500}});
  EXPECT_EQ(j["sm_throughput_pct"], 91.5);
  EXPECT_EQ(j["dram_bytes"], 1024.0);
  EXPECT_EQ(j["l2_bytes"], 5e6);
  EXPECT_EQ(j["gpu_time_us"], 2.5);
  EXPECT_FALSE(j.contains("tensor_pipe_pct"));
  EXPECT_EQ(default_metrics().front(), "sm__throughput.avg.pct_of_peak_sustained_elapsed");
}

// --- telemetry arithmetic ----------------------------------------------------------------

TEST(Telemetry, CounterDeltaAcrossTheWrap) {
  EXPECT_EQ(counter_delta(100, 350), 250u);
  EXPECT_EQ(counter_delta(~std::uint64_t{0} - 999, 500), 1500u);  // 1000 to the wrap, 500 after
}

TEST(Telemetry, ReasonNamesAndThrottling) {
  EXPECT_EQ(clock_event_reason_names(0x1), (std::vector<std::string>{"gpu_idle"}));
  EXPECT_EQ(clock_event_reason_names(0xC4), (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown", "hw_power_brake_slowdown"}));
  EXPECT_EQ(clock_event_reason_names(0x100), (std::vector<std::string>{"0x100"}));
  EXPECT_FALSE(power_or_thermal_limited(0x1 | 0x2 | 0x10));  // idle, app clocks, sync boost
  for (std::uint64_t bit : {0x4, 0x8, 0x20, 0x40, 0x80}) EXPECT_TRUE(power_or_thermal_limited(bit)) << bit;
}

TelemetrySample sample(double t, unsigned mw, std::optional<std::uint64_t> mj, std::uint64_t reasons = 0) {
  TelemetrySample s;
  s.t_s = t;
  s.reading.power_mw = mw;
  s.reading.energy_mj = mj;
  s.reading.sm_clock_mhz = static_cast<unsigned>(1000 + t * 1000);
  s.reading.clocks_event_reasons = reasons;
  return s;
}

TEST(Telemetry, EnergyFromTheCounterElsePowerIntegral) {
  CaseOutcome outcome;
  outcome.runs = 10;
  outcome.metrics.bytes = 1e9;
  // 0.2 s at 300..500 W; the counter says 80 J.
  std::vector<TelemetrySample> s = {sample(0, 300000, 1000000), sample(0.1, 500000, 1040000, 0x4), sample(0.2, 300000, 1080000)};
  nlohmann::ordered_json j = summarize_telemetry(s, outcome, 100);
  EXPECT_EQ(j["energy_source"], "counter");
  EXPECT_DOUBLE_EQ(j["energy_j"].get<double>(), 80.0);
  EXPECT_DOUBLE_EQ(j["joules_per_run"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(j["gbps_per_watt"].get<double>(), 10.0 / 80.0);  // 10 GB per 80 J
  EXPECT_NEAR(j["power_w"]["mean"].get<double>(), 366.6666, 1e-3);
  EXPECT_EQ(j["power_w"]["max"], 500.0);
  EXPECT_EQ(j["sm_clock_mhz"]["min"], 1000.0);
  EXPECT_DOUBLE_EQ(j["sm_clock_mhz"]["mean"].get<double>(), 1100.0);
  EXPECT_EQ(j["throttled"], true);
  EXPECT_NEAR(j["throttled_samples_pct"].get<double>(), 100.0 / 3, 1e-9);

  // A counter that went backwards by a reset (not a wrap) is implausible: the power integral.
  s[2].reading.energy_mj = 5;
  j = summarize_telemetry(s, outcome, 100);
  EXPECT_EQ(j["energy_source"], "power_integral");
  EXPECT_DOUBLE_EQ(j["energy_j"].get<double>(), 0.1 * (300 + 500) / 2 + 0.1 * (500 + 300) / 2);
  // No counter at all: the integral too; one sample only: no energy.
  for (auto& x : s) x.reading.energy_mj.reset();
  EXPECT_EQ(summarize_telemetry(s, outcome, 100)["energy_source"], "power_integral");
  EXPECT_FALSE(summarize_telemetry({s[0]}, outcome, 100).contains("energy_j"));
  EXPECT_EQ(summarize_telemetry({}, outcome, 100)["samples"], 0);
}

TEST(Telemetry, ItemsPerJouleUnderTheItemsUnit) {
  // 80 J over 0.2 s by the counter, as above.
  const std::vector<TelemetrySample> s = {sample(0, 300000, 1000000), sample(0.1, 500000, 1040000),
                                          sample(0.2, 300000, 1080000)};
  CaseOutcome decode;  // a decode step: 64 generated tokens and its bytes, 10 timed steps
  decode.runs = 10;
  decode.metrics.bytes = 1e9;
  decode.metrics.items = 64;
  decode.metrics.items_unit = "tokens";
  nlohmann::ordered_json j = summarize_telemetry(s, decode, 100);
  EXPECT_DOUBLE_EQ(j["tokens_per_joule"].get<double>(), 640.0 / 80.0);
  EXPECT_DOUBLE_EQ(j["gbps_per_watt"].get<double>(), 10.0 / 80.0);  // beside the bytes' figure

  CaseOutcome serve;  // a serve trace: one single run of 1200 output tokens, with FLOPs as well
  serve.runs = 1;
  serve.metrics.flops = 4e12;
  serve.metrics.items = 1200;
  serve.metrics.items_unit = "output_tokens";
  j = summarize_telemetry(s, serve, 100);
  EXPECT_DOUBLE_EQ(j["output_tokens_per_joule"].get<double>(), 1200.0 / 80.0);
  EXPECT_DOUBLE_EQ(j["gflops_per_watt"].get<double>(), 4000.0 / 80.0);
  EXPECT_FALSE(j.contains("tokens_per_joule"));

  CaseOutcome unnamed;  // items without a unit: items_per_joule
  unnamed.runs = 2;
  unnamed.metrics.items = 8;
  EXPECT_DOUBLE_EQ(summarize_telemetry(s, unnamed, 100)["items_per_joule"].get<double>(), 16.0 / 80.0);

  CaseOutcome none;  // no items, or no timed run: no per-joule figure
  none.runs = 3;
  none.metrics.bytes = 1e9;
  EXPECT_FALSE(summarize_telemetry(s, none, 100).contains("items_per_joule"));
  decode.runs = 0;
  EXPECT_FALSE(summarize_telemetry(s, decode, 100).contains("tokens_per_joule"));
}

// --- host sampler --------------------------------------------------------------------------

TEST(Host, StatmAndCpuPercent) {
  EXPECT_EQ(parse_statm_resident("1000 250 30 4 0 100 0\n", 4096), 250u * 4096);
  EXPECT_EQ(parse_statm_resident("", 4096), std::nullopt);
  EXPECT_DOUBLE_EQ(cpu_percent(1.5, 0.5, 1.0), 200.0);
  EXPECT_DOUBLE_EQ(cpu_percent(1, 1, 0), 0.0);
}

TEST(Host, InstrumentReportsTheMeasurePhase) {
  auto host = make_host_instrument(5);
  const DeviceInfo cpu;
  host->begin_case({"x", "fake", &cpu});
  host->begin_phase("measure");
  // Spin until this thread has used 30 ms of CPU (not wall) time: a loaded machine only
  // stretches the wall time.
  auto cpu_s = [] {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  };
  volatile double sink = 0;
  for (const double start = cpu_s(); cpu_s() - start < 0.03;) sink = sink + 1;
  host->end_phase();
  nlohmann::ordered_json p = nlohmann::ordered_json::object();
  host->end_case({}, p);
  const double used = p["cpu_user_s"].get<double>() + p["cpu_system_s"].get<double>();
  EXPECT_GE(used, 0.029);  // getrusage ticks may round a little
  EXPECT_DOUBLE_EQ(p["cpu_pct"].get<double>(), cpu_percent(p["cpu_user_s"], p["cpu_system_s"], p["wall_s"]));
  EXPECT_GT(p["rss_max_bytes"].get<double>(), 0);
  EXPECT_GE(p["samples"].get<int>(), 2);
  // Issue 27: the outside load and the effective clock (or why there is none) are recorded.
  EXPECT_GE(p["other_cpu_pct"].get<double>(), 0);
  EXPECT_LE(p["other_cpu_pct"].get<double>(), 100);
  EXPECT_GE(p["steal_pct"].get<double>(), 0);
  EXPECT_TRUE(p.contains("cpu_clock_mhz") || p["cpu_clock"].get<std::string>().rfind("unavailable: ", 0) == 0) << p.dump();
}

// /proc/stat's "cpu" line: busy = user + nice + system + irq + softirq; steal apart; idle and
// iowait are not busy. The outside load is the machine's busy time less ours, by hand: 2 CPUs,
// 1 s, 100 ticks/s: busy 150 ticks = 1.5 CPU s, ours 0.5 s -> others 1.0 s of 2.0 = 50%;
// steal 20 ticks = 0.2 s of 2.0 = 10%.
TEST(Host, OutsideLoadFromProcStat) {
  const auto t = parse_proc_stat_cpu("cpu  100 10 20 500 7 3 2 9 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->busy, 100u + 10 + 20 + 3 + 2);
  EXPECT_EQ(t->steal, 9u);
  EXPECT_FALSE(parse_proc_stat_cpu("cpu0 1 2 3\n").has_value());
  const OutsideLoad l = outside_load({1000, 50}, {1150, 70}, 100, 0.5, 1.0, 2);
  EXPECT_DOUBLE_EQ(l.other_cpu_pct, 50);
  EXPECT_DOUBLE_EQ(l.steal_pct, 10);
  // Ours more than the machine's busy time (tick rounding): 0, never negative.
  EXPECT_DOUBLE_EQ(outside_load({1000, 50}, {1010, 50}, 100, 0.5, 1.0, 2).other_cpu_pct, 0);
}

}  // namespace
}  // namespace gpubench::profilers

// --- CUPTI's records -> gpubench's (the field mapping the CUPTI source relies on) ----------

namespace gpubench::profilers {
namespace {

template <typename T>
const CUpti_Activity* as_activity(const T& r) {
  return reinterpret_cast<const CUpti_Activity*>(&r);
}

TEST(CuptiRecords, KernelsCopiesMarkersApiAndOverhead) {
  RecordConverter convert([](CUpti_CallbackId cbid) { return cbid == 211 ? std::string("cudaLaunchKernel") : std::string(); });
  ActivityBatch b;

  KernelActivity k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "_Z4axpyfPfS_";
  k.start = 100, k.end = 350;
  k.deviceId = 1, k.streamId = 13, k.correlationId = 77;
  k.gridX = 1024, k.gridY = 2, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 40;
  k.staticSharedMemory = 512;
  k.dynamicSharedMemory = 49152;
  convert.add(as_activity(k), b);

  MemcpyActivity m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.bytes = 1 << 20;
  m.start = 400, m.end = 500;
  m.streamId = 13, m.correlationId = 78;
  convert.add(as_activity(m), b);

  CUpti_ActivityMemset4 s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.bytes = 4096;
  s.start = 600, s.end = 610;
  convert.add(as_activity(s), b);

  CUpti_ActivityMarker2 open{};
  open.kind = CUPTI_ACTIVITY_KIND_MARKER;
  open.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  open.id = 5;
  open.timestamp = 90;
  open.name = "forward";
  open.domain = "mylib";
  open.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  open.objectId.pt.threadId = 4242;
  convert.add(as_activity(open), b);
  EXPECT_TRUE(b.ranges.empty());  // held until its end
  CUpti_ActivityMarker2 close{};
  close.kind = CUPTI_ACTIVITY_KIND_MARKER;
  close.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  close.id = 5;
  close.timestamp = 700;
  convert.add(as_activity(close), b);

  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.cbid = 211;
  api.start = 80, api.end = 95;
  api.threadId = 4242, api.correlationId = 77;
  convert.add(as_activity(api), b);
  api.cbid = 9999;
  convert.add(as_activity(api), b);

  OverheadActivity o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.threadId = 4242;
  o.start = 800, o.end = 900;
  convert.add(as_activity(o), b);

  ASSERT_EQ(b.kernels.size(), 1u);
  const KernelRecord& kr = b.kernels[0];
  EXPECT_EQ(demangle(kr.name), "axpy(float, float*, float*)");
  EXPECT_EQ(kr.start, 100u);
  EXPECT_EQ(kr.end, 350u);
  EXPECT_EQ(kr.device, 1u);
  EXPECT_EQ(kr.stream, 13u);
  EXPECT_EQ(kr.correlation, 77u);
  EXPECT_EQ(kr.grid[0], 1024);
  EXPECT_EQ(kr.grid[1], 2);
  EXPECT_EQ(kr.block[0], 256);
  EXPECT_EQ(kr.registers_per_thread, 40u);
  EXPECT_EQ(kr.static_shared_bytes + kr.dynamic_shared_bytes, 49664u);
  ASSERT_EQ(b.copies.size(), 2u);
  EXPECT_EQ(b.copies[0].kind, "HtoD");
  EXPECT_EQ(b.copies[0].bytes, 1u << 20);
  EXPECT_EQ(b.copies[0].correlation, 78u);
  EXPECT_EQ(b.copies[1].kind, "memset");
  EXPECT_EQ(b.copies[1].bytes, 4096u);
  ASSERT_EQ(b.ranges.size(), 1u);
  EXPECT_EQ(b.ranges[0].name, "forward");
  EXPECT_EQ(b.ranges[0].domain, "mylib");
  EXPECT_EQ(b.ranges[0].start, 90u);
  EXPECT_EQ(b.ranges[0].end, 700u);
  EXPECT_EQ(b.ranges[0].thread, 4242u);
  ASSERT_EQ(b.api.size(), 2u);
  EXPECT_EQ(b.api[0].name, "cudaLaunchKernel");
  EXPECT_EQ(b.api[0].correlation, 77u);
  EXPECT_EQ(b.api[1].name, "runtime api 9999");  // a callback id CUPTI cannot name
  ASSERT_EQ(b.overheads.size(), 1u);
  EXPECT_EQ(b.overheads[0].kind, "buffer flush");
  EXPECT_EQ(b.overheads[0].thread, 4242u);
  EXPECT_EQ(b.overheads[0].end - b.overheads[0].start, 100u);
}

TEST(CuptiRecords, MemoryARecordHandsToTheClientIsReleasedOnceAndNothingElse) {
  std::vector<void*> released;
  RecordConverter convert([](CUpti_CallbackId) { return std::string(); },
                          [&](void* p) { released.push_back(p); });
  ActivityBatch b;
  OverheadActivity o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.start = 10, o.end = 20;
  convert.add(as_activity(o), b);  // no details: nothing to release
  EXPECT_TRUE(released.empty());
#if CUPTI_API_VERSION >= 130000
  static_assert(kRecordsOwnClientMemory);
  CUpti_ActivityOverheadCommandBufferFullData details{};
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL;
  o.overheadData = &details;
  convert.add(as_activity(o), b);
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0], &details);

  char name[] = "NVIDIA H200";
  CUpti_ActivityDevice5 d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.name = name;
  convert.add(as_activity(d), b);
  ASSERT_EQ(released.size(), 2u);
  EXPECT_EQ(released[1], static_cast<void*>(name));
#endif
  EXPECT_EQ(b.overheads.size(), 2u - (kRecordsOwnClientMemory ? 0 : 1));
  // Records that own nothing release nothing.
  KernelActivity k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "k";
  convert.add(as_activity(k), b);
  EXPECT_EQ(released.size(), kRecordsOwnClientMemory ? 2u : 0u);
}

TEST(CuptiRecords, TheDefaultReleaseFreesOverheadDetails) {
  // The real free() on malloc'd details: a wrong pointer or a double free aborts here, and a
  // leak checker (valgrind, -fsanitize=leak) reports the details if they were not freed.
  RecordConverter convert([](CUpti_CallbackId) { return std::string(); });
  ActivityBatch b;
  OverheadActivity o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
#if CUPTI_API_VERSION >= 130000
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL;
  o.overheadData = std::malloc(sizeof(CUpti_ActivityOverheadCommandBufferFullData));
#endif
  convert.add(as_activity(o), b);
  EXPECT_EQ(b.overheads.size(), 1u);
}

}  // namespace
}  // namespace gpubench::profilers
