#pragma once
// Resource exhaustion (host memory, address space, threads, file descriptors) ends a case as
// `skipped` with the reason, never `failed` and never a hang: it says what this machine or
// its limits (ulimit, cgroups) allow, not that the code under test is wrong.
#include <cstddef>
#include <exception>
#include <optional>
#include <string>

namespace gpubench {

// The reason when `e` is resource exhaustion: std::bad_alloc, or a std::system_error for
// EAGAIN (a thread could not be created), ENOMEM, EMFILE or ENFILE. nullopt otherwise.
std::optional<std::string> resource_exhaustion(const std::exception& e);

// Throws CaseSkipped naming `what` unless `bytes` more of address space can be mapped now
// (under `ulimit -v` the limit counts every mapping). A library that retries a failed
// allocation forever (OpenBLAS's buffer) is only called once this holds.
void require_address_space(std::size_t bytes, const std::string& what);

}  // namespace gpubench
