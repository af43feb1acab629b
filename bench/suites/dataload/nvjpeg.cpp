// decode=gpu: nvJPEG's batched decode of a batch of the dataset's JPEGs to interleaved RGB in
// device memory, split between the GPU's hardware JPEG decoder (NVJPEG_BACKEND_HARDWARE, on
// A100, H100 and later) and nvJPEG's CUDA decoder (NVJPEG_BACKEND_DEFAULT) by hw_load, as DALI's
// hw_decoder_load splits them; both run at once on two streams. libnvjpeg.so.<CUDA major> is
// loaded at run time (a host without it skips the cases, saying where to get it), its
// declarations from nvjpeg.h (PyPI nvidia-nvjpeg / nvidia-nvjpeg-cu12, scripts/lib.sh).
//
// Verified before timing: every decoded image is copied back and held against libjpeg-turbo's
// accurate decode of the same file, within the distance libjpeg-turbo's own fast decode keeps
// from it on these images (calibrate_decode_tolerance, jpeg.hpp) plus a margin for a third
// decoder's rounding.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <nvjpeg.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/dataload/dataload.hpp"

namespace gpubench::suites::dataload {
namespace {

// The functions the case calls, resolved from the library.
struct Api {
  decltype(&nvjpegCreateEx) create_ex = nullptr;
  decltype(&nvjpegDestroy) destroy = nullptr;
  decltype(&nvjpegJpegStateCreate) state_create = nullptr;
  decltype(&nvjpegJpegStateDestroy) state_destroy = nullptr;
  decltype(&nvjpegDecodeBatchedInitialize) batched_initialize = nullptr;
  decltype(&nvjpegDecodeBatched) decode_batched = nullptr;
  decltype(&nvjpegGetImageInfo) image_info = nullptr;
  decltype(&nvjpegGetProperty) get_property = nullptr;
  std::string version;  // "13.3.2"
};

std::string soname() { return fmt::format("libnvjpeg.so.{}", CUDART_VERSION / 1000); }

// Loaded once per process; CaseSkipped with the reason when it cannot be.
const Api& api() {
  static std::once_flag once;
  static Api a;
  static std::string error;
  std::call_once(once, [] {
    void* h = dlopen(soname().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      error = fmt::format("decode=gpu: {} not found ({}): install it (pip install {}, or the CUDA Toolkit's) and put its "
                          "folder on LD_LIBRARY_PATH",
                          soname(), e != nullptr ? e : "dlopen failed", CUDART_VERSION / 1000 >= 13 ? "nvidia-nvjpeg" : "nvidia-nvjpeg-cu12");
      return;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (fn == nullptr && error.empty()) error = fmt::format("decode=gpu: {} has no {}", soname(), name);
    };
    sym(a.create_ex, "nvjpegCreateEx");
    sym(a.destroy, "nvjpegDestroy");
    sym(a.state_create, "nvjpegJpegStateCreate");
    sym(a.state_destroy, "nvjpegJpegStateDestroy");
    sym(a.batched_initialize, "nvjpegDecodeBatchedInitialize");
    sym(a.decode_batched, "nvjpegDecodeBatched");
    sym(a.image_info, "nvjpegGetImageInfo");
    sym(a.get_property, "nvjpegGetProperty");
    if (error.empty()) {
      int major = 0, minor = 0, patch = 0;
      a.get_property(MAJOR_VERSION, &major);
      a.get_property(MINOR_VERSION, &minor);
      a.get_property(PATCH_LEVEL, &patch);
      a.version = fmt::format("{}.{}.{}", major, minor, patch);
    }
  });
  if (!error.empty()) throw CaseSkipped(error);
  return a;
}

void check(nvjpegStatus_t s, const char* what) {
  if (s != NVJPEG_STATUS_SUCCESS) throw std::runtime_error(fmt::format("{}: nvJPEG status {}", what, static_cast<int>(s)));
}

using Clock = std::chrono::steady_clock;

double thread_cpu_s() {
  struct rusage u {};
  ::getrusage(RUSAGE_THREAD, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// One of the two decoders: a handle, its state, its share of the batch and its stream.
struct Decoder {
  nvjpegHandle_t handle = nullptr;
  nvjpegJpegState_t state = nullptr;
  int first = 0, count = 0;  // images [first, first + count) of the batch
  cudaStream_t stream = nullptr;
};

class NvjpegCase final : public CudaCase {
 public:
  NvjpegCase(const DeviceInfo& device, const Config& c) : CudaCase(device), c_(c) {}

  std::unique_ptr<Timer> make_timer() override { return std::make_unique<HostTimer>(); }  // the host's share (Huffman) counts

  void setup() override {
    const Api& a = api();
    const Source& src = source();
    for (int s = 0; s < c_.batch; ++s) jpegs_.push_back(src.encoded[static_cast<std::size_t>(s) % src.encoded.size()]);
    tolerance_ = calibrate_decode_tolerance(jpegs_);
    const int hw = static_cast<int>(std::lround(c_.batch * c_.hw_load / 100.0));
    hw_.first = 0;
    hw_.count = hw;
    cuda_.first = hw;
    cuda_.count = c_.batch - hw;
    if (hw_.count > 0) {
      const nvjpegStatus_t s = a.create_ex(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, 0, &hw_.handle);
      if (s != NVJPEG_STATUS_SUCCESS) {
        hw_.handle = nullptr;
        throw CaseSkipped(fmt::format("hw_load={}: no hardware JPEG decoder on this GPU (nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE): "
                                      "status {}); hw_load=0 decodes on its CUDA cores",
                                      c_.hw_load, static_cast<int>(s)));
      }
      GPUBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&hw_.stream, cudaStreamNonBlocking));
    }
    if (cuda_.count > 0) {
      check(a.create_ex(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, 0, &cuda_.handle), "nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT)");
      cuda_.stream = stream();
    }
    for (Decoder* d : {&hw_, &cuda_}) {
      if (d->count == 0) continue;
      check(a.state_create(d->handle, &d->state), "nvjpegJpegStateCreate");
      check(a.batched_initialize(d->handle, d->state, d->count, 1, NVJPEG_OUTPUT_RGBI), "nvjpegDecodeBatchedInitialize");
    }
    // One device buffer per image, its size from the header.
    nvjpegHandle_t info_handle = cuda_.count > 0 ? cuda_.handle : hw_.handle;
    for (const std::string& j : jpegs_) {
      int components = 0, widths[NVJPEG_MAX_COMPONENT] = {}, heights[NVJPEG_MAX_COMPONENT] = {};
      nvjpegChromaSubsampling_t sub{};
      check(a.image_info(info_handle, reinterpret_cast<const unsigned char*>(j.data()), j.size(), &components, &sub, widths, heights),
            "nvjpegGetImageInfo");
      widths_.push_back(widths[0]);
      heights_.push_back(heights[0]);
      outputs_.emplace_back(static_cast<std::size_t>(widths[0]) * static_cast<std::size_t>(heights[0]) * 3);
      nvjpegImage_t dest{};
      dest.channel[0] = outputs_.back().as<unsigned char>();
      dest.pitch[0] = static_cast<std::size_t>(widths[0]) * 3;
      destinations_.push_back(dest);
      data_.push_back(reinterpret_cast<const unsigned char*>(j.data()));
      lengths_.push_back(j.size());
      encoded_bytes_ += static_cast<double>(j.size());
    }
  }

  ~NvjpegCase() override {
    (void)cudaStreamSynchronize(stream());
    if (hw_.stream != nullptr) (void)cudaStreamSynchronize(hw_.stream);
    try {
      const Api& a = api();
      for (Decoder* d : {&hw_, &cuda_}) {
        if (d->state != nullptr) a.state_destroy(d->state);
        if (d->handle != nullptr) a.destroy(d->handle);
      }
    } catch (const std::exception&) {  // not loaded: nothing was created
    }
    if (hw_.stream != nullptr) (void)cudaStreamDestroy(hw_.stream);
  }

  Verification verify() override {
    decode_batch();
    const int max_limit = tolerance_.max_abs + kMaxMargin;
    const double mean_limit = 2 * tolerance_.mean_abs + kMeanMargin;
    Verification v;
    v.method = fmt::format("every image against libjpeg-turbo's accurate decode: at most {} levels anywhere and {:.2f} on average "
                           "(libjpeg-turbo's own fast decode of these images: {} and {:.2f})",
                           max_limit, mean_limit, tolerance_.max_abs, tolerance_.mean_abs);
    v.passed = true;
    JpegDecoder reference;
    std::vector<std::uint8_t> want, got;
    for (int i = 0; i < c_.batch; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const std::size_t values = outputs_[k].bytes();
      want.resize(values);
      got.resize(values);
      std::string error;
      if (!reference.decode_to(jpegs_[k].data(), jpegs_[k].size(), widths_[k], heights_[k], want.data(), &error)) {
        throw std::runtime_error("libjpeg-turbo: " + error);
      }
      GPUBENCH_CUDA_CHECK(cudaMemcpy(got.data(), outputs_[k].get(), values, cudaMemcpyDeviceToHost));
      const PixelDifference d = pixel_difference(want.data(), got.data(), values);
      ++v.checked;
      v.max_error = std::max({v.max_error, static_cast<double>(d.max_abs) / max_limit, d.mean_abs / mean_limit});
      if (d.max_abs > max_limit || d.mean_abs > mean_limit) {
        v.passed = false;
        v.detail = fmt::format("image {} ({}x{}, the {} decoder): {} levels at most, {:.2f} on average", i, widths_[k], heights_[k],
                               i < hw_.count ? "hardware" : "CUDA", d.max_abs, d.mean_abs);
        return v;
      }
    }
    return v;
  }

  void run() override {
    const Clock::time_point t0 = Clock::now();
    const double cpu0 = thread_cpu_s();
    decode_batch();
    latencies_.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    cpu_s_ += thread_cpu_s() - cpu0;
  }

  Metrics metrics() const override {
    Metrics m;
    m.bytes = encoded_bytes_;  // JPEG bytes decoded per run
    m.items = static_cast<double>(c_.batch);
    m.items_unit = "images";
    double wall = 0;
    for (double l : latencies_) wall += l;
    if (!latencies_.empty()) {
      std::vector<double> sorted = latencies_;
      std::sort(sorted.begin(), sorted.end());
      m.extra["batch_latency_ms_p50"] = sorted[sorted.size() / 2] * 1e3;
      m.extra["batch_latency_ms_p99"] = sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(std::ceil(0.99 * sorted.size())) - 1)] * 1e3;
      // The host CPU the decode kept busy (nvJPEG's CUDA decoder does Huffman on the host for
      // small batches): what the node still spends on decode at this rate.
      m.extra["cpu_cores"] = wall > 0 ? cpu_s_ / wall : 0.0;
    }
    m.extra["hw_images"] = hw_.count;
    m.extra["nvjpeg"] = api().version;
    return m;
  }

