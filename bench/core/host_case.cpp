#include <cstddef>
#include <cstring>
#include <vector>

#include "case.hpp"

namespace gpubench {

void flush_host_caches() {
  // 256 MiB exceeds the last-level cache of current server CPUs; written once per cold sample.
  static std::vector<unsigned char> buffer(std::size_t{256} << 20);
  static unsigned char pattern = 0;
  std::memset(buffer.data(), ++pattern, buffer.size());
}

}  // namespace gpubench
