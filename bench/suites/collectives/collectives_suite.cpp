// The collectives suite: axes, presets, which points apply and which cannot run here, and the
// backend each case uses (MPI on device cpu, NCCL on CUDA devices).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "bench/core/cuda_portable.hpp"
#include "bench/core/sizes.hpp"
#include "bench/mpi/session.hpp"
#include "bench/suites/collectives/collectives.hpp"

extern char** environ;

namespace gpubench::suites::collectives {
namespace {

// moe_dispatch's token: 4096 elements, a Llama 3 8B hidden state (8 KiB in bf16).
constexpr std::int64_t kDefaultHidden = 4096;

// A multi-process run: every rank drives one GPU (or the host) and the communicator spans ranks.
mpi::Session* mpi_run() {
  mpi::Session* s = mpi::active() ? mpi::session() : nullptr;
  return s != nullptr && s->size() > 1 ? s : nullptr;
}

class CollectivesSuite final : public Suite {
 public:
  std::string name() const override { return "collectives"; }
  std::string description() const override {
    return "NCCL collectives across GPUs (one process, or one rank per GPU under mpirun/srun) and MPI collectives on "
           "host memory: time, algbw, busbw (nccl-tests' factors), exact check";
  }

  std::vector<AxisSpec> axes() const override {
    std::vector<std::string> ops, types;
    for (const Operation* op : operations()) ops.push_back(op->name);
    for (const DtypeInfo& d : dtypes()) types.push_back(d.name);
    return {
        {"op", AxisKind::Enum, "collective operation", ops, 1},
        {"dtype", AxisKind::Enum, "element type", types, 1},
        {"redop", AxisKind::Enum, "reduction (all_reduce, reduce_scatter, reduce; sum for the others)", redop_names(),
         1},
        {"size", AxisKind::Int, "bytes per rank (the buffer nccl-tests calls size; rounded per operation)", {}, 1, {}, kMaxAxisBytes},
        {"inplace", AxisKind::Int, "1: in place (NCCL's layout), 0: separate buffers", {}, 0, {}, 1},
        {"root", AxisKind::Int, "root rank of broadcast and reduce (0 for the others)", {}, 0, {}, 65535},
        {"gpus",
         AxisKind::Int,
         "GPUs one process drives, from the case's device (0: all from it; 1 per rank under MPI)",
         {},
         0,
         {},
         1024},
        {"graph", AxisKind::Int, "1: launch through a captured CUDA Graph (NCCL, one GPU per process)", {}, 0, {}, 1},
        {"timing",
         AxisKind::Enum,
         "batch: mean of back-to-back calls (NCCL) or median of barrier-aligned windows (MPI); per_iter: every call "
         "timed alone after a barrier, with p50/p90/p99/max (nccl-tests -I)",
         {"batch", "per_iter"},
         1},
        {"hidden", AxisKind::Int, "elements per token of moe_dispatch (the others take the default)", {}, 1, {}, kMaxAxisBytes},
    };
  }

  std::vector<Preset> presets() const override {
    const std::string all_ops = "all_reduce,all_gather,reduce_scatter,broadcast,reduce,alltoall,sendrecv,alltoallv";
    auto preset = [&](std::string name, std::string ops, std::string dtype, std::string redop, std::string gpu_size,
                      std::string cpu_size, std::string inplace) {
      std::vector<std::pair<std::string, std::string>> common = {
          {"op", ops},   {"dtype", dtype}, {"redop", redop},   {"inplace", inplace},       {"root", "0"},
          {"gpus", "0"}, {"graph", "0"},   {"timing", "batch"}, {"hidden", std::to_string(kDefaultHidden)}};
      Preset p{std::move(name), common, common};
      p.cuda.emplace_back("size", gpu_size);
      p.cpu.emplace_back("size", cpu_size);
      return p;
    };
    return {
        preset("quick", all_ops, "fp32", "sum", "8:256M:x32", "8:256k:x8", "0"),
        preset("standard", all_ops + ",moe_dispatch", "fp32,fp16,bf16", "sum", "8:1G:x2", "8:16M:x2", "0,1"),
        preset("full", all_ops + ",moe_dispatch", "fp32,fp16,bf16,fp64,int32,fp8_e4m3,fp8_e5m2", "sum,prod,max,min,avg",
               "8:16G:x2", "8:64M:x2", "0,1"),
    };
  }

