#pragma once
// The infer model (model.hpp, llama architecture) on a CUDA device: weights, activations and
// the paged KV cache in fp16 or bf16, matmuls through cuBLASLt (fp32 accumulation), the rest in
// infer_kernels.cu. The same step interface as the CPU Engine: chunks of sequences in, the
// logits of each chunk's last token out (fp32, on the host). The page table stays on the host
// (PageTable) and is copied to the device before each step. No harness dependency.
//
//   GpuEngine e(spec, DType::BF16, nullptr, seed, page_size, pages, max_rows, max_sequences, stream);
//   const std::vector<float>& logits = e.forward(chunks);   // synchronises
//
// fp8 weights (LinearWeights::Fp8, as TensorRT-LLM serves an fp8 checkpoint): the linear layers'
// weights (QKV, output, gate/up, down) held only as E4M3 codes, each tensor quantised once at
// setup from the bf16 values the bf16 path holds, with its own per-tensor scale 448 / amax and
// stored transposed (K-major: cuBLASLt's fp8 GEMMs are TN); before each linear GEMM the bf16
// input is quantised to E4M3 with a scale from its own amax (per-tensor current scaling,
// kernels/common/fp8_scaling); the GEMM runs in cuBLASLt fp8 with the two descales as scale
// pointers and a bf16 output (accumulating into the residual in place as the bf16 path does).
// Embedding, norms, attention, the KV cache and the LM head stay in bf16. Needs sm_89 or newer
// (cuBLASLt's fp8) and fp8_dims_error(spec) empty; the activation type must be bf16.
//
// A serving step (prepare, enqueue, fetch_tokens: bench/suites/infer/runner.hpp's serving_step)
// as a serving engine runs it: the step's inputs packed on the host
// into pinned memory and copied in one transfer (prepare), the forward and greedy sampling on
// the device (enqueue: argmax of each chunk's logits), each chunk's next token copied back into
// pinned memory, the stream synchronised (fetch_tokens). forward() returns the fp32 logits
// instead (verification). For CUDA graphs: enqueue() is the device work alone, what a graph
// captures.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/infer/infer_kernels.cuh"
#include "kernels/infer/model.hpp"

namespace gpubench::kernels::infer {

// Why the device path cannot run this model ("the CUDA path runs the llama models"), or nullopt.
std::optional<std::string> gpu_unsupported(const ModelSpec& s);

enum class LinearWeights { Dense, Fp8 };

class GpuEngine {
 public:
  // `weights` as random_weights<float> lays them out (rounded to the device type on upload);
  // null: random_weights' values for `seed` generated on the device (a model of billions of
  // weights is not worth making on the host). `max_rows`: the most rows (tokens) one step will
  // hold. Throws DeviceOutOfMemory.
  GpuEngine(const ModelSpec& s, DType t, const std::vector<float>* weights, std::uint64_t seed, idx page_size, idx pages,
            idx max_rows, idx max_sequences, cudaStream_t stream, LinearWeights linear = LinearWeights::Dense);
  ~GpuEngine();
  GpuEngine(const GpuEngine&) = delete;
  GpuEngine& operator=(const GpuEngine&) = delete;

  const ModelSpec& spec() const { return s_; }
  PageTable& table() { return table_; }
  std::int64_t device_bytes() const { return allocated_; }

  const std::vector<float>& forward(const std::vector<Chunk>& chunks);             // logits, synchronises
  void prepare(const std::vector<Chunk>& chunks);  // inputs to the device (queued on the stream)
  void enqueue();                                  // the step's device work for the last prepare()
  const std::vector<float>& fetch_logits();        // waits for the stream
  const std::vector<std::int32_t>& fetch_tokens(); // each chunk's greedy next token; waits

 private:
  struct Impl;
  ModelSpec s_;
  PageTable table_;
  std::int64_t allocated_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpubench::kernels::infer
