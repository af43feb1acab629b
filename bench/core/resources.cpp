#include "resources.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <new>
#include <system_error>

#include <fmt/format.h>

#include "errors.hpp"

namespace gpubench {

std::optional<std::string> resource_exhaustion(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return "out of host memory";
  if (const auto* s = dynamic_cast<const std::system_error*>(&e)) {
    if (s->code().category() == std::generic_category() || s->code().category() == std::system_category()) {
      switch (s->code().value()) {
        case EAGAIN: return fmt::format("out of resources (threads or processes are limited here): {}", s->what());
        case ENOMEM: return fmt::format("out of host memory: {}", s->what());
        case EMFILE:
        case ENFILE: return fmt::format("out of file descriptors (ulimit -n): {}", s->what());
        default: break;
      }
    }
  }
  return std::nullopt;
}

void require_address_space(std::size_t bytes, const std::string& what) {
  if (bytes == 0) return;
  // PROT_NONE and MAP_NORESERVE: nothing is touched or committed, but RLIMIT_AS counts it.
  void* p = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    struct rlimit lim {};
    const bool limited = ::getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY;
    throw CaseSkipped(fmt::format("{}: {} MiB of address space cannot be mapped{}", what, bytes >> 20,
                                  limited ? fmt::format(" (ulimit -v is {} KiB)", lim.rlim_cur / 1024) : std::string()));
  }
  ::munmap(p, bytes);
}

}  // namespace gpubench
