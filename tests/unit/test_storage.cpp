// The storage suite's pieces: the file's content and its check, where each job reads, the
// rules of the axes, and a case run end to end on a small file in the temporary folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "bench/core/errors.hpp"
#include "bench/suites/storage/storage.hpp"

namespace gpubench::suites::storage {
namespace {

// A point in the test's words (seq/rand, direct/buffered, uring/psync), set on fio's axes.
Point point(std::string pattern, std::int64_t block, std::int64_t qd, std::int64_t jobs, std::string io, std::string engine,
            std::int64_t size, std::vector<std::string> given = {}) {
  Point p;
  p.set("rw", std::string(pattern == "rand" ? "randread" : "read"));
  p.set("bs", block);
  p.set("iodepth", qd);
  p.set("numjobs", jobs);
  p.set("direct", std::int64_t{io == "direct" ? 1 : 0});
  p.set("ioengine", std::string(engine == "uring" ? "io_uring" : "psync"));
  p.set("filesize", size);
  p.set_given(std::move(given));
  return p;
}

DeviceInfo cpu() { return DeviceInfo{}; }

TEST(StorageContent, AWrongByteIsFoundWhereItIs) {
  std::vector<std::uint64_t> words(512);
  const std::uint64_t offset = 8 * 1000;
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = content_word(1000 + i);
  auto* bytes = reinterpret_cast<std::uint8_t*>(words.data());
  EXPECT_FALSE(first_wrong_byte(offset, bytes, words.size() * 8));
  bytes[1234] ^= 0x10;
  ASSERT_TRUE(first_wrong_byte(offset, bytes, words.size() * 8));
  EXPECT_EQ(*first_wrong_byte(offset, bytes, words.size() * 8), 1234);
  // The same bytes read as if from another place of the file do not match.
  bytes[1234] ^= 0x10;
  EXPECT_TRUE(first_wrong_byte(offset + 8, bytes, words.size() * 8));
}

TEST(StorageOffsets, SequentialJobsWalkTheirOwnPartsAndWrap) {
  Config c;
  c.pattern = Pattern::Seq;
  c.block = 4096;
  c.jobs = 3;
  c.size = 4096 * 10;  // 10 blocks: parts of 3, 3 and 4
  std::set<std::uint64_t> seen;
  for (int j = 0; j < 3; ++j) {
    Offsets o(c, j);
    const std::uint64_t first = o.next();
    std::uint64_t prev = first;
    int n = 1;
    for (std::uint64_t off = o.next(); off != first; off = o.next(), ++n) {
      EXPECT_EQ(off, prev + 4096);  // in order within the part
      prev = off;
      seen.insert(off);
      ASSERT_LT(n, 20);
    }
    seen.insert(first);
    EXPECT_EQ(n, j == 2 ? 4 : 3);
  }
  EXPECT_EQ(seen.size(), 10u);  // the parts cover the file once
}

TEST(StorageOffsets, RandomOffsetsAreAlignedInRangeAndSpread) {
  Config c;
  c.pattern = Pattern::Rand;
  c.block = 4096;
  c.jobs = 2;
  c.size = std::int64_t{64} << 20;  // 16384 blocks
  Offsets a(c, 0), b(c, 1);
  std::set<std::uint64_t> mine;
  int same = 0;
  for (int i = 0; i < 4096; ++i) {
    const std::uint64_t x = a.next(), y = b.next();
    EXPECT_EQ(x % 4096, 0u);
    EXPECT_LT(x, static_cast<std::uint64_t>(c.size));
    same += x == y;
    mine.insert(x);
  }
  EXPECT_LT(same, 10);             // the jobs draw different offsets
  EXPECT_GT(mine.size(), 3500u);   // 4096 draws of 16384 blocks: ~3600 distinct expected
}

TEST(StorageSuite, RulesOfTheAxes) {
  const auto suite = make_suite();
  const DeviceInfo d = cpu();
  DeviceInfo gpu;
  gpu.kind = DeviceKind::Cuda;
  gpu.ordinal = 0;
  EXPECT_FALSE(suite->applies(gpu, point("seq", 1 << 20, 1, 1, "direct", "uring", 1 << 28)));
  EXPECT_TRUE(suite->applies(d, point("seq", 1 << 20, 32, 1, "direct", "uring", 1 << 28)));
  // Preset crossings dropped: pread at depth 32, sequential 4 KiB, random 1 MiB.
  EXPECT_FALSE(suite->applies(d, point("seq", 1 << 20, 32, 1, "direct", "psync", 1 << 28)));
  EXPECT_FALSE(suite->applies(d, point("seq", 4096, 1, 1, "direct", "uring", 1 << 28)));
  EXPECT_FALSE(suite->applies(d, point("rand", 1 << 20, 1, 1, "direct", "uring", 1 << 28)));
  // ... but run when asked for by name, and pread at depth 32 says why it cannot.
  EXPECT_TRUE(suite->applies(d, point("seq", 4096, 1, 1, "direct", "uring", 1 << 28, {"bs"})));
  const Point deep_psync = point("seq", 1 << 20, 32, 1, "direct", "psync", 1 << 28, {"ioengine", "iodepth"});
  ASSERT_TRUE(suite->applies(d, deep_psync));
  ASSERT_TRUE(suite->unsupported(d, deep_psync));
  EXPECT_NE(suite->unsupported(d, deep_psync)->find("ioengine=io_uring"), std::string::npos);
  // O_DIRECT's alignment, and a file too small for its jobs.
  ASSERT_TRUE(suite->unsupported(d, point("rand", 6000, 1, 1, "direct", "psync", 1 << 28)));
  EXPECT_FALSE(suite->unsupported(d, point("rand", 6000, 1, 1, "buffered", "psync", 1 << 28)));
  ASSERT_TRUE(suite->unsupported(d, point("seq", 1 << 20, 1, 4, "direct", "psync", 2 << 20)));
  // Buffers beyond 16 GiB are refused at planning.
  EXPECT_THROW(suite->check_sizes(d, point("seq", 1 << 30, 64, 1, "direct", "uring", 1 << 30)), UsageError);
  if (!have_uring()) {
    ASSERT_TRUE(suite->unsupported(d, point("seq", 1 << 20, 1, 1, "direct", "uring", 1 << 28)));
  }
}

TEST(StorageSuite, ABadStorageFileIsAUsageError) {
  const auto suite = make_suite();
  ::setenv(kFileEnv, "/nonexistent/gpubench-storage", 1);
  EXPECT_THROW(suite->unsupported(cpu(), point("seq", 1 << 20, 1, 1, "direct", "psync", 1 << 20)), UsageError);
  ::setenv(kFileEnv, "/tmp", 1);  // a folder
  EXPECT_THROW(suite->unsupported(cpu(), point("seq", 1 << 20, 1, 1, "direct", "psync", 1 << 20)), UsageError);
  ::unsetenv(kFileEnv);
}

// Both engines, both patterns, on a generated 8 MiB file: verified, and every read timed.
TEST(StorageCase, ReadsAGeneratedFileAndChecksItsContent) {
  for (const std::string engine : {"psync", "uring"}) {
    if (engine == "uring" && !have_uring()) continue;
    for (const std::string pattern : {"seq", "rand"}) {
      const Config c = to_config(point(pattern, 64 << 10, engine == "uring" ? 4 : 1, 2, "buffered", engine, 8 << 20));
      auto k = make_read_case(c);
      k->setup();
      const Verification v = k->verify();
      EXPECT_TRUE(v.passed) << engine << " " << pattern << ": " << v.detail;
      EXPECT_GE(v.checked, 32);
      for (int i = 0; i < 3; ++i) k->run();
      const auto details = k->details(2);
      EXPECT_EQ(details["file"]["filesystem"].get<std::string>().empty(), false);
      const auto& lat = details["latency_us"];
      ASSERT_TRUE(lat.contains("p99")) << details.dump();
      EXPECT_EQ(lat["reads"].get<std::int64_t>(), 2 * 2 * details["reads_per_run_per_job"].get<std::int64_t>());
      EXPECT_GT(lat["p99"].get<double>(), 0);
      EXPECT_GE(lat["p99"].get<double>(), lat["p50"].get<double>());
      EXPECT_GE(lat["max"].get<double>(), lat["p99.9"].get<double>());
      nlohmann::ordered_json g;
      k->annotate(g, 0.01);
      EXPECT_GT(g["metrics"]["iops"].get<double>(), 0);
      EXPECT_EQ(g["metrics"]["latency_us_p99"], lat["p99"]);
    }
  }
}

// GPUBENCH_STORAGE_FILE: a file of other content is checked against plain preads of itself.
TEST(StorageCase, AGivenFileIsCheckedAgainstPlainReads) {
  const std::filesystem::path f = std::filesystem::temp_directory_path() / ("gpubench_test_storage_" + std::to_string(::getpid()));
  {
    std::ofstream out(f, std::ios::binary);
    for (int i = 0; i < (4 << 20) / 4; ++i) out.write(reinterpret_cast<const char*>(&i), 4);
  }
  ::setenv(kFileEnv, f.c_str(), 1);
  auto k = make_read_case(to_config(point("rand", 4096, 1, 1, "buffered", "psync", 4 << 20)));
  k->setup();
  const Verification v = k->verify();
  EXPECT_TRUE(v.passed) << v.detail;
  EXPECT_NE(v.method.find("plain buffered preads"), std::string::npos);
  // Larger than the file: skipped with the reason.
  auto big = make_read_case(to_config(point("rand", 4096, 1, 1, "buffered", "psync", 8 << 20)));
  EXPECT_THROW(big->setup(), CaseSkipped);
  ::unsetenv(kFileEnv);
  std::filesystem::remove(f);
}

}  // namespace
}  // namespace gpubench::suites::storage
