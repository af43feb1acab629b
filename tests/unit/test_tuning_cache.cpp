// The cuBLASLt tuning cache: round trip, version/GPU invalidation, malformed files.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include "bench/suites/gemm/gemm_tune.hpp"
#include "bench/suites/gemm/tuning_cache.hpp"

namespace gpubench::suites::gemm {
namespace {

TuningEntry sample(std::int64_t m, const std::string& version = "13.1.0") {
  TuningEntry e;
  e.key = {"NVIDIA H200", "9.0", version, "bf16", "tn", m, 4096, 4096, 1, "none"};
  e.algo.id = 66;
  e.algo.tile = 20;
  e.algo.stages = 35;
  e.algo.splitk = 2;
  e.algo.cluster_shape = 3;
  e.time_s = 1.0e-3;
  e.default_algo.id = 66;
  e.default_algo.tile = 18;
  e.default_time_s = 1.2e-3;
  e.candidates = 32;
  return e;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gpubench_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(TuningCache, RoundTripThroughAFile) {
  TuningCache cache;
  cache.put(sample(1024));
  cache.put(sample(2048));
  const std::string path = temp_path("roundtrip.json");
  cache.save(path);
  const TuningCache loaded = TuningCache::load(path);
  std::remove(path.c_str());
  ASSERT_EQ(loaded.entries().size(), 2u);
  const TuningEntry* e = loaded.find(sample(2048).key);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->algo, sample(2048).algo);
  EXPECT_EQ(e->default_algo, sample(2048).default_algo);
  EXPECT_DOUBLE_EQ(e->time_s, 1.0e-3);
  EXPECT_DOUBLE_EQ(e->default_time_s, 1.2e-3);
  EXPECT_EQ(e->candidates, 32);
  EXPECT_NEAR(e->gain_pct(), 20.0, 1e-9);
  EXPECT_EQ(loaded.dump(), cache.dump());
}

TEST(TuningCache, PutReplacesTheSameKey) {
  TuningCache cache;
  cache.put(sample(1024));
  TuningEntry faster = sample(1024);
  faster.time_s = 0.5e-3;
  cache.put(faster);
  ASSERT_EQ(cache.entries().size(), 1u);
  EXPECT_DOUBLE_EQ(cache.find(faster.key)->time_s, 0.5e-3);
}

TEST(TuningCache, OtherGpuOrLibraryVersionDoesNotMatch) {
  TuningCache cache;
  cache.put(sample(1024, "12.4.5"));  // tuned with an older cuBLASLt
  cache.put(sample(2048));
  TuningKey key = sample(1024).key;  // the same problem, today's library
  EXPECT_EQ(cache.find(key), nullptr);
  key.cublaslt = "12.4.5";
  EXPECT_NE(cache.find(key), nullptr);
  key.gpu = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(cache.find(key), nullptr);
  key = sample(2048).key;
  key.cc = "9.1";
  EXPECT_EQ(cache.find(key), nullptr);
  key = sample(2048).key;
  key.epilogue = "gelu";
  EXPECT_EQ(cache.find(key), nullptr);
  // What a run on an H200 with 13.1.0 ignores: the 12.4.5 entry.
  EXPECT_EQ(cache.count_foreign({{"NVIDIA H200", "9.0"}}, "13.1.0"), 1u);
  EXPECT_EQ(cache.count_foreign({{"NVIDIA A100-SXM4-80GB", "8.0"}}, "13.1.0"), 2u);
  EXPECT_EQ(cache.count_foreign({}, "13.1.0"), 2u);
}

void expect_error(const std::string& text, const std::string& fragment) {
  try {
    TuningCache::parse(text, "cache.json");
    FAIL() << "accepted: " << text;
  } catch (const TuningCacheError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("tuning cache cache.json: ", 0), 0u) << what;  // names the file
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;  // one line
  }
}

TEST(TuningCache, MalformedFilesAreClearErrors) {
  expect_error("{not json", "not valid JSON");
  expect_error("[]", "not a gpubench GEMM tuning cache");
  expect_error(R"({"format": "other"})", "not a gpubench GEMM tuning cache");
  expect_error(R"({"format": "gpubench-gemm-tuning", "version": 9, "entries": []})", "unsupported version 9");
  expect_error(R"({"format": "gpubench-gemm-tuning", "version": 1})", "\"entries\" missing");
  TuningCache one;
  one.put(sample(1024));
  auto j = nlohmann::ordered_json::parse(one.dump());
  j["entries"][0].erase("m");
  expect_error(j.dump(), "entry 0: 'm' missing");
  j = nlohmann::ordered_json::parse(one.dump());
  j["entries"][0]["algo"]["tile"] = "big";
  expect_error(j.dump(), "entry 0: 'algo'");
  j = nlohmann::ordered_json::parse(one.dump());
  j["entries"][0]["time_s"] = -1;
  expect_error(j.dump(), "'time_s'");
  try {
    TuningCache::load("/nonexistent/dir/cache.json");
    FAIL();
  } catch (const TuningCacheError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/cache.json: cannot be read"), std::string::npos);
  }
}

// What the cache reader says is at the path, it is (issue 49): a folder, a FIFO (never opened:
// a read would wait for a writer), nothing.
TEST(TuningCache, PathMessagesSayWhatThePathIs) {
  const std::string folder = temp_path("cache_folder"), fifo = temp_path("cache_fifo"), none = temp_path("cache_none");
  std::filesystem::create_directories(folder);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto message = [](const std::string& path) -> std::string {
    try {
      TuningCache::load(path);
    } catch (const TuningCacheError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message(folder), "tuning cache " + folder + ": cannot be read: it is a folder");
  EXPECT_EQ(message(fifo), "tuning cache " + fifo + ": cannot be read: it is a FIFO");
  EXPECT_EQ(message(none), "tuning cache " + none + ": cannot be read: it does not exist");
  std::filesystem::remove(folder);
  std::filesystem::remove(fifo);
}

TEST(TuningCache, EmptyCacheIsValid) {
  const TuningCache c = TuningCache::parse(TuningCache().dump(), "x");
  EXPECT_TRUE(c.entries().empty());
  EXPECT_EQ(sample(1).key.shape_label(), "bf16 tn 1x4096x4096 batch 1 epilogue none");
}

TEST(TuningCache, ReportShowsDefaultBestGainAndAlgorithm) {
  TuningEntry same = sample(512);
  same.algo = same.default_algo;
  same.time_s = same.default_time_s;
  const std::string report = format_tuning_report({sample(1024), same});
  std::istringstream lines(report);
  std::string header, first, second, extra;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_NE(header.find("default"), std::string::npos);
  EXPECT_NE(header.find("gain"), std::string::npos);
  EXPECT_NE(first.find("bf16 tn 1024x4096x4096 batch 1 epilogue none"), std::string::npos) << first;
  EXPECT_NE(first.find("1.2000 ms"), std::string::npos) << first;
  EXPECT_NE(first.find("1.0000 ms"), std::string::npos) << first;
  EXPECT_NE(first.find("+20.0%"), std::string::npos) << first;
  EXPECT_NE(first.find("id=66 tile=20 stages=35 splitk=2"), std::string::npos) << first;
  EXPECT_NE(second.find("+0.0%"), std::string::npos) << second;
  EXPECT_NE(second.find("(the default)"), std::string::npos) << second;
}

}  // namespace
}  // namespace gpubench::suites::gemm
