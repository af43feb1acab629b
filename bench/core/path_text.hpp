#pragma once
// Paths in one-line messages: what a path is (describe_path: "is a regular file", "is a FIFO",
// "does not exist"), and the path itself with bytes that are not printable ASCII as \xNN,
// shortened past 160 characters. Header-only: the output validator (paths.cpp), the atomic
// writer (results.cpp), the input reader (reports/input_file.cpp), the dataset reader and the
// doctor's disk probe say them the same way, so no message names a path by a kind it is not.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace gpubench {

inline std::string printable_path(std::string_view path);  // below

// What a stat(2) mode says the path is, as a noun: "a regular file", "a folder", ...
inline std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a file of an unknown kind";
}

// What is at `path` now, as the rest of a sentence that starts with the path:
//   "is a regular file", "is a folder", "is a character device", "is a FIFO", "is a socket", ...
//   "is a symbolic link to a FIFO" (the kind of what it points at)
//   "is a symbolic link to nothing (its target does not exist)"
//   "does not exist"
//   "does not exist: <part> is a regular file, not a folder" (a part of the path is no folder)
//   "cannot be examined: folder <part> may not be searched (Permission denied)"
//   "cannot be examined: <the system's reason>"
inline std::string describe_path(const std::string& path) {
  struct stat ls {}, st {};
  if (::lstat(path.c_str(), &ls) == 0) {
    if (!S_ISLNK(ls.st_mode)) return "is " + file_kind(ls.st_mode);
    if (::stat(path.c_str(), &st) == 0) return "is a symbolic link to " + file_kind(st.st_mode);
    if (errno == ENOENT) return "is a symbolic link to nothing (its target does not exist)";
    return fmt::format("is a symbolic link that cannot be followed: {}", std::strerror(errno));
  }
  const int err = errno;
  if (err == ENOTDIR) {
    // The deepest existing part of the path: what it is instead of a folder.
    std::filesystem::path part = std::filesystem::path(path).parent_path();
    while (!part.empty() && ::stat(part.c_str(), &st) != 0) {
      const std::filesystem::path up = part.parent_path();
      if (up == part) break;
      part = up;
    }
    if (!part.empty() && ::stat(part.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      return fmt::format("does not exist: {} is {}, not a folder", printable_path(part.string()), file_kind(st.st_mode));
    }
    return "does not exist: a part of it is not a folder";
  }
  if (err == ENOENT) return "does not exist";
  if (err == EACCES) {
    // The folder on the way that may not be searched.
    for (std::filesystem::path up = std::filesystem::path(path).parent_path(); !up.empty(); up = up.parent_path()) {
      if (::stat(up.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::access(up.c_str(), X_OK) != 0) {
        return fmt::format("cannot be examined: folder {} may not be searched ({})", printable_path(up.string()),
                           std::strerror(err));
      }
      if (up == up.parent_path()) break;
    }
  }
  return fmt::format("cannot be examined: {}", std::strerror(err));
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
