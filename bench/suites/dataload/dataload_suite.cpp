#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "bench/suites/dataload/dataload.hpp"
#include "kernels/memory/host_pool.hpp"

namespace gpubench::suites::dataload {
namespace {

// Which axes each stage reads; every other axis must sit at its neutral value (first column)
// for the point to exist, so a sweep of one stage's knob does not repeat the other stages.
bool reads(Stage s, const std::string& axis) {
  if (axis == "workers") return s != Stage::H2D;
  if (axis == "order") return s == Stage::Read || s == Stage::Pipeline;
  if (axis == "io") return s == Stage::Read || s == Stage::Pipeline;
  if (axis == "format") return s == Stage::Read || s == Stage::Pipeline;
  if (axis == "scale") return s == Stage::Decode || s == Stage::Augment || s == Stage::DecodeAugment || s == Stage::Pipeline;
  if (axis == "dtype") return s != Stage::Read && s != Stage::Decode;
  if (axis == "prefetch") return s == Stage::H2D || s == Stage::Pipeline;
  if (axis == "pinned") return s == Stage::H2D || s == Stage::Pipeline;
  if (axis == "aug") return s == Stage::Pipeline;
  if (axis == "step_us") return s == Stage::Pipeline;
  if (axis == "consumer") return s == Stage::Pipeline;
  if (axis == "decode" || axis == "hw_load") return s == Stage::Decode;
  return true;  // stage, batch
}

// The value an axis takes where the stage does not read it.
AxisValue neutral(const std::string& axis) {
  if (axis == "order") return std::string("random");  // training reads shuffled
  if (axis == "io") return std::string("memory");
  if (axis == "format") return std::string("files");
  if (axis == "dtype") return std::string("fp32");
  if (axis == "aug") return std::string("cpu");
  if (axis == "consumer") return std::string("spin");
  if (axis == "decode") return std::string("cpu");
  if (axis == "workers" || axis == "scale") return std::int64_t{1};
  return std::int64_t{0};  // prefetch, pinned, step_us
}

std::string stage_names() {
  std::string s;
  for (const StageInfo& i : stages()) s += (s.empty() ? "" : ",") + i.name;
  return s;
}

// 1, 2, 4, ... up to every CPU of the process, and that count itself.
std::string worker_sweep() {
  const int n = kernels::usable_cpus();
  std::string s;
  int w = 1;
  for (; w < n; w *= 2) s += fmt::format("{},", w);
  return s + std::to_string(n);
}

class DataloadSuite final : public Suite {
 public:
  std::string name() const override { return "dataload"; }
  std::string description() const override {
    return "Input pipeline: storage read, JPEG decode, augmentation, collation, host-to-device copy, each alone and end "
           "to end against a consumer, with data-stall accounting";
  }

  std::vector<AxisSpec> axes() const override {
    return {
        {"stage", AxisKind::Enum, "pipeline stage measured (see docs/suite-dataload.md)", {"read", "decode", "augment", "decode_augment", "collate", "h2d", "pipeline"}, 1},
        {"workers", AxisKind::Int, "worker threads (read, decode, augment, collate, pipeline)", {}, 1, {}, 1024},
        {"order", AxisKind::Enum, "sample order of read and pipeline: seq or random (shuffled, as training reads)", {"seq", "random"}, 1},
        {"io", AxisKind::Enum, "memory (synthetic data, pipeline), cached (page cache warm), cold (evicted with posix_fadvise), direct (O_DIRECT, read)", {"memory", "cached", "cold", "direct"}, 1},
        {"format", AxisKind::Enum, "files (one JPEG per sample) or shard (packed file + index)", {"files", "shard"}, 1},
        {"scale", AxisKind::Int, "JPEG DCT scaling: decode at 1/scale (1, 2, 4, 8)", {}, 1, {}, 8},
        {"dtype", AxisKind::Enum, "augmented tensor type (NCHW)", {"fp32", "fp16"}, 1},
        {"batch", AxisKind::Int, "samples per run (per batch)", {}, 1, {}, 4096},
        {"prefetch", AxisKind::Int, "pipeline: batches the queue holds; h2d: 0 = synchronous copies, k = k buffers in flight", {}, 0, {}, 1024},
        {"pinned", AxisKind::Int, "1: page-locked host batches (h2d, pipeline on a GPU)", {}, 0, {}, 1},
        {"aug", AxisKind::Enum, "where the pipeline augments: cpu (in the workers) or gpu", {"cpu", "gpu"}, 1},
        {"step_us", AxisKind::Int, "pipeline, consumer=spin: the consumer's time per batch in microseconds (0: none)", {}, 0, {}, 60000000},
        {"consumer", AxisKind::Enum, "pipeline: spin (a calibrated wait of step_us: a GPU kernel, or a host loop) or train-768/3072/9408 (one training step of the train suite's mlp classifier on the batch's images mean-pooled to that many features)", {"spin", "train-768", "train-3072", "train-9408"}, 1},
        // Added after the others: case names show them only for decode=gpu (resolve() leaves
        // them out of a CPU decode's point), so earlier results keep their names.
        {"decode", AxisKind::Enum, "decode: cpu (libjpeg-turbo, on the cpu device) or gpu (nvJPEG, batched, on a CUDA device)", {"cpu", "gpu"}, 1},
        {"hw_load", AxisKind::Int, "decode=gpu: percent of each batch given to the GPU's hardware JPEG decoder (DALI's hw_decoder_load), the rest to nvJPEG's CUDA decoder", {}, 0, {}, 100},
    };
  }

