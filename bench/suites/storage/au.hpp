#pragma once
// How many accelerators this storage keeps fed: MLPerf Storage's emulation (mlcommons/storage,
// Submission_guidelines.md "Performance Metrics"; its DLIO workload configs). N emulated
// accelerators each take a batch of `batch` samples from its loader, then "compute" for the
// workload's step time (a sleep: no GPU is needed); each has `read_threads` loader threads
// reading its share of the samples from one file, up to `prefetch` batches per thread ahead.
//
//   AU (accelerator utilisation) = compute time / run time, per accelerator, averaged over the N.
//   MLPerf excludes the first step's wait (its runs last thousands of steps). Ours last tens, and
//   while the first batch is read the loader threads also fill the rest of the queue (read_threads
//   x prefetch batches), which a short run then consumes without waiting: so the AU judged here
//   is the steady one, over the steps after that fill (the run time starts when batch number
//   `fill` arrives); MLPerf's first-step-only AU of the same run is recorded beside it.
//   samples/s and GB/s: the steady window's, what the accelerators consumed.
//
// A sample is `sample_bytes` contiguous bytes (rounded up to 4 KiB for O_DIRECT) at a shuffled
// position in the file; samples larger than kChunk are read in kChunk pieces, one after the other.
// Every read of the generated file is checked against its position-derived content (its first and
// last 64 bytes), so a short or misplaced read fails the run.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/suites/storage/storage.hpp"

namespace gpubench::suites::storage {

// A workload: what one accelerator reads per step and how long it computes on it.
struct AuWorkload {
  std::string name;             // resnet50, unet3d, retinanet, or "custom"
  std::string accelerator;      // h100, a100 (whose step time this is), or "custom"
  std::int64_t sample_bytes = 0;
  int batch = 1;                // samples per step per accelerator
  double compute_s = 0;         // the emulated step (a sleep)
  double au_min = 0.9;          // the pass threshold (share)
  int read_threads = 4;         // loader threads per accelerator
  std::string source;           // where the figures come from
  // Bytes per second one accelerator consumes when never waiting.
  double demand_bytes_per_s() const { return static_cast<double>(sample_bytes) * batch / compute_s; }
};

// MLPerf Storage's workloads with the step times its configs give for NVIDIA H100 and A100
// (configs/dlio/workload/<name>_<gpu>.yaml). Empty when the pair is not there.
std::vector<AuWorkload> published_workloads();
const AuWorkload* find_workload(const std::string& name, const std::string& accelerator);

inline constexpr std::int64_t kChunk = 8 << 20;  // the largest single read of a big sample

struct AuRunOptions {
  int accelerators = 1;
  int steps = 8;          // per accelerator after the queue's fill (at least 2)
  Io io = Io::Direct;
  int prefetch = 2;       // batches per loader thread ahead (PyTorch's prefetch_factor)
  std::uint64_t seed = 1;
  // A run on storage far too slow ends here (0: never): each accelerator's AU then counts the
  // wait it was in as waiting, one that never got its first batch has AU 0.
  double max_wall_s = 0;
};

struct AuRun {
  int accelerators = 0;
  int steps = 0;             // per accelerator: fill + steady steps
  int fill = 0;              // the steps left out of the steady AU (read_threads x prefetch)
  double au = 0;             // steady, mean over the accelerators (share)
  double au_min = 0;         // the lowest accelerator's
  double au_first_step = 0;  // MLPerf's: only the first step's wait left out
  double wall_s = 0;         // first batch asked for to the last step done
  double samples_per_s = 0;  // all accelerators, the steady window
  double bytes_per_s = 0;    // samples_per_s x the aligned sample size
  double wait_p50_s = 0, wait_p99_s = 0;  // per step, the first excluded, all accelerators
  std::int64_t reads_checked = 0;
  std::int64_t bytes_read = 0;  // every read, the fill's and the cut ones' included
  std::int64_t steps_done = 0;  // over all accelerators (n x steps unless cut short)
  bool cut_short = false;       // ended at max_wall_s
  bool passed(double threshold) const { return au >= threshold; }
};

// The AU of `o.accelerators` emulated accelerators over `file` (file_for: generated and
// checked, or GPUBENCH_STORAGE_FILE, read unchecked). Throws std::runtime_error on an I/O error,
// a short read or wrong content; CaseSkipped where O_DIRECT is refused.
AuRun run_au(const AuWorkload& w, const AuRunOptions& o, const FileInfo& file);

// The AU of one accelerator's steps from the arrival of batch `from` (0: the first, MLPerf's) to
// its last step's end: compute[from..] / (compute[from..] + wait[from+1..] + `pending_wait_s`,
// a wait the run's end cut short). 0 when no step is in the window. Pure; unit-tested.
double accelerator_utilisation(const std::vector<double>& compute_s, const std::vector<double>& wait_s,
                               double pending_wait_s = 0, std::size_t from = 0);

// The aligned size a sample occupies and is read as.
std::int64_t aligned_sample_bytes(std::int64_t sample_bytes);

}  // namespace gpubench::suites::storage