  // Axes that mean nothing for a point stay out of its name and results, so the cases that
  // existed before them keep their names: timing when it is the default (batch), hidden for
  // every operation but moe_dispatch.
  Point resolve(const DeviceInfo& device, Point point) const override {
    (void)device;
    const bool moe = point.text_or("op", "") == moe_dispatch_op().name;
    const bool batch = point.text_or("timing", "batch") == "batch";
    if (moe && !batch) return point;
    Point kept;
    for (const auto& [name, value] : point.values()) {
      if ((name == "timing" && batch) || (name == "hidden" && !moe)) continue;
      kept.set(name, value);
    }
    return kept;
  }

  bool applies(const DeviceInfo& device, const Point& p) const override {
    const Operation* op = find_operation(p.text("op"));
    if (op == nullptr) return false;
    if (!op->reduces && p.text("redop") != "sum") return false;
    if (!op->rooted && p.integer("root") != 0) return false;
    if (!device.is_cuda()) return p.integer("gpus") == 0 && p.integer("graph") == 0;
    // One process driving every GPU: one case, planned on the first GPU. Under MPI every rank
    // plans on its own GPU (the run keeps only that one).
    if (p.integer("gpus") == 0 && mpi_run() == nullptr) return device.ordinal == 0;
    return true;
  }

  // The backend or the launch rules out every point at once: one line instead of a skipped
  // case per operation and size.
  std::optional<std::string> not_applicable(const DeviceInfo& device) const override {
    if (device.is_cuda()) {
      if (!have_nccl_backend()) return "collectives on GPUs need a build with NCCL (GPUBENCH_WITH_NCCL)";
      return std::nullopt;
    }
    if (!have_mpi_backend()) return "the MPI CPU backend needs a build with MPI (libopenmpi-dev; GPUBENCH_WITH_MPI)";
    if (mpi_run() == nullptr) {
      return "the MPI CPU backend runs across ranks: start gpubench under mpirun -np N (N >= 2) or srun";
    }
    return std::nullopt;
  }

  std::optional<std::string> unsupported(const DeviceInfo& device, const Point& p) const override {
    const Operation& op = *find_operation(p.text("op"));
    const Dtype dtype = *parse_dtype(p.text("dtype"));
    if (p.integer("inplace") != 0 && !op.in_place) return fmt::format("{} has no in-place form", op.name);
    if (p.integer("inplace") < 0 || p.integer("inplace") > 1 || p.integer("graph") < 0 || p.integer("graph") > 1) {
      return "inplace and graph take 0 or 1";
    }
    int ranks = 1;
    if (!device.is_cuda()) {
      if (!have_mpi_backend()) return "the MPI CPU backend needs a build with MPI (libopenmpi-dev; GPUBENCH_WITH_MPI)";
      // Not in a plain single-process run: a one-rank communicator measures nothing, and
      // initialising MPI there (a singleton) is a failure mode a run of other suites need not risk.
      mpi::Session* s = mpi_run();
      if (s == nullptr)
        return "the MPI CPU backend runs across ranks: start gpubench under mpirun -np N (N >= 2) or srun";
      ranks = s->size();
    } else {
      if (!have_nccl_backend()) return "collectives on GPUs need a build with NCCL (GPUBENCH_WITH_NCCL)";
      if (auto why = nccl_dtype_unsupported(dtype, device.cc_major)) return why;
      const std::int64_t gpus = p.integer("gpus");
      if (mpi::Session* s = mpi_run()) {
        if (gpus > 1) return "under MPI each rank drives one GPU: use gpus=0 or 1 and one rank per GPU";
        ranks = s->size();
      } else {
        // A device with ordinal N means at least N + 1 GPUs, also where the runtime reports none:
        // a plan for a GPU that is not here (run --dry-run --assume MODEL) plans one.
        const int count = std::max(cuda_device_count(), device.ordinal + 1);
        ranks = static_cast<int>(gpus == 0 ? count - device.ordinal : gpus);
        if (gpus < 0 || device.ordinal + ranks > count) {
          return fmt::format("gpus={} from cuda:{}: this machine has {} GPUs", gpus, device.ordinal, count);
        }
        if (p.integer("graph") != 0 && ranks > 1) {
          return "graph launch captures one GPU's stream: use gpus=1, or one rank per GPU under mpirun";
        }
      }
    }
    if (op.rooted && (p.integer("root") < 0 || p.integer("root") >= ranks)) {
      return fmt::format("root {}: the run has {} rank{}", p.integer("root"), ranks, ranks == 1 ? "" : "s");
    }
    if (auto why = size_unsupported(op, p.integer("size"), dtype, ranks, p.integer_or("hidden", kDefaultHidden))) return why;
    if (device.is_cuda() && device.memory_bytes > 0) {
      const Counts c = counts_for(op, p.integer("size"), dtype, ranks, p.integer_or("hidden", kDefaultHidden),
                                  /*routing=*/false);
      // moe_dispatch stages the packed and the returned tokens too.
      const std::int64_t staging = c.exchange && c.exchange->tokens > 0 ? 2 * c.send : 0;
      const double footprint = static_cast<double>(c.send + c.recv + staging) * info(dtype).bytes;
      if (footprint > 0.5 * static_cast<double>(device.memory_bytes)) {
        return fmt::format("{} bytes of buffers per GPU: more than half of its memory", footprint);
      }
    }
    return std::nullopt;
  }