  std::vector<Preset> presets() const override {
    const std::string all = stage_names(), sweep = worker_sweep(), n = std::to_string(kernels::usable_cpus());
    const std::string cpu_stages = "read,decode,augment,decode_augment,collate,pipeline";
    auto cpu = [&](std::string stage, std::string workers, std::string order, std::string io, std::string format,
                   std::string scale, std::string dtype, std::string batch, std::string prefetch, std::string step,
                   std::string consumer) {
      return std::vector<std::pair<std::string, std::string>>{
          {"stage", stage},   {"workers", workers}, {"order", order},       {"io", io},
          {"format", format}, {"scale", scale},     {"dtype", dtype},       {"batch", batch},
          {"prefetch", prefetch}, {"pinned", "0"},  {"aug", "cpu"},         {"step_us", step},
          {"consumer", consumer}, {"decode", "cpu"}, {"hw_load", "0"}};
    };
    // On a GPU: its stages (decode there is nvJPEG's, split between the hardware and the CUDA
    // decoder by hw_load).
    auto gpu = [&](std::vector<std::pair<std::string, std::string>> v, std::string stages, std::string pinned,
                   std::string aug, std::string consumer, std::string hw_load) {
      for (auto& [k, val] : v) {
        if (k == "stage") val = stages;
        if (k == "pinned") val = pinned;
        if (k == "aug") val = aug;
        if (k == "consumer") val = consumer;
        if (k == "decode") val = "gpu";
        if (k == "hw_load") val = hw_load;
      }
      return v;
    };
    // quick: a few seconds on a 2-core machine: decode and decode + augment at 1 worker (the
    // per-core preparation rates the cores-needed estimate divides by) and all workers, the
    // pipeline's three DS-Analyzer runs and its loader capacity without a consumer (cached).
    const std::string one_and_all = n == "1" ? "1" : "1," + n;
    const auto q = cpu("decode,decode_augment,pipeline", one_and_all, "random", "memory,cached,cold", "files", "1", "fp32",
                       "8", "0,4", "0,10000", "spin");
    auto q_gpu = q;
    // standard and full add the train consumer (the train suite's mlp on the pooled images).
    const auto s = cpu(cpu_stages, sweep, "seq,random", "memory,cached,cold,direct", "files,shard", "1,2", "fp32", "32",
                       "0,4", "0,10000", "spin,train-768");
    const auto f = cpu(cpu_stages, sweep, "seq,random", "memory,cached,cold,direct", "files,shard", "1,2,4,8",
                       "fp32,fp16", "64", "0,2,8", "0,5000,20000", "spin,train-768,train-3072");
    auto s_gpu = s, f_gpu = f;
    for (auto* v : {&s_gpu, &f_gpu}) {
      for (auto& [k, val] : *v) {
        if (k == "workers") val = one_and_all;  // augment and h2d on the GPU run at workers=1
        // The storage side (order, io, format) is the CPU device's sweep; on each GPU the
        // pipeline varies what the GPU changes (pinned, aug, prefetch, consumer) over synthetic
        // and cached data. Crossing every storage axis too planned 7680 pipeline cases a GPU in
        // full (61440 on 8 GPUs: issue 41).
        if (k == "order") val = "random";
        if (k == "io") val = "memory,cached";
        if (k == "format") val = "files";
      }
    }
    for (auto& [k, val] : f_gpu) {
      if (k == "scale") val = "1,2";
    }
    return {
        {"quick", gpu(q_gpu, "decode,augment,h2d,pipeline", "0,1", "cpu,gpu", "spin", "0,65"), q},
        {"standard", gpu(s_gpu, all, "0,1", "cpu,gpu", "spin,train-3072", "0,65,100"), s},
        {"full", gpu(f_gpu, all, "0,1", "cpu,gpu", "spin,train-768,train-3072,train-9408", "0,25,50,65,75,100"), f},
    };
  }

