#include "bench/soak/runner.hpp"

#include <fmt/format.h>

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "bench/core/cuda_portable.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/numbers.hpp"
#include "bench/core/nvml.hpp"
#include "bench/core/host_load.hpp"

namespace gpubench::soak {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// What a worker has done since the last sample, per load.
struct Acc {
  std::int64_t runs = 0;
  double busy_s = 0;
  int verifications = 0, mismatches = 0;
  std::string detail, error;
  bool active() const { return runs > 0 || verifications > 0 || !error.empty(); }
};

struct Slot {
  LoadInfo info;
  std::vector<GemmChoice> fallbacks;  // gemm: the precisions after the planned one, best first
  std::unique_ptr<Case> c;
  std::unique_ptr<Timer> timer;
  std::int64_t runs_per_batch = 1;
  Clock::time_point last_verify{};
};

// The rate's unit and the work of one run in its numerator: tokens (or samples) for train,
// else TFLOP (TOP for integer GEMMs), else GB moved. Decimal units.
void set_unit(LoadInfo& info, const Metrics& m) {
  if (info.load == "train" && m.items > 0) {
    info.unit = (m.items_unit.empty() ? std::string("items") : m.items_unit) + "/s";
    info.work_per_run = m.items;
  } else if (m.flops > 0) {
    info.unit = m.integer_ops ? "TOP/s" : "TFLOP/s";
    info.work_per_run = m.flops / 1e12;
  } else {
    info.unit = "GB/s";
    info.work_per_run = m.bytes / 1e9;
  }
}

// Host figures over one interval: this process's CPU use, resident memory, load average.
struct HostProbe {
  double last_cpu_s = cpu_seconds();
  Clock::time_point last = Clock::now();
  std::optional<MachineCpuTicks> last_ticks = machine_ticks();

  static std::optional<MachineCpuTicks> machine_ticks() {
    std::ifstream in("/proc/stat");
    std::string head;
    std::getline(in, head);
    return parse_proc_stat_cpu(head);
  }

  static double cpu_seconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
    return s(u.ru_utime) + s(u.ru_stime);
  }
  void fill(Sample& s) {
    const double cpu = cpu_seconds();
    const double wall = since(last);
    if (wall > 0) s.cpu_pct = cpu_percent(cpu - last_cpu_s, 0, wall);
    const std::optional<MachineCpuTicks> ticks = machine_ticks();
    if (ticks && last_ticks && wall > 0) {
      const OutsideLoad l =
          outside_load(*last_ticks, *ticks, static_cast<double>(::sysconf(_SC_CLK_TCK)), cpu - last_cpu_s, wall,
                                  static_cast<int>(std::thread::hardware_concurrency()));
      s.other_cpu_pct = l.other_cpu_pct;
      s.steal_pct = l.steal_pct;
    }
    last_ticks = ticks;
    last_cpu_s = cpu;
    last = Clock::now();
    std::ifstream in("/proc/self/statm");
    std::string statm;
    std::getline(in, statm);
    if (auto r = parse_statm_resident(statm, static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)))) {
      s.rss_bytes = static_cast<double>(*r);
    }
    double avg[1] = {0};
    if (::getloadavg(avg, 1) == 1) s.load_avg_1m = avg[0];
  }
};

void fill_gpu(Sample& s, nvml::Handle h) {
  const nvml::Reading r = nvml::read(h);
  auto d = [](const auto& v) { return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt; };
  s.sm_clock_mhz = d(r.sm_clock_mhz);
  s.memory_clock_mhz = d(r.memory_clock_mhz);
  s.temperature_c = d(r.temperature_c);
  if (r.power_mw) s.power_w = *r.power_mw / 1000.0;
  s.gpu_utilization_pct = d(r.gpu_utilization_pct);
  s.clocks_event_reasons = r.clocks_event_reasons;
  const nvml::Health hl = nvml::read_health(h);
  s.memory_temperature_c = d(hl.memory_temperature_c);
  s.fan_pct = d(hl.fan_pct);
  if (hl.enforced_power_limit_mw) s.power_limit_w = *hl.enforced_power_limit_mw / 1000.0;
  s.ecc_corrected = hl.ecc_corrected;
  s.ecc_uncorrected = hl.ecc_uncorrected;
  if (hl.retired_pages_single_bit || hl.retired_pages_double_bit) {
    s.retired_pages = std::uint64_t{hl.retired_pages_single_bit.value_or(0)} + hl.retired_pages_double_bit.value_or(0);
  }
  if (hl.remapped_rows_corrected) s.remapped_rows_corrected = *hl.remapped_rows_corrected;
  if (hl.remapped_rows_uncorrected) s.remapped_rows_uncorrected = *hl.remapped_rows_uncorrected;
  s.row_remap_failure = hl.row_remap_failure;
  if (hl.pcie_replay_count) s.pcie_replays = *hl.pcie_replay_count;
}

}  // namespace

