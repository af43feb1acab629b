#pragma once
// What a path is when it is not a regular file, in words, for one-line messages ("a FIFO").
// Header-only: the output validator (paths.cpp) and the input reader (reports/input_file.cpp)
// say it the same way.
#include <sys/stat.h>

#include <string>

namespace gpubench {

inline std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace gpubench
