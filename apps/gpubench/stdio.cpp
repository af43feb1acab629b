#include "apps/gpubench/stdio.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace gpubench::app {
namespace {

std::atomic<int> g_stderr_errno{0};

// fopencookie write function: every byte is attempted; a failure is recorded and reported to
// the caller as success, so a lost diagnostic never ends a run.
ssize_t write_stderr(void*, const char* buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(STDERR_FILENO, buf + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      g_stderr_errno.store(n < 0 ? errno : EIO);
      break;
    }
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(size);
}

}  // namespace

void guard_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      const int opened = ::open("/dev/null", O_RDONLY);  // the lowest free descriptor: `fd`
      if (opened >= 0 && opened != fd) {
        ::dup2(opened, fd);
        ::close(opened);
      }
    }
  }
  cookie_io_functions_t io{};
  io.write = write_stderr;
  if (FILE* f = ::fopencookie(nullptr, "w", io)) {
    std::setvbuf(f, nullptr, _IONBF, 0);  // as stderr: unbuffered, in order with std::cerr
    stderr = f;  // glibc: stdin, stdout and stderr are assignable variables
  }
}

int finish_standard_streams(int code) {
  errno = 0;
  std::cout.flush();
  const int cout_errno = errno;
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int out_errno = errno != 0 ? errno : cout_errno;
  const bool out_failed = !flushed || std::ferror(stdout) != 0 || std::cout.fail();
  // The reader went away (`gpubench report F | head -1` with SIGPIPE ignored by the parent, as
  // Python's subprocess does): the quiet end a shell user expects, 128 + SIGPIPE, no error text.
  if (out_failed && (out_errno == EPIPE || code == 141)) return code == 0 ? 141 : code;
  if (out_failed) {
    std::fprintf(stderr, "gpubench: error: writing to standard output failed%s%s; the output is incomplete\n",
                 out_errno != 0 ? ": " : "", out_errno != 0 ? std::strerror(out_errno) : "");
  }
  const bool err_failed = g_stderr_errno.load() != 0 || std::cerr.fail();
  return (out_failed || err_failed) && code == 0 ? 1 : code;
}

}  // namespace gpubench::app