struct Soak::Impl {
  struct Device {
    DeviceInfo info;
    std::vector<Slot> slots;  // one per load
    std::mutex mu;            // guards acc and the slots' info
    std::vector<Acc> acc;
    std::atomic<int> current{0};
    std::atomic<bool> stopped{false};
    std::optional<nvml::Handle> nvml;
  };
  SoakOptions options;
  std::vector<std::unique_ptr<Device>> devices;
  std::unique_ptr<nvml::XidWatch> xid;

  void record_verification(Device& d, std::size_t li, const Verification& v) {
    std::lock_guard<std::mutex> lock(d.mu);
    Acc& a = d.acc[li];
    ++a.verifications;
    if (!v.passed) {
      ++a.mismatches;
      if (a.detail.empty()) a.detail = v.detail.empty() ? v.method : v.detail;
    }
  }
  void record_error(Device& d, std::size_t li, const std::string& e) {
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.acc[li].error.empty()) d.acc[li].error = e;
    d.stopped = true;
  }

  // A fresh case, set up and checked. Verification::passed false: never timed.
  Verification prepare(Device& d, Slot& s) {
    s.timer.reset();
    s.c.reset();  // the old buffers go before the new ones are allocated
    s.c = s.info.planned.suite->make_case(d.info, s.info.planned.point);
    s.c->setup();
    s.timer = s.c->make_timer();
    const Verification v = s.c->verify();
    s.c->synchronize();
    s.last_verify = Clock::now();
    if (!v.passed) {  // never timed: a later phase sets it up and checks it again
      s.timer.reset();
      s.c.reset();
      return v;
    }
    std::lock_guard<std::mutex> lock(d.mu);
    s.info.metrics = s.c->metrics();
    set_unit(s.info, s.info.metrics);
    s.info.ready = true;
    return v;
  }

  // prepare(), except that a gemm precision the library refuses in setup (a skip, such as
  // cuBLASLt's "not supported") gives way to the next of the slot's fallbacks, and the note says
  // so. Other skips, and the last precision's, propagate.
  Verification prepare_or_fall_back(Device& d, Slot& s) {
    std::string refused;
    while (true) {
      try {
        const Verification v = prepare(d, s);
        if (!refused.empty()) {
          std::lock_guard<std::mutex> lock(d.mu);
          s.info.note += "; " + refused;
        }
        return v;
      } catch (const CaseSkipped& e) {
        if (s.fallbacks.empty()) throw;
        const std::string was = s.info.planned.point.text("dtype");
        refused += fmt::format("{}{} was refused here ({})", refused.empty() ? "" : "; ", was, e.what());
        const GemmChoice next = s.fallbacks.front();
        s.fallbacks.erase(s.fallbacks.begin());
        std::lock_guard<std::mutex> lock(d.mu);
        s.info.planned = plan_gemm_load(d.info, next.dtype);
        s.info.note = next.why;
      }
    }
  }

  // Every load of the device set up and checked once, before the phase's clock starts (the
  // setup of a large case takes seconds; it is not part of the soak). A wrong first answer or a
  // failed setup stops the device.
  void prepare_all(Device& d) {
    std::optional<cuda::ScopedDevice> scoped;
    std::size_t li = 0;
    try {
      if (d.info.is_cuda()) scoped.emplace(d.info.ordinal);
      for (li = 0; li < d.slots.size(); ++li) {
        Slot& s = d.slots[li];
        if (s.info.planned.skip_reason) {
          return record_error(d, li, fmt::format("{} cannot run here: {}", s.info.load, *s.info.planned.skip_reason));
        }
        if (s.c) continue;
        const Verification v = prepare_or_fall_back(d, s);
        record_verification(d, li, v);
        if (!v.passed) return record_error(d, li, "the first answer differed from the reference; nothing timed");
      }
    } catch (const CaseSkipped& e) {
      record_error(d, li, std::string("skipped: ") + e.what());
    } catch (const std::exception& e) {
      record_error(d, li, e.what());
    }
  }

  void work(Device& d, Clock::time_point deadline, double target_batch_s, const std::atomic<bool>& stop,
            const std::atomic<bool>& done) {
    std::optional<cuda::ScopedDevice> scoped;
    std::size_t li = 0;
    try {
      if (d.info.is_cuda()) scoped.emplace(d.info.ordinal);
      while (!stop && !done && !d.stopped && Clock::now() < deadline) {
        li = static_cast<std::size_t>(d.current.load());
        Slot& s = d.slots[li];
        if (s.info.planned.skip_reason) {
          record_error(d, li, fmt::format("{} cannot run here: {}", s.info.load, *s.info.planned.skip_reason));
          return;
        }
        if (!s.c) {
          const Verification v = prepare(d, s);
          record_verification(d, li, v);
          if (!v.passed) return record_error(d, li, "the first answer differed from the reference; nothing timed");
          continue;
        }
        if (std::chrono::duration<double>(Clock::now() - s.last_verify).count() >= options.verify_every_s) {
          // The train step changes its weights as it runs, so its answer is checked on a fresh
          // case (same seed); GEMM (beta 0) and triad give the same answer at every run.
          Verification v;
          if (s.info.load == "train") {
            v = prepare(d, s);
          } else {
            v = s.c->verify();
            s.c->synchronize();
            s.last_verify = Clock::now();
          }
          record_verification(d, li, v);
          if (!v.passed) {
            s.timer.reset();
            s.c.reset();
            return record_error(d, li, "an answer differed from the reference; the load stopped");
          }
          continue;
        }
        const std::int64_t k = s.runs_per_batch;
        s.timer->start();
        for (std::int64_t i = 0; i < k; ++i) s.c->run();
        const double t = s.timer->stop();
        {
          std::lock_guard<std::mutex> lock(d.mu);
          d.acc[li].runs += k;
          d.acc[li].busy_s += t;
        }
        const double per_run = t / static_cast<double>(k);
        if (per_run > 0) {
          s.runs_per_batch = std::clamp<std::int64_t>(std::llround(target_batch_s / per_run), 1, 1000000);
        }
      }
    } catch (const CaseSkipped& e) {
      record_error(d, li, std::string("skipped: ") + e.what());
    } catch (const std::exception& e) {
      record_error(d, li, e.what());
    }
  }

  std::vector<Sample> take(double t_s, double interval_s, const std::string& label, HostProbe& host) {
    std::vector<Sample> out;
    std::vector<nvml::XidEvent> events;
    if (xid) events = xid->poll();
    for (auto& dp : devices) {
      Device& d = *dp;
      std::vector<Sample> mine;
      {
        std::lock_guard<std::mutex> lock(d.mu);
        for (std::size_t li = 0; li < d.slots.size(); ++li) {
          Acc& a = d.acc[li];
          const bool current = li == static_cast<std::size_t>(d.current.load());
          if (!a.active() && !(current && mine.empty())) continue;
          Sample s;
          s.t_s = t_s;
          s.interval_s = interval_s;
          s.phase = label;
          s.device = d.info.id();
          s.load = d.slots[li].info.load;
          s.unit = d.slots[li].info.unit;
          s.runs = a.runs;
          s.busy_s = a.busy_s;
          if (a.runs > 0 && a.busy_s > 0) {
            s.rate = static_cast<double>(a.runs) * d.slots[li].info.work_per_run / a.busy_s;
          }
          s.verifications = a.verifications;
          s.mismatches = a.mismatches;
          s.mismatch_detail = a.detail;
          s.error = a.error;
          a = Acc{};
          mine.push_back(std::move(s));
        }
      }
      for (Sample& s : mine) {
        if (d.nvml) fill_gpu(s, *d.nvml);
        if (!d.info.is_cuda()) host.fill(s);
        for (const nvml::XidEvent& e : events) {
          if (d.nvml && e.device == d.nvml->device) s.xids.push_back(e.xid);
        }
        events.erase(std::remove_if(events.begin(), events.end(),
                                    [&](const nvml::XidEvent& e) { return d.nvml && e.device == d.nvml->device; }),
                     events.end());
        out.push_back(std::move(s));
      }
    }
    return out;
  }
};

