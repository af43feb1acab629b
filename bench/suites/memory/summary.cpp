// The ceilings summary: per device, the best measured figure of each kind, for rooflines and
// "% of measured ceiling" in reports. Shape documented in docs/results-format.md.
#include <fmt/format.h>

#include "bench/suites/memory/memory.hpp"

namespace gpubench::suites::memory {
namespace {

using Json = nlohmann::ordered_json;

// "fp32" for fma_fp32, "fp32_core" for fma_fp32_core, "fp16_tensor" for mma_fp16.
std::string peak_label(const std::string& test) {
  if (test.rfind("mma_", 0) == 0) return test.substr(4) + "_tensor";
  return test.substr(4);
}

double number(const Json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0; }

// The rate of an entry's fastest sample, from its mean rate: `mean_rate` x mean_s / min_s. A
// ceiling is the most the device delivered over a sustained window (one sample: a batch of
// --batch-time or more), not the mean, which also counts every interruption of a busy host, a
// preempted thread or a clock dip; a workload measured in calmer moments would then "beat" it.
// The mean rate where the entry has no sample times.
double best_sample_rate(const Json& g, double mean_rate) {
  if (!g.contains("measurement")) return mean_rate;
  const double mean_s = number(g["measurement"], "mean_s"), min_s = number(g["measurement"], "min_s");
  return mean_s > 0 && min_s > 0 && min_s <= mean_s ? mean_rate * mean_s / min_s : mean_rate;
}

// A ceiling's figure: `rate_key` (gbps or tflops) the best sample's rate, `mean_<rate_key>` the
// entry's own (mean) rate, and pct_of_peak scaled alike. The CPU FMA cases also report the
// rate over their threads' CPU time (details.thread_cpu_tflops) and how many of their threads
// ran at once (details.parallelism): when the scheduler stacked threads on fewer cores than
// there are threads (another process held the others), the wall-clock rate reads fewer cores
// than the host has, and the CPU-time rate (each thread's work over the time it did run) is
// the ceiling; `basis` says which was kept.
Json ceiling_figure(const Json& g, const Json& m, const char* rate_key, const std::string& test) {
  const double mean_rate = number(m, rate_key);
  double best = best_sample_rate(g, mean_rate);
  std::string basis = g.contains("measurement") && number(g["measurement"], "min_s") > 0 ? "best_sample" : "mean";
  Json c{{rate_key, best}, {"test", test}};
  if (g.contains("details")) {
    const Json& d = g["details"];
    const double threads = number(d, "threads"), parallelism = number(d, "parallelism");
    const double cpu_rate = number(d, (std::string("thread_cpu_") + rate_key).c_str());
    if (threads > 0 && parallelism > 0 && parallelism < 0.9 * threads && cpu_rate > best) {
      best = cpu_rate;
      basis = "thread_cpu_time";
      c[rate_key] = best;
      c["note"] = fmt::format("its {:g} thread(s) ran on {:.2f} cores on average (other work held the rest): the rate "
                              "over the threads' CPU time is kept",
                              threads, parallelism);
    }
  }
  c[std::string("mean_") + rate_key] = mean_rate;
  c["basis"] = basis;
  if (m.contains("pct_of_peak") && mean_rate > 0) c["pct_of_peak"] = m["pct_of_peak"].get<double>() * best / mean_rate;
  return c;
}

// Keeps `candidate` in `slot` when its `key` is larger.
void keep_best(Json& slot, const Json& candidate, const char* key) {
  if (!slot.is_object() || number(candidate, key) > number(slot, key)) slot = candidate;
}

}  // namespace

Json summarize(const std::vector<Json>& entries, const Observations& observations) {
  std::lock_guard lock(observations.mutex);
  Json devices = Json::object();
  // A bandwidth entry over less than twice the cache in front of the memory (plausibility.hpp's
  // rule) measures the cache: never the DRAM ceiling, even when no larger size ran (an H200's
  // triad at 8 MiB per array reads 5.7 TB/s from its 60 MiB L2).
  auto in_cache = [&](const Json& g) {
    const auto d = observations.devices.find(g.value("device", ""));
    const double bytes = g.contains("metrics") ? number(g["metrics"], "bytes") : 0.0;
    return d != observations.devices.end() && cache_may_serve(bytes, static_cast<double>(d->second.outer_cache_bytes()));
  };
  // Largest size measured per device among bandwidth tests: its best rate is the DRAM plateau.
  std::map<std::string, std::int64_t> largest;
  for (const Json& e : entries) {
    const Json& g = e["gpubench"];
    if (e.value("run_type", "") != "iteration" || g.value("status", "") != "ok" || in_cache(g)) continue;
    const TestInfo* t = find_test(g["axes"].value("test", ""));
    if (t && t->group == Group::Bandwidth) {
      auto& l = largest[g.value("device", "")];
      l = std::max<std::int64_t>(l, g["axes"].value("size", std::int64_t{0}));
    }
  }
  for (const Json& e : entries) {
    const Json& g = e["gpubench"];
    if (e.value("run_type", "") != "iteration" || g.value("status", "") != "ok" || !g.contains("metrics")) continue;
    const std::string test = g["axes"].value("test", "");
    const TestInfo* t = find_test(test);
    if (t == nullptr) continue;
    const std::string dev = g.value("device", "");
    const std::int64_t size = g["axes"].value("size", std::int64_t{0});
    const Json& m = g["metrics"];
    const double mean_s = g.contains("measurement") ? number(g["measurement"], "mean_s") : 0.0;
    Json& d = devices[dev];
    if (!d.contains("device_name")) d["device_name"] = g.value("device_name", "");

    // Pointer-chase latencies (host_latency per size, host_device_latency, device_device_latency
    // per peer): the lowest ns per access.
    if (m.contains("ns_per_access")) {
      std::string key = test;
      if (t->group == Group::Peer) key += fmt::format("/cuda:{}", g["axes"].value("peer", 0));
      if (t->sized) key += fmt::format("/{}", size);
      Json& slot = d["access_latency_ns"][key];
      const double ns = number(m, "ns_per_access");
      if (!slot.is_number() || ns < slot.get<double>()) slot = ns;
      continue;
    }
    switch (t->group) {
      case Group::Bandwidth: {
        Json c = ceiling_figure(g, m, "gbps", test);
        c["size"] = size;
        if (!in_cache(g) && size == largest[dev]) keep_best(d["memory_bandwidth"], c, "gbps");
        keep_best(d["best_bandwidth_any_size"], c, "gbps");
        break;
      }
      case Group::Copy:
      case Group::Peer: {
        Json& slot = t->group == Group::Copy ? d["copies"][test]
                                             : d["peer"][fmt::format("cuda:{}", g["axes"].value("peer", 0))][test];
        const double gbps = best_sample_rate(g, number(m, "gbps"));
        if (!slot.contains("best_gbps") || gbps > number(slot, "best_gbps")) {
          slot["best_gbps"] = gbps;
          slot["best_size"] = size;
        }
        // Latency: the time of one transfer at the smallest size measured.
        if (!slot.contains("latency_size") || size < slot["latency_size"].get<std::int64_t>() ||
            (size == slot["latency_size"].get<std::int64_t>() && mean_s * 1e6 < number(slot, "latency_us"))) {
          slot["latency_us"] = mean_s * 1e6;
          slot["latency_size"] = size;
        }
        if (test == "h2d_pinned" || test == "d2h_pinned") {
          const std::string key = test + "_gbps";
          if (gbps > number(d, key.c_str())) d[key] = gbps;
        }
        break;
      }
      case Group::Pattern: {
        // The aggregate rate of every copy at once, the best size's (per target GPU for the
        // peer patterns: this entry's device).
        Json& slot = d["patterns"][test];
        const double gbps = best_sample_rate(g, number(m, "gbps"));
        if (!slot.contains("best_gbps") || gbps > number(slot, "best_gbps")) {
          slot["best_gbps"] = gbps;
          slot["best_size"] = size;
        }
        break;
      }
      case Group::Peak: {
        Json c = ceiling_figure(g, m, "tflops", test);
        if (m.contains("peak_key")) c["peak_key"] = m["peak_key"];
        if (c.contains("pct_of_peak")) {
          auto clock = observations.sm_clock_mhz.find(dev + "/" + test);
          auto info = observations.devices.find(dev);
          // The datasheet figure holds at the clock the spec sheet says it assumes (its
          // peak_clock_mhz, recorded in the entry's metrics: Hopper's tensor figures assume
          // 1830 MHz while the SXM parts boost to 1980); where the sheet does not say, the
          // device's maximum clock. Scale it to the clock the loop measured.
          double assumed = number(m, "peak_clock_mhz");
          if (assumed <= 0 && info != observations.devices.end()) assumed = info->second.max_sm_clock_mhz;
          if (clock != observations.sm_clock_mhz.end() && clock->second > 0 && assumed > 0) {
            c["sm_clock_mhz"] = clock->second;
            if (info != observations.devices.end() && info->second.max_sm_clock_mhz > 0) {
              c["max_sm_clock_mhz"] = info->second.max_sm_clock_mhz;
            }
            c["peak_clock_mhz"] = assumed;
            c["pct_of_clock_scaled_peak"] = c["pct_of_peak"].get<double>() * assumed / clock->second;
          }
        }
        // A loop whose instruction cannot reach the architecture's rate (peak_reference.hpp:
        // mma.sync on sm_90) is kept apart: recorded, never a ceiling that workloads are judged by.
        if (m.contains("ceiling") && m["ceiling"].is_boolean() && !m["ceiling"].get<bool>()) {
          if (m.contains("not_a_ceiling")) c["why"] = m["not_a_ceiling"];
          keep_best(d["peak_not_ceiling"][peak_label(test)], c, "tflops");
        } else {
          keep_best(d["peak"][peak_label(test)], c, "tflops");
        }
        break;
      }
      case Group::Latency: {
        const double us = mean_s * 1e6;
        if (t->sized) {
          Json& slot = d["overheads_us"][test][std::to_string(size)];
          if (!slot.is_number() || us < slot.get<double>()) slot = us;
        } else {
          Json& slot = d["overheads_us"][test];
          if (!slot.is_number() || us < slot.get<double>()) slot = us;
          if (test == "launch") d["launch_latency_us"] = slot;
        }
        break;
      }
    }
  }
  if (devices.empty()) return Json::object();
  return {{"units", "GB/s and TFLOP/s (TOP/s for integer tests) in decimal units; times in microseconds"},
          {"devices", std::move(devices)}};
}

}  // namespace gpubench::suites::memory
