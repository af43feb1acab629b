#include "profilers/cupti_trace/analysis.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

namespace gpubench::profilers {

void ActivityBatch::append(ActivityBatch&& o) {
  auto move_all = [](auto& to, auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  move_all(kernels, o.kernels);
  move_all(copies, o.copies);
  move_all(ranges, o.ranges);
  move_all(api, o.api);
  move_all(overheads, o.overheads);
  dropped += o.dropped;
}

std::string demangle(std::string_view mangled) {
  const std::string text(mangled);
  if (text.rfind("_Z", 0) != 0) return text;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(text.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : text;
}

namespace {

using Interval = std::pair<std::uint64_t, std::uint64_t>;

// Merges intervals (already clipped to the window) into disjoint busy stretches.
std::vector<Interval> merge(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second) out.back().second = std::max(out.back().second, i.second);
    else out.push_back(i);
  }
  return out;
}

std::uint64_t total_length(const std::vector<Interval>& merged) {
  std::uint64_t sum = 0;
  for (const Interval& i : merged) sum += i.second - i.first;
  return sum;
}

bool counts(const DeviceSet& devices, std::uint32_t device) { return devices.empty() || devices.count(device) > 0; }

auto launch_config(const KernelRecord& k) {
  return std::make_tuple(k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2],
                         k.static_shared_bytes + k.dynamic_shared_bytes);
}

}  // namespace

bool is_cold_flush_kernel(std::string_view mangled_name) {
  return mangled_name.find("l2_flush_read_kernel") != std::string_view::npos;
}

std::uint64_t kernel_time_ns(const std::vector<KernelRecord>& kernels, Window w, const DeviceSet& devices) {
  std::vector<Interval> ran;
  for (const KernelRecord& k : kernels) {
    if (w.contains_start(k.start) && counts(devices, k.device) && !is_cold_flush_kernel(k.name)) {
      ran.emplace_back(k.start, k.end);
    }
  }
  return total_length(merge(std::move(ran)));
}

std::uint64_t gpu_time_ns(const ActivityBatch& batch, Window w, const DeviceSet& devices) {
  std::vector<Interval> ran;
  for (const KernelRecord& k : batch.kernels) {
    if (w.contains_start(k.start) && counts(devices, k.device) && !is_cold_flush_kernel(k.name)) {
      ran.emplace_back(k.start, k.end);
    }
  }
  for (const CopyRecord& c : batch.copies) {
    if (w.contains_start(c.start) && counts(devices, c.device)) ran.emplace_back(c.start, c.end);
  }
  return total_length(merge(std::move(ran)));
}

DeviceSet kernel_devices(const std::vector<KernelRecord>& kernels, Window w) {
  DeviceSet out;
  for (const KernelRecord& k : kernels) {
    if (w.contains_start(k.start)) out.insert(k.device);
  }
  return out;
}

