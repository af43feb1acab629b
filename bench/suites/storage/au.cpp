// MLPerf Storage's emulated accelerators over one file (au.hpp): loader threads read shuffled
// samples, accelerators sleep a step per batch, AU = compute / run time.
#include "bench/suites/storage/au.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>

#include "bench/suites/dataload/io.hpp"

namespace gpubench::suites::storage {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(at);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

// One accelerator's queue: batches its loader threads finished and it has not yet taken.
struct Accelerator {
  std::mutex m;
  std::condition_variable ready_cv, space_cv;
  int next_batch = 0;  // the next batch index a loader thread takes
  int ready = 0;       // finished, not yet taken
  int taken = 0;       // taken by the accelerator
  std::vector<double> waits, computes;
  double pending_wait = 0;  // a wait cut short by the end of the run
};

}  // namespace

// Step times and sample sizes: mlcommons/storage configs/dlio/workload/{unet3d,resnet50,
// retinanet}_{h100,a100}.yaml (train.computation_time, dataset.record_length_bytes,
// reader.batch_size, reader.read_threads, metric.au). unet3d's samples vary (stdev 68 MB around
// the mean); here every sample has the mean size.
std::vector<AuWorkload> published_workloads() {
  const std::string src = "MLPerf Storage, mlcommons/storage configs/dlio/workload/";
  return {
      {"unet3d", "h100", 146600628, 7, 0.323, 0.90, 4, src + "unet3d_h100.yaml"},
      {"unet3d", "a100", 146600628, 7, 0.636, 0.90, 4, src + "unet3d_a100.yaml"},
      {"resnet50", "h100", 114660, 400, 0.224, 0.90, 8, src + "resnet50_h100.yaml"},
      {"resnet50", "a100", 114660, 400, 0.435, 0.90, 8, src + "resnet50_a100.yaml"},
      {"retinanet", "h100", 153600, 16, 0.180, 0.85, 8, src + "retinanet_h100.yaml"},
  };
}

const AuWorkload* find_workload(const std::string& name, const std::string& accelerator) {
  static const std::vector<AuWorkload> all = published_workloads();
  for (const AuWorkload& w : all) {
    if (w.name == name && w.accelerator == accelerator) return &w;
  }
  return nullptr;
}

std::int64_t aligned_sample_bytes(std::int64_t sample_bytes) { return (sample_bytes + kAlign - 1) / kAlign * kAlign; }

double accelerator_utilisation(const std::vector<double>& compute_s, const std::vector<double>& wait_s,
                               double pending_wait_s, std::size_t from) {
  if (compute_s.size() <= from) return 0;
  double compute = 0, waited = pending_wait_s;
  for (std::size_t i = from; i < compute_s.size(); ++i) compute += compute_s[i];
  for (std::size_t i = from + 1; i < wait_s.size(); ++i) waited += wait_s[i];  // batch `from`'s own wait left out
  return compute + waited > 0 ? compute / (compute + waited) : 0;
}

