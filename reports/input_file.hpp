#pragma once
// Reading an input file (results, --prices, --spec-sheet, --consumer-from, history folders): one
// reader behind every command, so none of them reads without end. Accepted: a regular file (after
// symlinks) of at most `max_bytes`, or stdin for "-" where `stdin_ok`. Refused with one line
// "WHAT PATH: why" (`what` may be empty) (UsageError, exit 2): a folder, a device such as /dev/zero, a FIFO
// (opened without waiting for a writer), a socket, a file that grows past the limit while read.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace gpubench::reports {

constexpr std::uintmax_t kMaxInputBytes = std::uintmax_t{1} << 30;  // 1 GiB: results of ~10^6 cases

std::string read_input_file(const std::filesystem::path& path, std::string_view what,
                            std::uintmax_t max_bytes = kMaxInputBytes, bool stdin_ok = false);

}  // namespace gpubench::reports