 private:
  // Decodes the batch: the hardware part on its stream, the CUDA part on the case's, both
  // submitted before either is waited for.
  void decode_batch() {
    const Api& a = api();
    for (Decoder* d : {&hw_, &cuda_}) {
      if (d->count == 0) continue;
      const auto f = static_cast<std::size_t>(d->first);
      check(a.decode_batched(d->handle, d->state, data_.data() + f, lengths_.data() + f, destinations_.data() + f, d->stream),
            d == &hw_ ? "nvjpegDecodeBatched (hardware)" : "nvjpegDecodeBatched (CUDA)");
    }
    if (hw_.stream != nullptr) GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(hw_.stream));
    synchronize();
  }

  // A third decoder rounds on its own: the calibrated distance plus this many levels anywhere,
  // and twice the calibrated mean plus this much on average (docs/suite-dataload.md).
  static constexpr int kMaxMargin = 16;
  static constexpr double kMeanMargin = 0.5;

  Config c_;
  std::vector<std::string> jpegs_;
  DecodeTolerance tolerance_;
  Decoder hw_, cuda_;
  std::vector<int> widths_, heights_;
  std::vector<cuda::DeviceBuffer> outputs_;
  std::vector<nvjpegImage_t> destinations_;
  std::vector<const unsigned char*> data_;
  std::vector<std::size_t> lengths_;
  double encoded_bytes_ = 0;
  std::vector<double> latencies_;
  double cpu_s_ = 0;
};

}  // namespace

std::optional<std::string> nvjpeg_unavailable() { return std::nullopt; }  // the library is looked for at set-up

std::unique_ptr<Case> make_nvjpeg_case(const DeviceInfo& device, const Config& c) { return std::make_unique<NvjpegCase>(device, c); }

}  // namespace gpubench::suites::dataload
