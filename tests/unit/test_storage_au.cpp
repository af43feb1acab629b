// MLPerf-Storage-style emulated accelerators (bench/suites/storage/au.hpp) and the search over
// their number (bench/tune/storage_tune.hpp): AU's arithmetic by hand, the published workloads,
// the search's order, the option checks, and runs on a small file in the temporary folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <tuple>

#include "bench/core/errors.hpp"
#include "bench/suites/storage/au.hpp"
#include "bench/tune/storage_tune.hpp"

namespace gpubench::suites::storage {
namespace {

TEST(StorageAu, UtilisationLeavesOutTheFirstWaitAndCountsACutWait) {
  // Three 0.1 s steps; the first batch took 5 s to come (excluded), the next two 0.05 s each:
  // AU = 0.3 / (0.3 + 0.1) = 75%.
  EXPECT_NEAR(accelerator_utilisation({0.1, 0.1, 0.1}, {5, 0.05, 0.05}), 0.75, 1e-12);
  // Never waiting after the first batch: 100%.
  EXPECT_NEAR(accelerator_utilisation({0.2, 0.2}, {1, 0}), 1.0, 1e-12);
  // A wait of 0.2 s the run's end cut short counts: 0.2 / (0.2 + 0.2) = 50%.
  EXPECT_NEAR(accelerator_utilisation({0.2}, {0.01}, 0.2), 0.5, 1e-12);
  // No step at all (the first batch never came): 0.
  EXPECT_EQ(accelerator_utilisation({}, {}, 3.0), 0.0);
  // The steady window from batch 2's arrival: the prefetched batches 0 and 1 came at once after
  // a long first wait; from batch 2 on each waits 0.1 s: 0.2 / (0.2 + 0.1) = 2/3, where MLPerf's
  // first-step-only AU of the same steps is 0.4 / (0.4 + 0.1) = 80%.
  const std::vector<double> c{0.1, 0.1, 0.1, 0.1}, w{3.0, 0.0, 0.0, 0.1};
  EXPECT_NEAR(accelerator_utilisation(c, w, 0, 2), 2.0 / 3, 1e-12);
  EXPECT_NEAR(accelerator_utilisation(c, w, 0, 0), 0.8, 1e-12);
  EXPECT_EQ(accelerator_utilisation(c, w, 0, 4), 0.0);  // no step in the window
}

TEST(StorageAu, PublishedWorkloadsAreMlperfStoragesConfigs) {
  const AuWorkload* u = find_workload("unet3d", "h100");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->sample_bytes, 146600628);
  EXPECT_EQ(u->batch, 7);
  EXPECT_DOUBLE_EQ(u->compute_s, 0.323);
  EXPECT_DOUBLE_EQ(u->au_min, 0.90);
  // By hand: 7 x 146600628 B / 0.323 s = 3.177 GB/s per H100 (docs/suite-storage.md).
  EXPECT_NEAR(u->demand_bytes_per_s() / 1e9, 3.1771, 1e-3);
  const AuWorkload* r = find_workload("resnet50", "a100");
  ASSERT_NE(r, nullptr);
  EXPECT_DOUBLE_EQ(r->compute_s, 0.435);
  EXPECT_EQ(r->batch, 400);
  const AuWorkload* rn = find_workload("retinanet", "h100");
  ASSERT_NE(rn, nullptr);
  EXPECT_DOUBLE_EQ(rn->au_min, 0.85);
  EXPECT_EQ(find_workload("retinanet", "a100"), nullptr);
  EXPECT_EQ(find_workload("bert", "h100"), nullptr);
  EXPECT_EQ(aligned_sample_bytes(114660), 114688);  // 28 x 4096
  EXPECT_EQ(aligned_sample_bytes(8192), 8192);
}

FileInfo small_file(std::int64_t bytes) {
  ::setenv("TMPDIR", std::filesystem::temp_directory_path().c_str(), 1);
  ::unsetenv(kFileEnv);
  ::unsetenv(kDirEnv);
  return file_for(bytes);
}

TEST(StorageAu, ARunReadsEverySampleChecksItAndMeasuresAu) {
  const FileInfo f = small_file(16 << 20);
  AuWorkload w{"custom", "custom", 64 << 10, 8, 0.004, 0.9, 2, "test"};
  AuRunOptions o;
  o.accelerators = 3;
  o.steps = 6;
  o.io = Io::Buffered;  // the page cache: no O_DIRECT needed of the test's filesystem
  const AuRun r = run_au(w, o, f);
  EXPECT_EQ(r.accelerators, 3);
  EXPECT_EQ(r.fill, 4);  // 2 read threads x prefetch 2
  EXPECT_EQ(r.steps, 10);
  EXPECT_EQ(r.steps_done, 30);
  EXPECT_FALSE(r.cut_short);
  // Every sample is one chunk here: 3 accelerators x 10 steps x 8 samples, each checked.
  EXPECT_EQ(r.reads_checked, 3 * 10 * 8);
  EXPECT_EQ(r.bytes_read, 3 * 10 * 8 * (64 << 10));
  EXPECT_GT(r.au, 0);
  EXPECT_LE(r.au, 1.0 + 1e-9);
  EXPECT_LE(r.au_min, r.au + 1e-12);
  EXPECT_GT(r.au_first_step, 0);
  // The wall time is at least the ten steps' compute; the steady rate at most the accelerators'
  // own (3 x 8 samples per 4 ms step), and the bytes the consumed samples'.
  EXPECT_GE(r.wall_s, 10 * 0.004 * 0.99);
  EXPECT_GT(r.samples_per_s, 0);
  EXPECT_LE(r.samples_per_s, 3 * 8 / 0.004 * 1.001);
  EXPECT_NEAR(r.bytes_per_s, r.samples_per_s * (64 << 10), 1e-6 * r.bytes_per_s);
}

TEST(StorageAu, SamplesLargerThanAChunkAreReadInPieces) {
  const FileInfo f = small_file(48 << 20);
  AuWorkload w{"custom", "custom", kChunk + 4096, 1, 0.002, 0.9, 1, "test"};
  AuRunOptions o;
  o.steps = 3;
  o.io = Io::Buffered;
  const AuRun r = run_au(w, o, f);
  EXPECT_EQ(r.reads_checked, (2 + 3) * 2);  // fill 2 + 3 steps, each sample a chunk and the rest
}

TEST(StorageAu, WrongContentFailsTheRun) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() / fmt::format("au-zeros-{}", ::getpid());
  {
    std::ofstream s(p, std::ios::binary);
    const std::string zeros(1 << 20, '\0');
    for (int i = 0; i < 4; ++i) s << zeros;
  }
  FileInfo f;
  f.path = p;
  f.bytes = 4 << 20;
  f.generated = true;  // as if it had been written with the content: every read is checked
  AuWorkload w{"custom", "custom", 4096, 4, 0.001, 0.9, 1, "test"};
  AuRunOptions o;
  o.io = Io::Buffered;
  EXPECT_THROW(run_au(w, o, f), std::runtime_error);
  f.generated = false;  // a given file: only the lengths are checked
  EXPECT_NO_THROW(run_au(w, o, f));
  std::filesystem::remove(p);
}