Soak::Soak(std::vector<DeviceInfo> devices, SoakOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  std::vector<nvml::Handle> handles;
  for (DeviceInfo& info : devices) {
    auto d = std::make_unique<Impl::Device>();
    d->info = info;
    for (const std::string& load : impl_->options.loads) {
      Slot s;
      s.info.device = info.id();
      s.info.load = load;
      s.info.planned = plan_load(load, info, impl_->options.peak);
      if (load == "gemm") {
        s.fallbacks = gemm_dtype_choices(info, impl_->options.peak);
        if (!s.fallbacks.empty()) {
          s.info.note = s.fallbacks.front().why;
          s.fallbacks.erase(s.fallbacks.begin());
        }
      }
      d->slots.push_back(std::move(s));
      d->acc.emplace_back();
    }
    if (info.is_cuda()) {
      d->nvml = nvml::find_by_pci(info.pci_bus_id);
      if (d->nvml) handles.push_back(*d->nvml);
    }
    impl_->devices.push_back(std::move(d));
  }
  if (!handles.empty()) impl_->xid = std::make_unique<nvml::XidWatch>(handles);
}

Soak::~Soak() = default;

std::vector<LoadInfo> Soak::loads() const {
  std::vector<LoadInfo> out;
  for (const auto& d : impl_->devices) {
    std::lock_guard<std::mutex> lock(d->mu);
    for (const Slot& s : d->slots) out.push_back(s.info);
  }
  return out;
}