CaseActivity analyze(const ActivityBatch& batch, Window w, const DeviceSet& devices) {
  CaseActivity a;
  a.wall_ns = w.length();
  a.dropped = batch.dropped;
  a.devices = devices;
  std::vector<Interval> busy, kernel_busy;
  auto clip = [&](std::uint64_t s, std::uint64_t e) { busy.emplace_back(std::max(s, w.start), std::min(e, w.end)); };

  struct Group {
    KernelSummary summary;
    std::set<decltype(launch_config(KernelRecord{}))> configs;
  };
  std::map<std::string_view, Group> by_name;
  for (const KernelRecord& k : batch.kernels) {
    if (!w.contains_start(k.start) || !counts(devices, k.device)) continue;
    const std::uint64_t d = k.end > k.start ? k.end - k.start : 0;
    ++a.launches;
    a.kernel_ns += d;
    clip(k.start, k.end);
    kernel_busy.push_back(busy.back());
    Group& g = by_name[k.name];
    if (g.summary.count == 0) {
      std::copy(std::begin(k.grid), std::end(k.grid), g.summary.grid);
      std::copy(std::begin(k.block), std::end(k.block), g.summary.block);
      g.summary.registers_per_thread = k.registers_per_thread;
      g.summary.shared_bytes = k.static_shared_bytes + k.dynamic_shared_bytes;
    }
    ++g.summary.count;
    g.summary.total_ns += d;
    g.configs.insert(launch_config(k));
  }
  for (auto& [name, g] : by_name) {
    g.summary.name = demangle(name);
    g.summary.launch_configs = static_cast<int>(g.configs.size());
    a.kernels.push_back(std::move(g.summary));
  }
  std::sort(a.kernels.begin(), a.kernels.end(),
            [](const KernelSummary& x, const KernelSummary& y) { return x.total_ns > y.total_ns || (x.total_ns == y.total_ns && x.name < y.name); });

  for (const CopyRecord& c : batch.copies) {
    if (!w.contains_start(c.start) || !counts(devices, c.device)) continue;
    CopySummary& s = a.copies[std::string(c.kind)];
    ++s.count;
    s.bytes += c.bytes;
    s.total_ns += c.end > c.start ? c.end - c.start : 0;
    clip(c.start, c.end);
  }

  a.kernel_busy_ns = total_length(merge(std::move(kernel_busy)));
  const std::vector<Interval> merged = merge(std::move(busy));
  for (std::size_t i = 0; i < merged.size(); ++i) {
    a.busy_ns += merged[i].second - merged[i].first;
    if (i == 0) continue;
    const std::uint64_t gap = merged[i].first - merged[i - 1].second;
    ++a.gaps;
    a.gap_total_ns += gap;
    a.gap_max_ns = std::max(a.gap_max_ns, gap);
  }

  std::vector<Interval> overhead;
  for (const OverheadRecord& o : batch.overheads) {
    if (o.end > w.start && o.start < w.end) overhead.emplace_back(std::max(o.start, w.start), std::min(o.end, w.end));
  }
  for (const Interval& i : merge(std::move(overhead))) a.overhead_ns += i.second - i.first;
  return a;
}

nlohmann::ordered_json to_json(const CaseActivity& a, std::size_t max_kernels) {
  const double wall = static_cast<double>(a.wall_ns);
  auto pct = [&](std::uint64_t ns) { return wall > 0 ? 100.0 * static_cast<double>(ns) / wall : 0.0; };
  nlohmann::ordered_json j;
  j["wall_us"] = wall / 1e3;
  j["kernel_us"] = static_cast<double>(a.kernel_ns) / 1e3;
  j["kernel_busy_us"] = static_cast<double>(a.kernel_busy_ns) / 1e3;
  j["gpu_busy_us"] = static_cast<double>(a.busy_ns) / 1e3;
  j["gpu_busy_pct"] = pct(a.busy_ns);
  j["launch_bound"] = a.launch_bound();
  j["launches"] = a.launches;
  j["gaps"] = {{"count", a.gaps},
               {"total_us", static_cast<double>(a.gap_total_ns) / 1e3},
               {"mean_us", a.gaps > 0 ? static_cast<double>(a.gap_total_ns) / 1e3 / static_cast<double>(a.gaps) : 0.0},
               {"max_us", static_cast<double>(a.gap_max_ns) / 1e3}};
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  std::int64_t other_count = 0;
  std::uint64_t other_ns = 0;
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    const KernelSummary& k = a.kernels[i];
    if (i >= max_kernels) {
      other_count += k.count;
      other_ns += k.total_ns;
      continue;
    }
    kernels.push_back({{"name", k.name},
                       {"count", k.count},
                       {"total_us", static_cast<double>(k.total_ns) / 1e3},
                       {"mean_us", static_cast<double>(k.total_ns) / 1e3 / static_cast<double>(k.count)},
                       {"pct_of_kernel_time", a.kernel_ns > 0 ? 100.0 * static_cast<double>(k.total_ns) / static_cast<double>(a.kernel_ns) : 0.0},
                       {"pct_of_wall", pct(k.total_ns)},
                       {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
                       {"block", {k.block[0], k.block[1], k.block[2]}},
                       {"registers_per_thread", k.registers_per_thread},
                       {"shared_memory_bytes", k.shared_bytes},
                       {"launch_configs", k.launch_configs}});
  }
  j["kernels"] = std::move(kernels);
  if (other_count > 0) j["other_kernels"] = {{"count", other_count}, {"total_us", static_cast<double>(other_ns) / 1e3}};
  if (!a.copies.empty()) {
    nlohmann::ordered_json copies = nlohmann::ordered_json::object();
    for (const auto& [kind, c] : a.copies) {
      copies[kind] = {{"count", c.count}, {"bytes", c.bytes}, {"total_us", static_cast<double>(c.total_ns) / 1e3}};
      if (c.total_ns > 0) copies[kind]["gbps"] = static_cast<double>(c.bytes) / static_cast<double>(c.total_ns);
    }
    j["copies"] = std::move(copies);
  }
  j["overhead"] = {{"cupti_us", static_cast<double>(a.overhead_ns) / 1e3}, {"cupti_pct_of_wall", pct(a.overhead_ns)}};
  j["dropped_records"] = a.dropped;
  if (!a.devices.empty()) j["devices"] = a.devices;
  return j;
}

