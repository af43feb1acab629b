// The bounded reader of input files (see input_file.hpp).
#include "reports/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "bench/core/path_text.hpp"

namespace gpubench::reports {
namespace {

// "WHAT PATH: WHY", as the readers said before ("spec sheet F: cannot open ..."); WHAT may be empty.
[[noreturn]] void refuse(std::string_view what, const std::string& path, const std::string& why) {
  throw UsageError(fmt::format("{}{}{}: {}", what, what.empty() ? "" : " ", printable_path(path), why));
}

}  // namespace

std::string read_input_file(const std::filesystem::path& path, std::string_view what, std::uintmax_t max_bytes, bool stdin_ok) {
  const std::string text = path.string();
  auto fail = [&](const std::string& why) { refuse(what, text, why); };
  int fd = -1;
  if (text == "-" && stdin_ok) {
    fd = ::dup(STDIN_FILENO);
  } else {
    if (text.empty()) throw UsageError(fmt::format("{}: empty path", what));
    // O_NONBLOCK: opening a FIFO with no writer must not wait; cleared below for a regular file.
    fd = ::open(text.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      const int err = errno;
      // What is there instead of a readable file: nothing, a dangling link, a part that is no folder.
      if (err == ENOENT || err == ENOTDIR) fail(fmt::format("cannot open: it {}", describe_path(text)));
      fail(fmt::format("cannot open ({})", std::strerror(err)));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      fail(fmt::format("cannot open: it {}, and inputs are regular files", describe_path(text)));
    }
    if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
      ::close(fd);
      fail(fmt::format("{} bytes, more than the {} MiB an input may have", st.st_size, max_bytes >> 20));
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  }
  if (fd < 0) fail(fmt::format("cannot read: {}", std::strerror(errno)));
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      fail(fmt::format("read failed: {}", std::strerror(err)));
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {  // a file growing while read, or stdin
      ::close(fd);
      fail(fmt::format("more than the {} MiB an input may have", max_bytes >> 20));
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace gpubench::reports