TEST(StorageAu, AFileSmallerThanABatchIsRefused) {
  FileInfo f = small_file(1 << 20);
  f.bytes = 1 << 20;  // (the process's generated file may be larger from an earlier test)
  AuWorkload w{"custom", "custom", 512 << 10, 4, 0.001, 0.9, 1, "test"};
  EXPECT_THROW(run_au(w, AuRunOptions{}, f), std::runtime_error);
}

}  // namespace
}  // namespace gpubench::suites::storage

namespace gpubench::tune {
namespace {

// The search against a storage that feeds `fed` accelerators: the N it tries, in order.
std::vector<int> search(int fed, int max_n) {
  std::vector<std::pair<int, bool>> tried;
  std::vector<int> order;
  while (std::optional<int> n = next_accelerators(tried, max_n)) {
    order.push_back(*n);
    tried.emplace_back(*n, *n <= fed);
    if (order.size() > 64) break;
  }
  EXPECT_EQ(largest_passing(tried), std::min(fed, max_n));
  return order;
}

TEST(StorageAuSearch, DoublesThenHalvesTheGap) {
  EXPECT_EQ(search(5, 64), (std::vector<int>{1, 2, 4, 8, 6, 5}));
  EXPECT_EQ(search(0, 64), (std::vector<int>{1}));
  EXPECT_EQ(search(1, 64), (std::vector<int>{1, 2}));
  EXPECT_EQ(search(8, 64), (std::vector<int>{1, 2, 4, 8, 16, 12, 10, 9}));
  EXPECT_EQ(search(100, 6), (std::vector<int>{1, 2, 4, 6}));  // every N passed up to the most allowed
  for (int fed = 0; fed <= 40; ++fed) search(fed, 32);        // always the right answer
}

StorageTuneOptions custom() {
  StorageTuneOptions o;
  o.workload = "custom";
  o.sample_bytes = 65536;
  o.batch = 16;
  o.step_time_s = 0.01;
  return o;
}

TEST(StorageAuOptions, BadValuesNameTheOption) {
  EXPECT_NO_THROW(check_storage_option_values(StorageTuneOptions{}));  // unet3d on h100
  EXPECT_NO_THROW(check_storage_option_values(custom()));
  // Each: a change to the defaults (or to custom()) and what its refusal must name.
  using Change = std::function<void(StorageTuneOptions&)>;
  const std::vector<std::tuple<bool, Change, std::string>> bad = {
      {false, [](StorageTuneOptions& o) { o.workload = "bert"; }, "--workload 'bert'"},
      {false, [](StorageTuneOptions& o) { o.workload = "retinanet"; o.accelerator = "a100"; }, "--accelerator 'a100'"},
      {true, [](StorageTuneOptions& o) { o.batch.reset(); }, "--workload custom"},
      {true, [](StorageTuneOptions& o) { o.consumer_from = "T.json"; }, "--step-time and --consumer-from"},
      {true, [](StorageTuneOptions& o) { o.au_pct = 100; }, "--au"},
      {true, [](StorageTuneOptions& o) { o.max_accelerators = 0; }, "--max-accelerators"},
      {true, [](StorageTuneOptions& o) { o.read_threads = 64; o.max_accelerators = 256; }, "loader threads"},
      {true, [](StorageTuneOptions& o) { o.direct = 2; }, "--direct"},
      {true, [](StorageTuneOptions& o) { o.budget_s = 0; }, "--budget"},
      {true, [](StorageTuneOptions& o) { o.sample_bytes = 100; }, "--sample-bytes"},
  };
  for (const auto& [from_custom, change, names] : bad) {
    StorageTuneOptions o = from_custom ? custom() : StorageTuneOptions{};
    change(o);
    try {
      check_storage_option_values(o);
      ADD_FAILURE() << "accepted; expected a refusal naming " << names;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gpubench::tune
