#pragma once
// Paths in one-line messages: what a path is when it is not a regular file ("a FIFO"), and the
// path itself with bytes that are not printable ASCII as \xNN, shortened past 160 characters.
// Header-only: the output validator (paths.cpp) and the input reader (reports/input_file.cpp)
// say them the same way.
#include <sys/stat.h>

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace gpubench {

inline std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

inline std::string printable_path(std::string_view path) {
  constexpr std::size_t kMessagePathChars = 160;  // longer paths are shortened in messages
  std::string out;
  for (std::size_t i = 0; i < path.size() && out.size() < kMessagePathChars; ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    if (c < 0x20 || c >= 0x7f || c == '\\') {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (out.size() >= kMessagePathChars) out += fmt::format("... ({} bytes)", path.size());
  return out;
}

}  // namespace gpubench
