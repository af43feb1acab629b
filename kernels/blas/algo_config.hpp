#pragma once
// A cuBLASLt algorithm's full configuration as a plain struct that serialises and rebuilds the
// algorithm (cublaslt.hpp's read_config and LtMatmul use it; tuning caches store it). No CUDA
// here, so a build without the toolkit still reads and checks tuning caches.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace gpubench::blas {

// Every CUBLASLT_ALGO_CONFIG_* attribute of an algorithm: with the problem's types these
// rebuild it exactly (cublasLtMatmulAlgoInit + cublasLtMatmulAlgoConfigSetAttribute).
struct AlgoConfig {
  std::int32_t id = 0;
  std::uint32_t tile = 0, stages = 0;
  std::int32_t splitk = 1;
  std::uint32_t reduction = 0, swizzle = 0, custom = 0;
  std::uint16_t inner_shape = 0, cluster_shape = 0;  // CUDA 12+ headers; 0 elsewhere
  bool operator==(const AlgoConfig&) const = default;
};
// Compact form "id=21 tile=18 stages=21 splitk=1 reduction=0 swizzle=0 custom=0 inner=0 cluster=0".
std::string to_string(const AlgoConfig& c);
AlgoConfig parse_algo_config(const std::string& text);  // throws std::invalid_argument
void to_json(nlohmann::ordered_json& j, const AlgoConfig& c);
void from_json(const nlohmann::ordered_json& j, AlgoConfig& c);  // throws on missing/bad fields

}  // namespace gpubench::blas
