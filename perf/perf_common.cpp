#include "perf/perf_common.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "bench/core/harness.hpp"
#include "bench/suites/all_suites.hpp"

namespace gpubench::perf {
namespace fs = std::filesystem;

namespace {

// Sends stdout and stderr to /dev/null while alive: Google Benchmark's table goes to stdout
// and its machine banner to stderr.
class Silenced {
 public:
  Silenced() {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    out_ = ::dup(STDOUT_FILENO);
    err_ = ::dup(STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDOUT_FILENO);
    ::dup2(devnull, STDERR_FILENO);
    ::close(devnull);
  }
  ~Silenced() {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::dup2(out_, STDOUT_FILENO);
    ::dup2(err_, STDERR_FILENO);
    ::close(out_);
    ::close(err_);
  }
  Silenced(const Silenced&) = delete;
  Silenced& operator=(const Silenced&) = delete;

 private:
  int out_ = -1, err_ = -1;
};

}  // namespace

double through_harness(const Suite& suite, const std::vector<std::string>& overrides, double min_time,
                       const std::vector<Instrument*>& instruments) {
  return through_harness(suite, overrides, min_time, describe_cpu(), instruments);
}

double through_harness(const Suite& suite, const std::vector<std::string>& overrides, double min_time,
                       const DeviceInfo& device, const std::vector<Instrument*>& instruments) {
  PlanRequest req;
  req.axis_overrides = overrides;
  const auto plan = make_plan({&suite}, req, {device});
  HarnessOptions h;
  h.quiet = true;
  h.measure.min_time_s = min_time;
  h.instruments = instruments;
  const fs::path file = fs::temp_directory_path() / ("gpubench-perf-" + std::to_string(::getpid()) + ".json");
  ResultsFile results(file, {{"host_name", "perf"}});
  {
    Silenced quiet;
    run_plan(plan, h, results);
  }
  fs::remove(file);
  const auto& g = results.document()["benchmarks"].at(0)["gpubench"];
  if (g["status"] != "ok") {
    std::fprintf(stderr, "%s: %s\n", g["status"].get<std::string>().c_str(), g.value("reason", std::string()).c_str());
    std::exit(1);
  }
  return g["measurement"]["mean_s"].get<double>();
}

const Suite& suite_named(const std::string& name) {
  for (const Suite* s : suites::all()) {
    if (s->name() == name) return *s;
  }
  std::fprintf(stderr, "no suite named %s\n", name.c_str());
  std::abort();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace gpubench::perf