  // decode and hw_load came after the other axes: a point that does not use them leaves them out,
  // so its case name is what it was. Kept: a GPU decode's, and a value the user asked for that
  // the stage cannot use (applies() then drops the point: `-a decode=gpu` plans decodes only).
  Point resolve(const DeviceInfo& device, Point point) const override {
    (void)device;
    const bool decode_stage = point.text_or("stage", "") == "decode";
    const bool gpu = point.text_or("decode", "cpu") == "gpu";
    const bool split = point.integer_or("hw_load", 0) != 0;
    if (decode_stage && (gpu || split)) return point;
    if (!decode_stage && ((gpu && point.given("decode")) || (split && point.given("hw_load")))) return point;
    Point plain;
    plain.set_given(point.given_axes());
    for (const auto& [name, value] : point.values()) {
      if (name != "decode" && name != "hw_load") plain.set(name, value);
    }
    return plain;
  }

  bool applies(const DeviceInfo& device, const Point& point) const override {
    const std::optional<Stage> stage = parse_stage(point.text("stage"));
    if (!stage) return false;
    // CPU-only stages are measured on the cpu device; a CUDA device runs augment, h2d, pipeline
    // and nvJPEG's decode (decode=gpu: planned on the cpu device too, where it is skipped with
    // the reason, so that asking for it on a machine without a GPU says why).
    const bool gpu_decode = point.text_or("decode", "cpu") == "gpu";
    if (device.is_cuda() && *stage == Stage::Decode && !gpu_decode) return false;
    if (device.is_cuda() && *stage != Stage::Augment && *stage != Stage::H2D && *stage != Stage::Pipeline &&
        *stage != Stage::Decode) {
      return false;
    }
    if (!gpu_decode && point.integer_or("hw_load", 0) != 0) return false;  // a split of nvJPEG's decoders
    // nvJPEG decodes a batch from one thread, at full size.
    if (gpu_decode && (point.integer("workers") != 1 || point.integer("scale") != 1)) return false;
    for (const auto& [axis, value] : point.values()) {
      if (axis == "stage") continue;
      bool used = reads(*stage, axis);
      if (axis == "workers" && device.is_cuda() && *stage == Stage::Augment) used = false;
      if ((axis == "pinned" || axis == "aug") && !device.is_cuda()) used = false;
      if (!used && value != neutral(axis)) return false;
    }
    const std::string io = point.text("io");
    if (*stage == Stage::Read && io == "memory") return false;
    if (*stage == Stage::Pipeline && io == "direct") return false;
    if (*stage == Stage::Pipeline && point.integer("prefetch") == 0) return false;
    const bool spin = point.text("consumer") == "spin";
    if (*stage == Stage::Pipeline && !spin && point.integer("step_us") != 0) return false;  // a train step takes its own time
    if (*stage == Stage::Pipeline && spin && io == "memory" && point.integer("step_us") == 0) return false;  // nothing to time
    if (*stage == Stage::H2D && point.integer("prefetch") > 8) return false;
    if (*stage == Stage::Pipeline && spin && io != "memory" && point.integer("step_us") == 0 && device.is_cuda()) return false;
    return true;
  }

