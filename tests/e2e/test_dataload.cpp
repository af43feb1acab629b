// The dataload suite through the real binary: datagen, a small CPU run on its dataset with the
// stall split and summary in the results, corrupt files counted and skipped, and a bad dataset
// path or a mismatched shard index as one-line usage errors (exit 2).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench {
namespace {

namespace fs = std::filesystem;
using e2e::Output;

struct Dataload : e2e::CliTest {
  fs::path data = dir / "data";
  Output datagen(const std::string& extra = "") {
    return gpubench(fmt::format("datagen --out {} --count 12 --size 160x120 --tokens 4096 {}", data.string(), extra));
  }
  // decode_augment at one worker; the pipeline without a consumer (cached, cold) and with a
  // 2 ms consumer measured three ways (memory, cached, cold).
  Output small_run(const fs::path& out, const std::string& stages = "decode_augment,pipeline") {
    return gpubench(fmt::format("run --suite dataload --device cpu --quiet --out {} --min-time 0.05 --min-samples 3 "
                                "--warmup 0.01 --axis stage={} --axis workers=1 --axis batch=4 --axis io=memory,cached,cold "
                                "--axis prefetch=0,2 --axis step_us=0,2000",
                                out.string(), stages),
                    fmt::format("GPUBENCH_DATASET={}", data.string()));
  }
};

TEST_F(Dataload, DatagenThenRunReportsStagesStallSplitAndCores) {
  Output g = datagen();
  ASSERT_EQ(g.code, 0) << g.err;
  const nlohmann::json gen = nlohmann::json::parse(g.out);
  EXPECT_EQ(gen["images"], 12);
  EXPECT_GT(gen["bytes_per_pixel"].get<double>(), 0.1);
  EXPECT_TRUE(fs::exists(data / "images.idx"));
  EXPECT_TRUE(fs::exists(data / "tokens-u32.bin"));

  const fs::path out = dir / "r.json";
  Output r = small_run(out);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(e2e::slurp(out));
  int pipelines = 0;
  for (const auto& b : j["benchmarks"]) {
    const auto& g2 = b["gpubench"];
    ASSERT_EQ(g2["status"], "ok") << b.dump();
    EXPECT_GT(g2["metrics"]["items_per_s"].get<double>(), 0);
    if (g2["axes"]["stage"] == "pipeline") {
      ++pipelines;
      const auto& d = g2["details"];
      EXPECT_GE(d["data_stall_share"].get<double>(), 0);
      EXPECT_LE(d["data_stall_share"].get<double>(), 1);
      EXPECT_TRUE(d["queue_depth"].contains("series"));
      EXPECT_EQ(d["corrupt_skipped"], 0);
    }
  }
  EXPECT_EQ(pipelines, 5);
  const auto& s = j["gpubench"]["summaries"]["dataload"]["devices"]["cpu"];
  ASSERT_EQ(s["pipelines"].size(), 2u) << s.dump();
  const auto& p = s["pipelines"][1];  // step_us=2000 (configs sort by name)
  EXPECT_NE(p["config"].get<std::string>().find("step_us=2000"), std::string::npos) << p.dump();
  EXPECT_TRUE(p.contains("ds_analyzer")) << p.dump();
  EXPECT_GT(p["cores_needed"].get<double>(), 0) << p.dump();
}

// consumer=train-768: the train suite's mlp trained on the pooled images, one step per batch,
// checked and reported with its model FLOPs; a spin time with it is not a point, and the
// largest model is refused on the CPU with the reason.
TEST_F(Dataload, TrainConsumerTrainsOnTheBatches) {
  ASSERT_EQ(datagen().code, 0);
  const fs::path out = dir / "r.json";
  const std::string env = fmt::format("GPUBENCH_DATASET={}", data.string());
  Output r = gpubench(fmt::format("run --suite dataload --device cpu --quiet --out {} --min-time 0.05 --min-samples 3 "
                                  "--warmup 0.01 --axis stage=pipeline --axis workers=1 --axis batch=4 --axis io=memory,cached "
                                  "--axis prefetch=2 --axis step_us=0,2000 --axis consumer=train-768,train-9408",
                                  out.string()),
                      env);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(e2e::slurp(out));
  int trained = 0, refused = 0;
  for (const auto& b : j["benchmarks"]) {
    const auto& g = b["gpubench"];
    EXPECT_EQ(g["axes"]["step_us"], 0) << b.dump();
    if (g["axes"]["consumer"] == "train-9408") {
      EXPECT_EQ(g["status"], "skipped") << b.dump();
      EXPECT_NE(g["reason"].get<std::string>().find("train-768"), std::string::npos) << b.dump();
      ++refused;
      continue;
    }
    ASSERT_EQ(g["status"], "ok") << b.dump();
    ++trained;
    EXPECT_TRUE(g["verification"]["passed"].get<bool>());
    EXPECT_NE(g["verification"]["method"].get<std::string>().find("finite loss"), std::string::npos);
    EXPECT_NE(g["details"]["consumer"].get<std::string>().find("mlp classifier (4 layers of 768"), std::string::npos);
    EXPECT_GT(g["metrics"]["flops"].get<double>(), 0);
    EXPECT_GT(g["metrics"]["tflops"].get<double>(), 0);
  }
  EXPECT_EQ(trained, 2);
  EXPECT_EQ(refused, 2);
}

TEST_F(Dataload, CorruptFilesAreCountedAndSkipped) {
  ASSERT_EQ(datagen().code, 0);
  fs::resize_file(data / "images" / "00000003.jpg", 200);  // truncated
  { std::ofstream(data / "images" / "00000005.jpg", std::ios::trunc) << std::string(3000, 'Z'); }  // not a JPEG
  const fs::path out = dir / "r.json";
  Output r = small_run(out);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(e2e::slurp(out));
  for (const auto& b : j["benchmarks"]) {
    const auto& g = b["gpubench"];
    ASSERT_EQ(g["status"], "ok") << b.dump();
    EXPECT_EQ(g["details"]["dataset"]["corrupt_skipped"], 2) << b.dump();
    if (g["axes"]["stage"] == "pipeline" && g["axes"]["io"] != "memory") {
      EXPECT_GT(g["details"]["corrupt_skipped"].get<int>(), 0) << b.dump();
    }
  }
}

TEST_F(Dataload, BadDatasetPathIsAOneLineUsageError) {
  Output r = gpubench("run --suite dataload --device cpu --quiet --out " + (dir / "r.json").string(),
                      "GPUBENCH_DATASET=/no/such/dataset");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/no/such/dataset"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(dir / "r.json"));
  fs::create_directories(dir / "empty");
  r = gpubench("list --suite dataload --device cpu", "GPUBENCH_DATASET=" + (dir / "empty").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no .jpg"), std::string::npos) << r.err;
}

TEST_F(Dataload, MismatchedShardIndexNamesThePath) {
  ASSERT_EQ(datagen().code, 0);
  const fs::path other = dir / "other";
  ASSERT_EQ(gpubench(fmt::format("datagen --out {} --count 3 --size 64x48 --tokens 0 --seed 9", other.string())).code, 0);
  fs::copy_file(other / "images.idx", data / "images.idx", fs::copy_options::overwrite_existing);
  Output r = small_run(dir / "r.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find((data / "images.idx").string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("does not match"), std::string::npos) << r.err;
}

// decode=gpu (nvJPEG) as the CLI contract runs it: on the cpu device its entries are
// skipped with the reason and the run exits 0; a dry run for an assumed H100 plans them.
TEST_F(Dataload, GpuDecodeIsSkippedOnTheCpuAndPlannedForAGpu) {
  const fs::path out = dir / "D.json";
  const Output r = gpubench(fmt::format("run --device cpu --suite dataload -a decode=gpu --out {}", out.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(out);
  const auto doc = nlohmann::json::parse(in);
  ASSERT_FALSE(doc["benchmarks"].empty());
  for (const auto& e : doc["benchmarks"]) {
    EXPECT_EQ(e["gpubench"]["status"], "skipped") << e.dump();
    EXPECT_EQ(e["gpubench"]["axes"]["decode"], "gpu");
    EXPECT_NE(e["gpubench"]["reason"].get<std::string>().find("needs a CUDA device"), std::string::npos) << e.dump();
  }
  const Output d = gpubench("run --dry-run --assume h100-sxm -a decode=gpu --suite dataload");
  ASSERT_EQ(d.code, 0) << d.err;
  int planned = 0;
  std::istringstream lines(d.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("/decode=gpu/") != std::string::npos && line.find("/cuda:0") != std::string::npos) {
      EXPECT_EQ(line.find("skipped"), std::string::npos) << line;
      ++planned;
    }
  }
  EXPECT_EQ(planned, 2) << d.out;  // hw_load=0 and 65: the CUDA decoder alone and DALI's split
}

TEST_F(Dataload, DatagenBadOptions) {
  Output r = gpubench("datagen --count 3");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--out"), std::string::npos);
  r = gpubench(fmt::format("datagen --out {} --size 500by375", data.string()));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--size"), std::string::npos);
}

}  // namespace
}  // namespace gpubench
