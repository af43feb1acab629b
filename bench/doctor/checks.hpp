#pragma once
// `gpubench doctor`'s checks: pure functions over a SystemView, so every rule is unit-tested
// with hand-made views. Each finding names its check, what it is about (a GPU, a library, the
// host), a severity, what was found and one line saying what to do about it.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/doctor/system_view.hpp"

namespace gpubench::doctor {

enum class Severity { Ok, Info, Warning, Error };
std::string to_string(Severity s);

struct Finding {
  std::string check;    // "driver", "pcie", "disk", ...
  std::string subject;  // "cuda:0", "NCCL", "host", "results"
  Severity severity = Severity::Ok;
  std::string message;
  std::string remedy;   // empty for ok and for information that needs no action
};

// Thresholds the checks use (decimal units).
constexpr std::uint64_t kDiskErrorBytes = 1'000'000'000ULL;     // below: error
constexpr std::uint64_t kDiskWarningBytes = 10'000'000'000ULL;  // below: warning
constexpr unsigned kHotDefaultC = 85;        // "hot" when the GPU reports no slowdown threshold
constexpr unsigned kHotMarginC = 10;         // "hot" within this many degrees of the slowdown threshold

// All checks, in display order: CUDA and driver, each GPU, libraries, host.
std::vector<Finding> run_checks(const SystemView& v);

// The individual checks (each appends its findings).
void check_cuda(const SystemView& v, std::vector<Finding>& out);
void check_gpu(const SystemView& v, const GpuView& g, std::vector<Finding>& out);
void check_profiling(const SystemView& v, std::vector<Finding>& out);
void check_libraries(const SystemView& v, std::vector<Finding>& out);
void check_host(const SystemView& v, std::vector<Finding>& out);
void check_disk(const SystemView& v, std::vector<Finding>& out);
// In a container: which of the driver's libraries and device nodes it was given (nothing to say
// outside one; the driver check speaks for the host).
void check_container(const SystemView& v, std::vector<Finding>& out);

// 1 when any finding is an error, else 0.
int exit_code(const std::vector<Finding>& findings);

// {"findings": [...], "summary": {"ok": n, "info": n, "warning": n, "error": n}}
nlohmann::ordered_json to_json(const std::vector<Finding>& findings);
// The human form: one line per finding (severity, check, subject, message), the remedy
// indented below it, then a summary line.
std::string format_text(const std::vector<Finding>& findings);

// The oldest Linux driver that runs this CUDA major version's runtime ("580.65.06" for 13),
// from the CUDA release notes' driver table; empty for versions it does not know.
std::string minimum_driver_for(int cuda_version);
// {0,1,2,3,8} -> "0-3,8"
std::string format_cpu_list(const std::vector<unsigned>& cpus);
// 1536 MiB -> "1.5 GiB"
std::string format_bytes(std::uint64_t bytes);

}  // namespace gpubench::doctor