  std::unique_ptr<Case> make_case(const DeviceInfo& device, const Point& p) const override {
    CaseConfig c;
    c.op = find_operation(p.text("op"));
    c.input.dtype = *parse_dtype(p.text("dtype"));
    c.input.redop = *parse_redop(p.text("redop"));
    c.input.reduces = c.op->reduces;
    c.size_bytes = p.integer("size");
    c.in_place = p.integer("inplace") != 0;
    c.root = static_cast<int>(p.integer("root"));
    c.graph = p.integer("graph") != 0;
    c.per_iteration = p.text_or("timing", "batch") == "per_iter";
    c.hidden = p.integer_or("hidden", kDefaultHidden);
    const double timeout = collective_timeout_s();
    std::unique_ptr<Transport> t;
    if (!device.is_cuda()) {
      t = make_mpi_transport(timeout);
    } else {
      const std::int64_t gpus = p.integer("gpus");
      clear_last_cuda_error();  // a previous case's non-sticky error is not this case's
      const int g = static_cast<int>(gpus == 0 ? cuda_device_count() - device.ordinal : gpus);
      t = make_nccl_transport(device.ordinal, mpi_run() != nullptr ? 1 : g, timeout);
    }
    if (!t) throw std::logic_error("collectives: no backend for " + device.id());
    c.input.ranks = t->ranks();
    c.counts = counts_for(*c.op, c.size_bytes, c.input.dtype, c.input.ranks, c.hidden);
    return collectives::make_case(std::move(c), std::move(t));
  }

  nlohmann::ordered_json libraries() const override {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    if (have_nccl_backend()) j["nccl"] = nccl_version();
    if (mpi::built_with_mpi()) j["mpi"] = mpi::library_version();
    // Every NCCL_* variable (they change algorithms, protocols and transports), as one text
    // "NAME=value NAME=value" since library entries are strings; "none" when there is none.
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      if (std::strncmp(*e, "NCCL_", 5) == 0) env.emplace_back(*e);
    }
    std::sort(env.begin(), env.end());
    j["nccl_env"] = env.empty() ? std::string("none") : fmt::format("{}", fmt::join(env, " "));
    return j;
  }

  nlohmann::ordered_json summarize(const std::vector<nlohmann::ordered_json>& entries) const override {
    return collectives::summarize(entries);
  }
};

}  // namespace

std::unique_ptr<Suite> make_suite() { return std::make_unique<CollectivesSuite>(); }

}  // namespace gpubench::suites::collectives
