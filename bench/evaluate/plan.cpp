#include "bench/evaluate/plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "bench/core/errors.hpp"
#include "bench/core/plan.hpp"
#include "bench/soak/runner.hpp"

namespace gpubench::evaluate {
namespace {

constexpr double kDoctorS = 2;      // doctor's probe (gpu-smoke's helper-step allowance)
constexpr double kSoakStartS = 4;   // a soak process past its duration (gpu-smoke's soak allowance)
constexpr double kMaxBudgetS = 7 * 86400;

using K = Item::Kind;

Item run(std::string part, std::string name, int priority, Where where, std::vector<std::string> suites,
         std::vector<std::string> axes, std::size_t min_devices = 1) {
  Item i;
  i.part = std::move(part);
  i.name = std::move(name);
  i.priority = priority;
  i.kind = K::Run;
  i.where = where;
  i.suites = std::move(suites);
  i.axes = std::move(axes);
  i.min_devices = min_devices;
  return i;
}

// An item that runs for a set time rather than a plan of cases (a soak, a tuner's search).
Item timed(std::string part, std::string name, int priority, K kind, Where where, double seconds,
           std::vector<std::string> options = {}) {
  Item i;
  i.part = std::move(part);
  i.name = std::move(name);
  i.priority = priority;
  i.kind = kind;
  i.where = where;
  i.soak_s = seconds;
  i.axes = std::move(options);
  return i;
}

// The screen's soak: one process over every device, the gemm load (priority 11).
Item soak_item(double soak_s) { return timed("screen", "soak", 11, K::Soak, Where::AllGpus, soak_s); }

// The input part's loader search (priority 19): `tune dataload` for a twentieth of the budget,
// 10 to 60 s, on one device, for the dataload item's consumer (a batch every 10 ms).
Item loader_cores_item(double tune_s, int batch) {
  return timed("input", "loader-cores", 19, K::TuneDataload, Where::OneGpu, tune_s,
               {"--batch", std::to_string(batch), "--step-time", "0.01"});
}

std::vector<std::string> with(std::vector<std::string> base, std::initializer_list<std::string> more) {
  base.insert(base.end(), more);
  return base;
}

// The data-parallel step over every device, one rank each (priority 18): the depth's training
// step with dp=ddp, whose bucket timeline and the node's all-reduce curve the card projects to
// 64 and 512 GPUs.
Item dp_step(std::vector<std::string> train_axes) {
  for (std::string& a : train_axes) {
    if (a == "dp=none") a = "dp=ddp";
  }
  Item i = run("node", "dp-step", 18, Where::AllGpus, {"train"}, std::move(train_axes), 2);
  i.ranks_per_device = true;
  return i;
}

// The priority order (lower first), the same on GPUs and the CPU: what a buyer asks first is
// kept first. 1-3: is each GPU what it should be, and the node's interconnect; 4-6: the
// inference and training figures a price is judged by; then the rest of each part.
std::vector<Item> gpu_items(std::size_t gpus, double soak_s) {
  const std::string peers = fmt::format("peer=0:{}:1", gpus > 0 ? gpus - 1 : 0);
  // The largest bf16/fp8 GEMMs cuBLASLt runs well (MAMF's plateau on H100/H200 is 4096-8192).
  const std::vector<std::string> mamf{"provider=cublaslt", "layout=tn", "m=4096,8192", "n=@m", "k=@m"};
  const std::vector<std::string> llama{"model=llama3-8b", "dtype=bf16", "layers=0", "kv_page=16", "graphs=0", "tp=1"};
  const std::vector<std::string> train{"model=transformer", "layers=12", "hidden=2048", "heads=16", "ffn_mult=4",
                                       "seq=1024", "vocab=50257", "accum=1", "recompute=none", "dp=none",
                                       "attention=fused"};
  const std::vector<std::string> coll{"dtype=bf16", "redop=sum", "inplace=0", "gpus=0", "graph=0", "timing=batch",
                                      "size=1M,64M,1G,8G"};
  std::vector<Item> v;
  v.push_back(run("screen", "gemm-bf16", 1, Where::EveryGpu, {"gemm"}, with(mamf, {"dtype=bf16"})));
  v.push_back(run("screen", "hbm-triad", 2, Where::EveryGpu, {"memory"}, {"test=triad", "size=1G", "peer=0"}));
  v.push_back(run("node", "all-reduce", 3, Where::AllGpus, {"collectives"}, with(coll, {"op=all_reduce"}), 2));
  v.push_back(run("depth", "infer-decode", 4, Where::OneGpu, {"infer"},
                  with(llama, {"phase=decode", "batch=1,32", "context_len=2048"})));
  v.push_back(run("depth", "infer-serve", 5, Where::OneGpu, {"infer"},
                  with(llama, {"phase=serve", "prompt_len=512", "output_len=128", "rate=4", "requests=64",
                               "max_batch=32", "kv_budget=0"})));
  v.push_back(run("depth", "train-bf16", 6, Where::OneGpu, {"train"}, with(train, {"precision=bf16-amp", "micro_batch=8"})));
  v.push_back(run("screen", "gemm-fp8", 7, Where::EveryGpu, {"gemm"}, with(mamf, {"dtype=fp8-e4m3"})));
  v.push_back(run("depth", "infer-prefill", 8, Where::OneGpu, {"infer"},
                  with(llama, {"phase=prefill", "batch=1,8", "prompt_len=2048"})));
  v.push_back(run("node", "peer-copies", 9, Where::AllGpus, {"memory"}, {"test=p2p,p2p_bidir", "size=256M", peers}, 2));
  v.push_back(run("depth", "attention-prefill", 10, Where::OneGpu, {"attention"},
                  {"provider=cudnn", "dtype=bf16", "phase=prefill", "direction=fwd,bwd", "causal=1", "tokens=16384",
                   "batch=1", "heads=16", "kv_heads=@heads", "seq_q=4096", "seq_kv=@seq_q", "head_dim=128",
                   "page_size=0"}));
  v.push_back(soak_item(soak_s));
  v.push_back(run("input", "dataload", 12, Where::EveryGpu, {"dataload"},
                  {"stage=pipeline", "workers=2,4", "order=random", "io=memory", "batch=32", "prefetch=4", "pinned=1",
                   "aug=cpu,gpu", "step_us=10000", "consumer=spin"}));
  v.push_back(run("node", "collectives", 13, Where::AllGpus, {"collectives"},
                  with(coll, {"op=all_gather,reduce_scatter,alltoall"}), 2));
  v.push_back(run("depth", "train-fp8", 14, Where::OneGpu, {"train"}, with(train, {"precision=fp8", "micro_batch=8"})));
  v.push_back(run("node", "host-concurrency", 15, Where::AllGpus, {"memory"},
                  {"test=all_to_host_ce,host_to_all_ce", "size=256M", "peer=0"}, 2));
  v.push_back(run("depth", "attention-decode", 16, Where::OneGpu, {"attention"},
                  {"provider=cudnn", "dtype=bf16", "phase=decode", "direction=fwd", "causal=0", "tokens=0", "batch=16",
                   "heads=32", "kv_heads=8", "seq_q=1", "seq_kv=8192", "head_dim=128", "page_size=16"}));
  v.push_back(run("depth", "train-largest-batch", 17, Where::OneGpu, {"train"},
                  with(train, {"precision=bf16-amp", "micro_batch=0"})));
  v.push_back(dp_step(with(train, {"precision=bf16-amp", "micro_batch=8"})));
  // The all-reduce with each of NCCL's ring and NVLS (NVSwitch multicast) algorithms forced, at
  // the sizes where they differ most (priorities 20, 21): what NVLS buys on this node. NCCL
  // refuses NCCL_ALGO=NVLS where it cannot run it (no NVSwitch, an older driver): that item is
  // then skipped with NCCL's reason.
  int priority = 20;
  for (const char* algo : {"Ring", "NVLS"}) {
    Item i = run("node", fmt::format("all-reduce-{}", algo == std::string("Ring") ? "ring" : "nvls"), priority++,
                 Where::AllGpus, {"collectives"},
                 {"dtype=bf16", "redop=sum", "inplace=0", "gpus=0", "graph=0", "timing=batch", "size=64M,1G,8G",
                  "op=all_reduce"},
                 2);
    i.env = {fmt::format("NCCL_ALGO={}", algo)};
    v.push_back(std::move(i));
  }
  return v;
}

// The same items at sizes a 2-core CPU runs in a few minutes (the quick preset's CPU sizes).
std::vector<Item> cpu_items(double soak_s) {
  const std::vector<std::string> small{"model=llama-small", "dtype=fp32", "layers=0", "kv_page=16", "graphs=0", "tp=1",
                                       "threads=0"};
  const std::vector<std::string> train{"model=transformer", "layers=2", "hidden=128", "heads=4", "ffn_mult=4", "seq=64",
                                       "vocab=2048", "accum=1", "recompute=none", "dp=none", "attention=fused"};
  const std::vector<std::string> attn{"provider=flash", "dtype=fp32", "batch=1", "heads=4", "kv_heads=2", "head_dim=64",
                                      "tokens=0", "threads=0"};
  std::vector<Item> v;
  v.push_back(run("screen", "gemm-bf16", 1, Where::EveryGpu, {"gemm"},
                  {"provider=openblas", "dtype=fp32", "layout=nn", "m=1024", "n=@m", "k=@m", "threads=0"}));
  v.push_back(run("screen", "hbm-triad", 2, Where::EveryGpu, {"memory"}, {"test=triad", "size=64M", "peer=0"}));
  v.push_back(run("depth", "infer-decode", 4, Where::OneGpu, {"infer"}, with(small, {"phase=decode", "batch=1,4", "context_len=256"})));
  v.push_back(run("depth", "infer-serve", 5, Where::OneGpu, {"infer"},
                  with(small, {"phase=serve", "prompt_len=128", "output_len=16", "rate=4", "requests=12", "max_batch=8",
                               "kv_budget=0"})));
  v.push_back(run("depth", "train-bf16", 6, Where::OneGpu, {"train"}, with(train, {"precision=fp32", "micro_batch=4"})));
  v.push_back(run("depth", "infer-prefill", 8, Where::OneGpu, {"infer"}, with(small, {"phase=prefill", "batch=1,4", "prompt_len=128"})));
  v.push_back(run("depth", "attention-prefill", 10, Where::OneGpu, {"attention"},
                  with(attn, {"phase=prefill", "direction=fwd,bwd", "causal=1", "seq_q=512", "seq_kv=@seq_q", "page_size=0"})));
  v.push_back(soak_item(soak_s));
  v.push_back(run("input", "dataload", 12, Where::EveryGpu, {"dataload"},
                  {"stage=pipeline", "workers=1,2", "order=random", "io=memory", "batch=8", "prefetch=4", "pinned=0",
                   "aug=cpu", "step_us=10000", "consumer=spin"}));
  v.push_back(run("depth", "attention-decode", 16, Where::OneGpu, {"attention"},
                  with(attn, {"phase=decode", "direction=fwd", "causal=0", "seq_q=1", "seq_kv=512", "page_size=16"})));
  // Over the ranks of an mpirun/srun team (the MPI CPU backend): the node's network for the
  // card's projection, and the data-parallel step it projects.
  Item all_reduce = run("node", "all-reduce", 3, Where::AllGpus, {"collectives"},
                        {"op=all_reduce", "dtype=fp32", "redop=sum", "inplace=0", "size=256,64K,1M,16M"}, 2);
  all_reduce.ranks_per_device = true;
  v.push_back(all_reduce);
  v.push_back(dp_step(with(train, {"precision=fp32", "micro_batch=4"})));
  return v;
}

// The node's storage (priority 22): the storage suite's quick preset (fio's four reference points
// and pread) on the host's cpu device, over a file in GPUBENCH_STORAGE_DIR or the temporary
// folder (docs/suite-storage.md).
Item storage_item() { return run("input", "storage", 22, Where::HostCpu, {"storage"}, {}); }

// How many GPUs the node's storage feeds (priority 23): `tune storage`, MLPerf Storage's emulated
// accelerators, for a twentieth of the budget (10 to 60 s) on the host. A GPU node: unet3d (the
// heaviest reader, 3.2 GB/s per H100) on emulated A100s when its GPUs are A100s, else H100s
// (MLPerf's newest published step), up to twice its GPUs; a CPU node: resnet50 on H100s over a
// 256 MiB file.
Item storage_feeds_item(const std::vector<DeviceInfo>& devices, double tune_s) {
  const bool gpu = !devices.empty() && devices.front().is_cuda();
  const bool a100 = gpu && devices.front().name.find("A100") != std::string::npos;
  std::vector<std::string> options{"--workload", gpu ? "unet3d" : "resnet50", "--accelerator", a100 ? "a100" : "h100",
                                   "--max-accelerators", std::to_string(gpu ? 2 * devices.size() : 16), "--run-time", "2"};
  if (!gpu) options.insert(options.end(), {"--size", std::to_string(256 << 20)});
  return timed("input", "storage-feeds", 23, K::TuneStorage, Where::HostCpu, tune_s, std::move(options));
}

// The media part (priorities 24-26, docs/suite-video.md): one GPU's NVDEC and NVENC at 1080p
// (H.264 and HEVC; NVENC at p1 and p3, the SDK's published rows), and x264 veryfast and medium on
// the host at the same size and QP for the cores one GPU stands in for. A GPU without NVENC
// (A100, H100, H200, B200) has its encode cases planned as skipped by the suite, saying so. A CPU
// node: its own H.264 encode and decode at 720p.
std::vector<Item> media_items(bool gpu) {
  const std::string res = gpu ? "res=1080p" : "res=720p";
  const std::vector<std::string> common{res, "qp=23", "sessions=1", "threads=0", "input=synthetic"};
  std::vector<Item> v;
  v.push_back(run("media", "video-decode", 24, Where::OneGpu, {"video"},
                  with(common, {"op=decode", gpu ? "codec=h264,hevc" : "codec=h264", gpu ? "frames=60" : "frames=30"})));
  v.push_back(run("media", "video-encode", 25, Where::OneGpu, {"video"},
                  with(common, {"op=encode", gpu ? "codec=h264,hevc" : "codec=h264", gpu ? "preset=p1,p3" : "preset=veryfast,medium",
                                gpu ? "frames=60" : "frames=30"})));
  if (gpu) {
    v.push_back(run("media", "video-cpu", 26, Where::HostCpu, {"video"},
                    with(common, {"op=encode", "codec=h264", "preset=veryfast,medium", "frames=30"})));
  }
  return v;
}

std::string seconds_text(double s) { return fmt::format("{:.0f} s", s); }

}  // namespace

std::vector<std::string> Item::arguments() const {
  switch (kind) {
    case K::Doctor:
      return {"doctor"};
    case K::Soak:
      return {"soak", "--load", "gemm", "--duration", fmt::format("{:.0f}s", soak_s)};
    case K::TuneDataload:
    case K::TuneStorage: {
      std::vector<std::string> a{"tune", kind == K::TuneDataload ? "dataload" : "storage", "--budget", fmt::format("{:.0f}", soak_s)};
      a.insert(a.end(), axes.begin(), axes.end());
      return a;
    }
    case K::Run:
      break;
  }
  std::vector<std::string> a{"run", "--suite", fmt::format("{}", fmt::join(suites, ","))};
  for (const std::string& x : axes) {
    a.push_back("-a");
    a.push_back(x);
  }
  return a;
}

std::size_t EvaluationPlan::gpus() const {
  return static_cast<std::size_t>(std::count_if(devices.begin(), devices.end(), [](const DeviceInfo& d) { return d.is_cuda(); }));
}

std::vector<const Item*> EvaluationPlan::kept() const {
  std::vector<const Item*> out;
  for (const Item& i : items)
    if (i.status == "planned") out.push_back(&i);
  return out;
}

std::vector<const Item*> EvaluationPlan::dropped() const {
  std::vector<const Item*> out;
  for (const Item& i : items)
    if (i.status.rfind("dropped", 0) == 0) out.push_back(&i);
  return out;
}

std::vector<Item> evaluation_items(const std::vector<DeviceInfo>& devices, double budget_s) {
  const bool gpu = !devices.empty() && devices.front().is_cuda();
  const double soak_s = std::clamp(std::floor(budget_s / 10), 10.0, 60.0);
  Item check;
  check.part = "check";
  check.name = "doctor";
  check.kind = K::Doctor;
  check.where = Where::Host;
  std::vector<Item> items{check};
  for (Item& i : gpu ? gpu_items(devices.size(), soak_s) : cpu_items(soak_s)) items.push_back(std::move(i));
  items.push_back(loader_cores_item(std::clamp(std::floor(budget_s / 20), 10.0, 60.0), gpu ? 32 : 8));
  items.push_back(storage_item());
  items.push_back(storage_feeds_item(devices, std::clamp(std::floor(budget_s / 20), 10.0, 60.0)));
  for (Item& i : media_items(gpu)) items.push_back(std::move(i));
  return items;
}

EvaluationPlan plan_evaluation(const std::vector<const Suite*>& suites, const std::vector<DeviceInfo>& devices,
                               double budget_s, const EstimateSettings& settings, std::size_t ranks) {
  if (devices.empty()) throw UsageError("evaluate: no device selected");
  EvaluationPlan plan;
  plan.budget_s = budget_s;
  plan.ranks = std::max<std::size_t>(ranks, 1);
  const bool cpu = !devices.front().is_cuda();
  plan.devices = devices;
  plan.items = evaluation_items(devices, budget_s);
  const std::vector<DeviceInfo> first{devices.front()};
  for (Item& item : plan.items) {
    switch (item.kind) {
      case K::Doctor:
        item.planned_s = kDoctorS;
        continue;
      case K::Soak:
        item.planned_s = item.soak_s + kSoakStartS;
        item.cases = devices.size();
        continue;
      case K::TuneDataload:  // the search stops within its budget; its dataset and start besides
      case K::TuneStorage:   // (its file's writing besides)
        item.planned_s = item.soak_s + kSoakStartS;
        item.cases = 1;
        continue;
      case K::Run:
        break;
    }
    // Under a team every rank selects its own device: the node has as many as there are ranks.
    const std::size_t have = std::max(devices.size(), plan.ranks);
    if (cpu && item.ranks_per_device && plan.ranks < item.min_devices) {
      item.status = fmt::format("skipped: needs {} ranks: run evaluate under mpirun -np N or srun", item.min_devices);
      continue;
    }
    if (have < item.min_devices) {
      item.status = fmt::format("skipped: needs {} devices, {} selected", item.min_devices, have);
      continue;
    }
    PlanRequest request;
    request.suites = item.suites;
    request.preset = "quick";
    request.axis_overrides = item.axes;
    // One worker's plan for an item every device runs at once; the node's devices otherwise
    // (a collective's case drives them all from the first).
    // (a rank's case is its own device's: one rank's plan.)
    const std::vector<DeviceInfo> host{DeviceInfo{}};  // the cpu device
    const std::vector<DeviceInfo>& on = item.where == Where::HostCpu ? (cpu ? first : host)
                                        : item.where == Where::AllGpus && !item.ranks_per_device ? devices
                                                                                                 : first;
    std::vector<NotApplicable> not_applicable;
    const std::vector<PlannedCase> cases = make_plan(suites, request, on, &not_applicable);
    const PlanEstimate e = estimate_plan(cases, settings);
    item.cases = e.to_run;
    item.skipped_cases = e.skipped;
    item.planned_s = e.seconds;
    if (e.to_run == 0) {
      std::string why = !not_applicable.empty() ? not_applicable.front().reason
                        : !cases.empty() && cases.front().skip_reason ? *cases.front().skip_reason
                                                                     : "no case applies";
      item.status = "skipped: " + why;
      item.planned_s = 0;
    }
  }
  // The budget: the check always; then the items by priority while they fit.
  double total = settings.costs.process_start_s;
  std::vector<Item*> order;
  for (Item& i : plan.items) {
    if (i.kind == K::Doctor) total += i.planned_s;
    else if (i.status == "planned") order.push_back(&i);
  }
  std::stable_sort(order.begin(), order.end(), [](const Item* a, const Item* b) { return a->priority < b->priority; });
  for (Item* i : order) {
    if (total + i->planned_s <= budget_s) {
      total += i->planned_s;
    } else {
      i->status = fmt::format("dropped: priority {}, needs {} with {} of the budget left", i->priority,
                              seconds_text(i->planned_s), seconds_text(std::max(0.0, budget_s - total)));
    }
  }
  plan.planned_s = total;
  // Run order: part by part (the check, then the screen that picks the depth's GPU), by priority within.
  auto part_index = [](const std::string& p) {
    return std::find_if(kParts.begin(), kParts.end(), [&](const char* k) { return p == k; }) - kParts.begin();
  };
  std::stable_sort(plan.items.begin(), plan.items.end(), [&](const Item& a, const Item& b) {
    return part_index(a.part) != part_index(b.part) ? part_index(a.part) < part_index(b.part) : a.priority < b.priority;
  });
  return plan;
}

double parse_budget(const std::string& text) {
  const double s = soak::parse_duration(text, "--budget");
  if (s > kMaxBudgetS) throw UsageError(fmt::format("--budget '{}': at most 7 days", text));
  return s;
}

}  // namespace gpubench::evaluate