std::string Soak::xid_status() const {
  if (impl_->xid) return impl_->xid->status();
  for (const auto& d : impl_->devices) {
    if (d->info.is_cuda()) return "off: " + (nvml::available() ? std::string("NVML does not know the GPU") : nvml::unavailable_reason());
  }
  return "off: no GPU";
}

std::vector<Sample> Soak::run_phase(double duration_s, double interval_s, const std::string& label, double t_offset_s,
                                    const std::atomic<bool>& stop,
                                    const std::function<void(const std::vector<Sample>&)>& on_samples) {
  Impl& im = *impl_;
  const std::size_t n_loads = im.options.loads.size();
  for (auto& d : im.devices) {
    d->current = 0;
    d->stopped = false;
    std::lock_guard<std::mutex> lock(d->mu);
    for (Acc& a : d->acc) a = Acc{};
  }
  {  // set up and check every case on every device at once, before the clock starts
    std::vector<std::thread> preparing;
    for (auto& d : im.devices) preparing.emplace_back([&im, &d] { im.prepare_all(*d); });
    for (std::thread& t : preparing) t.join();
  }
  const Clock::time_point start = Clock::now();
  const Clock::time_point end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration_s));
  const double target_batch_s = std::min(0.2, interval_s / 4);
  std::atomic<bool> done{false};
  std::vector<std::thread> workers;
  for (auto& d : im.devices) {
    workers.emplace_back([&im, &d, end, target_batch_s, &stop, &done] { im.work(*d, end, target_batch_s, stop, done); });
  }
  HostProbe host;
  std::vector<Sample> series;
  double prev = 0;
  for (long tick = 1;; ++tick) {
    const double tick_s = std::min(duration_s, static_cast<double>(tick) * interval_s);
    bool all_stopped = false;
    while (!stop && since(start) < tick_s) {
      all_stopped = true;
      for (auto& d : im.devices) all_stopped = all_stopped && d->stopped;
      if (all_stopped) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(std::clamp<long>(
          std::lround((tick_s - since(start)) * 1000), 1, 20)));
    }
    const bool last = stop || all_stopped || since(start) >= duration_s - 1e-6;
    if (last) {  // the workers finish their batch, so the last sample holds everything done
      done = true;
      for (std::thread& w : workers) w.join();
      workers.clear();
    }
    const double now = since(start);
    std::vector<Sample> batch = im.take(t_offset_s + now, now - prev, label, host);
    prev = now;
    if (n_loads > 1) {
      for (auto& d : im.devices) d->current = static_cast<int>(tick % static_cast<long>(n_loads));
    }
    series.insert(series.end(), batch.begin(), batch.end());
    if (on_samples) on_samples(batch);
    if (last) break;
  }
  return series;
}

}  // namespace gpubench::soak
