#pragma once
// The `train` suite: one optimizer step (forward + backward + AdamW, with gradient
// accumulation and activation recompute) of an mlp or a GPT-style transformer, reported as
// step time, tokens/s (samples/s for the mlp), model FLOPs, MFU/HFU and memory. The models and
// their CPU reference live in kernels/train/.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "bench/core/suite.hpp"
#include "kernels/train/model_config.hpp"

namespace gpubench::suites::train {

using kernels::train::ModelConfig;

// FP8: Transformer Engine's recipe (per-tensor current scaling, E4M3 forward, E5M2 gradients).
// Planned and skipped everywhere for now (unsupported() says why): the GPU step is not built,
// and the CPU has only the reference's emulation (kernels/train/ops_reference.hpp).
enum class Precision { FP32, TF32, FP16Amp, BF16Amp, FP8 };
Precision parse_precision(const std::string& s);  // "fp32", "tf32", "fp16-amp", "bf16-amp", "fp8"
std::string to_string(Precision p);
// The datasheet figure MFU is taken against (data/gpus.json peak keys).
std::string peak_key(Precision p);

// The model configuration of one point; throws UsageError for a configuration that cannot be
// built (heads not dividing hidden, ...), naming it.
// micro_batch=0 (search the largest that fits) gives micro-batch 1 here; see searches_batch.
ModelConfig config_from(const Point& point);
bool searches_batch(const Point& point);

std::vector<AxisSpec> train_axes();
// The bucket_mb axis: what is wrong with a word, and a point's value in MiB.
std::optional<std::string> bucket_mb_error(std::string_view word);
double bucket_mb(const Point& point);
std::vector<Preset> train_presets();

// Metrics of one step of `c`: model and hardware FLOPs, tokens or samples, the peak key.
Metrics step_metrics(const ModelConfig& c, Precision p);
// details.step_split: a transformer step's time in attention, in the dense products and in
// everything else, per step, from `steps` steps timed apart (totals in seconds) and how it was
// measured; the fractions sum to 1. The split ml-engineering's "when to upgrade" uses.
// precision=fp8: what the MFU is measured against (metrics.mfu_peak), the fp8 peak for every
// FLOP though attention's products and the LM head run in bf16: a lower bound on how well the
// step uses the units it runs on.
inline constexpr const char* kFp8MfuPeakNote =
    "pct_of_peak (MFU) counts every FLOP against the fp8 Tensor Core peak, though only the linear layers' GEMMs run "
    "in fp8 (attention's products and the LM head run in bf16, at half that peak): a lower bound on the units' use";
nlohmann::ordered_json step_split(double attention_s, double dense_s, double total_s, int steps, const std::string& source);

std::unique_ptr<Suite> make_suite();
// Versions of OpenBLAS and cuBLASLt, for the results context (cpu_step.cpp).
nlohmann::ordered_json library_versions();
// cuBLASLt's version (cuda_step_common.cpp; kNotBuiltWithCuda in a build without CUDA).
std::string cublaslt_version();
// The single-device CPU step; `bucket_mb` only shapes the gradient bucket timeline it writes.
std::unique_ptr<Case> make_cpu_case(const ModelConfig& c, double bucket_mb);
// The data-parallel CPU step (dp_cpu.cpp): ddp or zero1 across the ranks of the MPI session.
enum class DpMode;
std::unique_ptr<Case> make_cpu_dp_case(const ModelConfig& c, DpMode mode, double bucket_mb);
// The single-GPU step; `bucket_mb` only shapes the gradient bucket timeline it writes;
// `attention_given`: --axis attention was explicit (a fused graph cuDNN refuses is then a skip,
// otherwise the step falls back to unfused and says so: verify.hpp's on_fused_refused).
std::unique_ptr<Case> make_cuda_case(const DeviceInfo& device, const ModelConfig& c, Precision p, bool search_batch,
                                     double bucket_mb, bool attention_given);
// The data-parallel GPU step over NCCL (cuda_dp_step.cpp; dp_gpu_none.cpp without NCCL).
std::unique_ptr<Case> make_cuda_dp_case(const DeviceInfo& device, const ModelConfig& c, Precision p, DpMode mode,
                                        double bucket_mb);

}  // namespace gpubench::suites::train