  std::optional<std::string> unsupported(const DeviceInfo& device, const Point& point) const override {
    check_dataset_env();  // a bad GPUBENCH_DATASET is a usage error, before anything runs
    const Config c = to_config(point);
    if (c.scale != 1 && c.scale != 2 && c.scale != 4 && c.scale != 8) {
      return fmt::format("scale={}: libjpeg-turbo's DCT scaling here is 1/1, 1/2, 1/4 or 1/8", c.scale);
    }
    if (!device.is_cuda() && c.stage == Stage::H2D) return "h2d needs a CUDA device";
    if (c.gpu_decode && !device.is_cuda()) return "decode=gpu needs a CUDA device (nvJPEG decodes on the GPU)";
    if (c.gpu_decode) {
      if (std::optional<std::string> why = nvjpeg_unavailable()) return *why;
    }
    if (c.batch > 4096) return fmt::format("batch={}: at most 4096 samples", c.batch);
    if (!device.is_cuda() && c.train_grid > 32) {
      return "consumer=train-9408 on the CPU: a 363M-parameter model (5.8 GB of fp32 state, seconds per step); use train-768 or train-3072";
    }
    if (c.workers > 1024) return fmt::format("workers={}: at most 1024 threads", c.workers);
    return std::nullopt;
  }

  std::unique_ptr<Case> make_case(const DeviceInfo& device, const Point& point) const override {
    const Config c = to_config(point);
    if (c.stage == Stage::Pipeline) return make_pipeline_case(device, c);
    if (c.gpu_decode) return make_nvjpeg_case(device, c);
    if (device.is_cuda()) return make_gpu_case(device, c);
    return make_host_stage(c);
  }

  nlohmann::ordered_json libraries() const override;

  nlohmann::ordered_json summarize(const std::vector<nlohmann::ordered_json>& entries) const override {
    return dataload::summarize(entries);
  }
};

}  // namespace

const std::vector<StageInfo>& stages() {
  static const std::vector<StageInfo> all{
      {Stage::Read, "read", "storage reads of whole samples"},
      {Stage::Decode, "decode", "JPEG decode (libjpeg-turbo) from memory"},
      {Stage::Augment, "augment", "random-resized crop to 224, flip, normalize, NCHW (CPU or GPU)"},
      {Stage::DecodeAugment, "decode_augment", "decode then augment, per sample (a loader worker's CPU work)"},
      {Stage::Collate, "collate", "per-sample tensors copied into one batch"},
      {Stage::H2D, "h2d", "batch copies host to device"},
      {Stage::Pipeline, "pipeline", "workers, bounded queue, consumer: end to end"},
  };
  return all;
}

std::optional<Stage> parse_stage(const std::string& name) {
  for (const StageInfo& i : stages()) {
    if (i.name == name) return i.stage;
  }
  return std::nullopt;
}

std::optional<Io> parse_io(const std::string& name) {
  if (name == "memory") return Io::Memory;
  if (name == "cached") return Io::Cached;
  if (name == "cold") return Io::Cold;
  if (name == "direct") return Io::Direct;
  return std::nullopt;
}

IoMode to_io_mode(Io io) {
  switch (io) {
    case Io::Cold: return IoMode::Cold;
    case Io::Direct: return IoMode::Direct;
    default: return IoMode::Cached;
  }
}

Config to_config(const Point& p) {
  Config c;
  c.stage = *parse_stage(p.text("stage"));
  c.workers = static_cast<int>(p.integer("workers"));
  c.random_order = p.text("order") == "random";
  c.io = *parse_io(p.text("io"));
  c.shard = p.text("format") == "shard";
  c.scale = static_cast<int>(p.integer("scale"));
  c.dtype = p.text("dtype") == "fp16" ? kernels::dataload::OutType::F16 : kernels::dataload::OutType::F32;
  c.batch = static_cast<int>(p.integer("batch"));
  c.prefetch = static_cast<int>(p.integer("prefetch"));
  c.pinned = p.integer("pinned") != 0;
  c.gpu_augment = p.text("aug") == "gpu";
  c.step_us = p.integer("step_us");
  // train-<features>: features = 3 x grid x grid, the grid dividing 224 (kAugmentSize).
  const std::string consumer = p.text("consumer");
  c.train_grid = consumer == "train-768" ? 16 : consumer == "train-3072" ? 32 : consumer == "train-9408" ? 56 : 0;
  c.gpu_decode = p.text_or("decode", "cpu") == "gpu";
  c.hw_load = static_cast<int>(p.integer_or("hw_load", 0));
  return c;
}

nlohmann::ordered_json DataloadSuite::libraries() const {
#ifdef GPUBENCH_TURBOJPEG_VERSION
  return {{"libjpeg-turbo", GPUBENCH_TURBOJPEG_VERSION}};
#else
  return nlohmann::ordered_json::object();
#endif
}

std::unique_ptr<Suite> make_suite() { return std::make_unique<DataloadSuite>(); }

}  // namespace gpubench::suites::dataload