double TraceBuilder::us(std::uint64_t t) const {
  // Microseconds from the run's origin, to the nanosecond.
  return t >= origin_ ? static_cast<double>(t - origin_) / 1e3 : -static_cast<double>(origin_ - t) / 1e3;
}

void TraceBuilder::track(std::vector<nlohmann::ordered_json>& out, int pid, std::uint32_t tid, const std::string& process,
                         const std::string& thread) {
  if (named_processes_.insert(pid).second) {
    out.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", process}}}});
    out.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", 0},
                   {"args", {{"sort_index", pid == host_pid_ ? 0 : pid - kGpuPidBase + 1}}}});
  }
  if (named_threads_.insert({pid, tid}).second) {
    out.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", thread}}}});
  }
}

std::vector<nlohmann::ordered_json> TraceBuilder::events(const ActivityBatch& batch, const std::vector<RangeRecord>& own,
                                                         const std::string& case_name, std::size_t max_events,
                                                         std::size_t* dropped) {
  std::vector<nlohmann::ordered_json> out;
  std::size_t emitted = 0, left_out = 0;
  bool full = false;  // once something does not fit, everything of lower priority is left out
  auto room = [&](std::size_t n) {
    if (!full && emitted + n <= max_events) return emitted += n, true;
    full = true;
    left_out += n;
    return false;
  };
  auto complete = [&](std::string name, const char* cat, int pid, std::uint32_t tid, std::uint64_t start,
                      std::uint64_t end, nlohmann::ordered_json args) {
    nlohmann::ordered_json e{{"name", std::move(name)}, {"cat", cat}, {"ph", "X"}, {"ts", us(start)},
                             {"dur", end > start ? static_cast<double>(end - start) / 1e3 : 0.0},
                             {"pid", pid}, {"tid", tid}};
    if (!args.empty()) e["args"] = std::move(args);
    out.push_back(std::move(e));
  };
  const std::string host = "host (gpubench)";
  auto host_thread = [&](std::uint32_t tid) { track(out, host_pid_, tid, host, fmt::format("thread {}", tid)); };
  auto gpu_stream = [&](std::uint32_t device, std::uint32_t stream) {
    const int pid = kGpuPidBase + static_cast<int>(device);
    track(out, pid, stream, fmt::format("GPU {}", device), fmt::format("stream {}", stream));
    return pid;
  };

  for (const RangeRecord& r : own) {
    if (!room(1)) continue;
    host_thread(r.thread);
    complete(std::string(r.name), "gpubench", host_pid_, r.thread, r.start, r.end, {{"case", case_name}});
  }
  for (const RangeRecord& r : batch.ranges) {
    if (r.domain == "gpubench" || !room(1)) continue;
    host_thread(r.thread);
    complete(std::string(r.name), "nvtx", host_pid_, r.thread, r.start, r.end,
             r.domain.empty() ? nlohmann::ordered_json::object() : nlohmann::ordered_json{{"domain", r.domain}});
  }
  std::map<std::uint32_t, const ApiRecord*> launches;  // correlation id -> the call that made it
  for (const ApiRecord& a : batch.api) launches[a.correlation] = &a;
  // A kernel or copy comes with its launch flow, an arrow from the API call to the work (2 more
  // events): all or nothing.
  auto launch_of = [&](std::uint32_t correlation) -> const ApiRecord* {
    const auto it = correlation == 0 ? launches.end() : launches.find(correlation);
    return it == launches.end() ? nullptr : it->second;
  };
  auto flow = [&](std::uint32_t correlation, int pid, std::uint32_t tid, std::uint64_t start) {
    const ApiRecord* launch = launch_of(correlation);
    if (!launch) return;
    const ApiRecord& a = *launch;
    out.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "s"}, {"id", correlation}, {"pid", host_pid_},
                   {"tid", a.thread}, {"ts", us(a.start)}});
    out.push_back({{"name", "launch"}, {"cat", "flow"}, {"ph", "f"}, {"bp", "e"}, {"id", correlation}, {"pid", pid},
                   {"tid", tid}, {"ts", us(start)}});
  };
  for (const KernelRecord& k : batch.kernels) {
    if (!room(launch_of(k.correlation) ? 3 : 1)) continue;
    const int pid = gpu_stream(k.device, k.stream);
    auto name = demangled_.find(k.name);
    if (name == demangled_.end()) name = demangled_.emplace(k.name, demangle(k.name)).first;
    complete(name->second, "kernel", pid, k.stream, k.start, k.end,
             {{"grid", {k.grid[0], k.grid[1], k.grid[2]}},
              {"block", {k.block[0], k.block[1], k.block[2]}},
              {"registers_per_thread", k.registers_per_thread},
              {"shared_memory_bytes", k.static_shared_bytes + k.dynamic_shared_bytes},
              {"correlation", k.correlation}});
    flow(k.correlation, pid, k.stream, k.start);
  }
  for (const CopyRecord& c : batch.copies) {
    if (!room(launch_of(c.correlation) ? 3 : 1)) continue;
    const int pid = gpu_stream(c.device, c.stream);
    const bool memset = c.kind == "memset";
    complete(memset ? std::string("memset") : fmt::format("memcpy {}", c.kind), memset ? "memset" : "memcpy", pid,
             c.stream, c.start, c.end, {{"bytes", c.bytes}, {"correlation", c.correlation}});
    flow(c.correlation, pid, c.stream, c.start);
  }
  for (const ApiRecord& a : batch.api) {
    if (!room(1)) continue;
    host_thread(a.thread);
    complete(std::string(a.name), "cuda_api", host_pid_, a.thread, a.start, a.end, {{"correlation", a.correlation}});
  }
  for (const OverheadRecord& o : batch.overheads) {
    if (!room(1)) continue;
    host_thread(o.thread);
    complete("CUPTI " + std::string(o.kind), "cupti_overhead", host_pid_, o.thread, o.start, o.end, {});
  }
  if (dropped) *dropped += left_out;
  return out;
}

TraceFile::TraceFile(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "w")) {
  if (!file_) throw std::runtime_error("cannot write the trace file " + path);
  std::fputs("[\n", file_);
}

TraceFile::~TraceFile() { close(); }

void TraceFile::append(const std::vector<nlohmann::ordered_json>& events) {
  if (!file_) return;
  for (const nlohmann::ordered_json& e : events) {
    if (!first_) std::fputs(",\n", file_);
    first_ = false;
    std::fputs(e.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str(), file_);
  }
  std::fflush(file_);
}

void TraceFile::close() {
  if (!file_) return;
  std::fputs("\n]\n", file_);
  std::fclose(file_);
  file_ = nullptr;
}

}  // namespace gpubench::profilers