AuRun run_au(const AuWorkload& w, const AuRunOptions& o, const FileInfo& file) {
  const std::int64_t slot = aligned_sample_bytes(w.sample_bytes);
  const std::int64_t slots = std::min<std::int64_t>(file.bytes / slot, 1 << 24);
  if (slots < w.batch) {
    throw std::runtime_error(fmt::format("{} holds {} samples of {} bytes, fewer than a batch of {}", file.path.string(),
                                         slots, slot, w.batch));
  }
  const int n = o.accelerators;
  const int fill = std::max(1, o.prefetch * w.read_threads);  // batches a queue may hold or have in flight
  const int steps = fill + std::max(2, o.steps);
  // The epoch's order: every sample slot once, shuffled by the seed (file_shuffle/sample_shuffle).
  std::vector<std::uint32_t> order(static_cast<std::size_t>(slots));
  std::iota(order.begin(), order.end(), 0U);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(o.seed));

  const dataload::IoMode mode = o.io == Io::Direct ? dataload::IoMode::Direct : dataload::IoMode::Cached;
  std::vector<Accelerator> accs(static_cast<std::size_t>(n));
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> checked{0}, bytes{0};
  std::mutex error_m;
  std::exception_ptr error;
  auto fail = [&](std::exception_ptr e) {
    {
      std::lock_guard<std::mutex> g(error_m);
      if (!error) error = e;
    }
    stop = true;
    for (Accelerator& a : accs) {
      std::lock_guard<std::mutex> g(a.m);
      a.ready_cv.notify_all();
      a.space_cv.notify_all();
    }
  };

  auto loader = [&](int acc) {
    Accelerator& a = accs[static_cast<std::size_t>(acc)];
    try {
      dataload::RangeFile f(file.path, mode);
      dataload::ReadBuffer buffer;
      for (;;) {
        int b = 0;
        {
          std::unique_lock<std::mutex> lk(a.m);
          a.space_cv.wait(lk, [&] { return stop || a.next_batch >= steps || a.next_batch < a.taken + fill; });
          if (stop || a.next_batch >= steps) return;
          b = a.next_batch++;
        }
        for (int j = 0; j < w.batch && !stop; ++j) {
          // Accelerator `acc`'s share of the epoch: global step b, its place among the n.
          const std::int64_t g = (static_cast<std::int64_t>(b) * n + acc) * w.batch + j;
          const std::uint64_t base = static_cast<std::uint64_t>(order[static_cast<std::size_t>(g % slots)]) * slot;
          for (std::int64_t at = 0; at < slot && !stop; at += kChunk) {
            const auto len = static_cast<std::size_t>(std::min(kChunk, slot - at));
            const std::uint64_t off = base + static_cast<std::uint64_t>(at);
            const dataload::ReadResult r = f.read(off, len, buffer);
            if (!r.ok) throw std::runtime_error(fmt::format("short read of {} bytes at {} in {}", len, off, file.path.string()));
            if (file.generated) {
              const std::size_t edge = std::min<std::size_t>(64, len);
              std::optional<std::int64_t> bad = first_wrong_byte(off, r.data, edge);
              if (!bad) bad = first_wrong_byte(off + len - edge, r.data + len - edge, edge);
              if (bad) {
                throw std::runtime_error(fmt::format("the {} bytes read at {} of {} are not the file's content",
                                                     len, off, file.path.string()));
              }
              checked.fetch_add(1, std::memory_order_relaxed);
            }
            bytes.fetch_add(static_cast<std::int64_t>(len), std::memory_order_relaxed);
          }
        }
        if (stop) return;  // a batch cut short is not delivered
        std::lock_guard<std::mutex> g(a.m);
        ++a.ready;
        a.ready_cv.notify_one();
      }
    } catch (...) {
      fail(std::current_exception());
    }
  };

  const auto compute = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(w.compute_s));
  std::vector<Clock::time_point> ends(static_cast<std::size_t>(n));
  std::atomic<bool> cut{false};
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      o.max_wall_s > 0 ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.max_wall_s))
                       : Clock::time_point{};  // none
  auto accelerator = [&](int acc) {
    Accelerator& a = accs[static_cast<std::size_t>(acc)];
    for (int s = 0; s < steps; ++s) {
      const Clock::time_point t0 = Clock::now();
      {
        std::unique_lock<std::mutex> lk(a.m);
        const auto woken = [&] { return stop || a.ready > 0; };
        // (No wait_until(time_point::max()): libstdc++ converts it to a timespec that overflows.)
        const bool in_time = o.max_wall_s > 0 ? a.ready_cv.wait_until(lk, deadline, woken) : (a.ready_cv.wait(lk, woken), true);
        if (!in_time) {
          // Out of time: this wait counts as waiting; the loaders stop.
          a.pending_wait = seconds(Clock::now() - t0);
          cut = true;
          lk.unlock();
          stop = true;
          for (Accelerator& other : accs) {
            std::lock_guard<std::mutex> g(other.m);
            other.ready_cv.notify_all();
            other.space_cv.notify_all();
          }
          break;
        }
        if (a.ready == 0) {  // stopped: by a failure, or by another accelerator's deadline
          if (cut) a.pending_wait = seconds(Clock::now() - t0);
          break;
        }
        --a.ready;
        ++a.taken;
        a.space_cv.notify_all();
      }
      const Clock::time_point t1 = Clock::now();
      std::this_thread::sleep_until(t1 + compute);  // the emulated step
      const Clock::time_point t2 = Clock::now();
      a.waits.push_back(seconds(t1 - t0));
      a.computes.push_back(seconds(t2 - t1));
    }
    ends[static_cast<std::size_t>(acc)] = Clock::now();
  };

  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(w.read_threads + 1));
  for (int acc = 0; acc < n; ++acc) {
    for (int t = 0; t < w.read_threads; ++t) threads.emplace_back(loader, acc);
  }
  for (int acc = 0; acc < n; ++acc) threads.emplace_back(accelerator, acc);
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);

  AuRun r;
  r.accelerators = n;
  r.steps = steps;
  r.fill = fill;
  r.cut_short = cut;
  const Clock::time_point end = *std::max_element(ends.begin(), ends.end());
  r.wall_s = seconds(end - start);
  std::vector<double> waits;
  double au_sum = 0, first_sum = 0;
  r.au_min = 1;
  const auto from = static_cast<std::size_t>(fill);
  for (const Accelerator& a : accs) {
    const double au = accelerator_utilisation(a.computes, a.waits, a.pending_wait, from);
    au_sum += au;
    first_sum += accelerator_utilisation(a.computes, a.waits, a.pending_wait, 0);
    r.steps_done += static_cast<std::int64_t>(a.computes.size());
    r.au_min = std::min(r.au_min, au);
    // The steady window of this accelerator: from batch `fill`'s arrival to its end.
    if (a.computes.size() > from) {
      double window = a.pending_wait;
      for (std::size_t i = from; i < a.computes.size(); ++i) window += a.computes[i] + (i > from ? a.waits[i] : 0.0);
      r.samples_per_s += static_cast<double>(a.computes.size() - from) * w.batch / window;
      waits.insert(waits.end(), a.waits.begin() + static_cast<std::ptrdiff_t>(from) + 1, a.waits.end());
    }
  }
  r.au = au_sum / n;
  r.au_first_step = first_sum / n;
  r.bytes_per_s = r.samples_per_s * static_cast<double>(slot);
  r.wait_p50_s = quantile(waits, 0.5);
  r.wait_p99_s = quantile(waits, 0.99);
  r.reads_checked = checked.load();
  r.bytes_read = bytes.load();
  return r;
}

}  // namespace gpubench::suites::storage
