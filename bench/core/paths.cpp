#include "paths.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "errors.hpp"
#include "path_text.hpp"
#include "interrupt.hpp"
#include "results.hpp"

namespace gpubench {
namespace fs = std::filesystem;
namespace {

// Room the temporary file beside an output needs in its name: ".tmp" and a pid (results.cpp).
constexpr std::size_t kTempSuffixRoom = 16;

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t extra = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[extra] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
    i += extra + 1;
  }
  return true;
}


[[noreturn]] void refuse(std::string_view option, const std::string& path, const std::string& why) {
  throw UsageError(fmt::format("{} '{}': {}", option, printable_path(path), why));
}

// Checks of the text itself, shared by files and folders.
void check_text(const std::string& text, std::string_view option) {
  if (text.empty()) throw UsageError(fmt::format("{}: empty path", option));
  if (!valid_utf8(text)) refuse(option, text, "not valid UTF-8 (results and reports record their paths as JSON text)");
  if (text.size() >= PATH_MAX) refuse(option, text, fmt::format("longer than {} bytes (PATH_MAX)", PATH_MAX - 1));
  for (const fs::path& part : fs::path(text)) {
    if (part.string().size() > NAME_MAX) {
      refuse(option, text, fmt::format("a name in it is longer than {} bytes (NAME_MAX)", NAME_MAX));
    }
  }
}

// The folder `dir` (where an output goes) exists and is writable, or can be created: its
// deepest existing ancestor is a writable folder. Checks the free space there.
void check_folder(const fs::path& dir, std::string_view option, const std::string& shown) {
  fs::path existing = dir.empty() ? fs::path(".") : dir;
  struct stat st {};
  while (::stat(existing.c_str(), &st) != 0) {
    // ENOTDIR: a part above is no folder; walking up finds it, and the check below names it.
    if (errno != ENOENT && errno != ENOTDIR) {  // a folder above that may not be searched
      refuse(option, shown, fmt::format("{} {}", printable_path(existing.string()), describe_path(existing.string())));
    }
    fs::path parent = existing.parent_path();
    if (parent.empty()) parent = existing.is_absolute() ? fs::path("/") : fs::path(".");
    if (parent == existing) refuse(option, shown, "no folder of the path exists");
    existing = parent;
  }
  if (!S_ISDIR(st.st_mode)) {
    refuse(option, shown, fmt::format("{} {}, not a folder", printable_path(existing.string()), describe_path(existing.string())));
  }
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    refuse(option, shown, fmt::format("folder {} is not writable: {}", printable_path(existing.string()), std::strerror(errno)));
  }
  std::error_code ec;
  const fs::space_info space = fs::space(existing, ec);
  if (!ec && space.available < kMinFreeBytes) {
    refuse(option, shown, fmt::format("only {} KiB free in {}; outputs need room", space.available / 1024,
                                      printable_path(existing.string())));
  }
}

}  // namespace


void validate_output_file(const fs::path& path, std::string_view option) {
  const std::string text = path.string();
  check_text(text, option);
  if (text.back() == '/') refuse(option, text, "ends with '/': give a file name, not a folder");
  const std::string name = path.filename().string();
  if (name == "." || name == "..") refuse(option, text, "names a folder; give a file name");
  if (name.size() + kTempSuffixRoom > NAME_MAX) {
    refuse(option, text, fmt::format("file name longer than {} bytes (NAME_MAX less room for the temporary file "
                                     "written beside it)",
                                     NAME_MAX - kTempSuffixRoom));
  }
  struct stat st {};
  if (::stat(text.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) refuse(option, text, describe_path(text) + "; give a file name");
    if (!S_ISREG(st.st_mode)) {
      refuse(option, text, fmt::format("exists and {}; gpubench writes only regular files (it replaces them whole)",
                                       describe_path(text)));
    }
    if (::access(text.c_str(), W_OK) != 0) {
      refuse(option, text, fmt::format("{}, not writable: {}", describe_path(text), std::strerror(errno)));
    }
  } else if (errno != ENOENT && errno != ENOTDIR) {  // ENOTDIR: check_folder names the part that is no folder
    refuse(option, text, describe_path(text));
  }
  check_folder(path.has_parent_path() ? path.parent_path() : fs::path("."), option, text);
}

void validate_output_folder(const fs::path& path, std::string_view option) {
  const std::string text = path.string();
  check_text(text, option);
  check_folder(path, option, text);
}

void make_folders(const fs::path& dir, std::string_view option) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    refuse(option, dir.string(),
           fmt::format("cannot create the folder: {}", ec ? ec.message() : "it " + describe_path(dir.string())));
  }
}

namespace {

// The path as the file system sees it: symlinks of the existing part followed, the rest appended.
fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p).lexically_normal() : r;
}

bool inside(const fs::path& path, const fs::path& folder) {
  auto f = folder.begin(), p = path.begin();
  for (; f != folder.end(); ++f, ++p) {
    if (f->empty()) continue;  // a trailing '/' of the folder
    if (p == path.end() || *p != *f) return false;
  }
  return p != path.end();
}

}  // namespace

pid_t lock_holder(const fs::path& path) {
  const std::string lock = path.string() + ".lock";
  const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return 0;
  pid_t holder = 0;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    holder = n > 0 ? static_cast<pid_t>(std::atol(buf)) : 0;
    if (holder <= 0) holder = -1;  // held, by a pid not yet written
  }
  ::close(fd);  // releases the shared lock if it was taken
  return holder;
}

void check_path_clashes(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs) {
  std::vector<fs::path> in_paths, out_paths;
  for (const NamedPath& i : inputs) in_paths.push_back(resolved(i.path));
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const NamedPath& out = outputs[o];
    const fs::path r = resolved(out.path);
    const std::string shown = out.path.string();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (r == in_paths[i]) {
        refuse(out.option, shown, fmt::format("is also an input ({} '{}'); nothing was written", inputs[i].option,
                                              printable_path(inputs[i].path.string())));
      }
      std::error_code ec;
      if (fs::is_directory(in_paths[i], ec) && inside(r, in_paths[i])) {
        refuse(out.option, shown, fmt::format("is inside an input folder ({} '{}'), where the next read would find it; "
                                              "nothing was written",
                                              inputs[i].option, printable_path(inputs[i].path.string())));
      }
    }
    for (std::size_t k = 0; k < o; ++k) {
      if (r == out_paths[k]) {
        refuse(out.option, shown, fmt::format("is also written as {} '{}'; each output needs its own path", outputs[k].option,
                                              printable_path(outputs[k].path.string())));
      }
    }
    out_paths.push_back(r);
    if (const pid_t holder = lock_holder(r); holder != 0) {
      refuse(out.option, shown,
             holder > 0 ? fmt::format("another gpubench (pid {}) is writing this file; nothing was written", holder)
                        : std::string("another gpubench is writing this file; nothing was written"));
    }
  }
}

void refuse_repeated_inputs(const std::vector<NamedPath>& inputs) {
  std::vector<fs::path> seen;
  for (const NamedPath& i : inputs) {
    const fs::path r = resolved(i.path);
    if (std::find(seen.begin(), seen.end(), r) != seen.end()) {
      refuse(i.option, i.path.string(), "is given twice (its runs would be counted twice)");
    }
    seen.push_back(r);
  }
}

fs::path temp_folder() {
  const char* env = std::getenv("TMPDIR");
  const bool from_env = env != nullptr && *env != '\0';
  const std::string dir = from_env ? env : "/tmp";
  const std::string name = from_env ? fmt::format("TMPDIR '{}'", printable_path(dir)) : std::string("/tmp");
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    throw UsageError(fmt::format("{}: {} ({}); temporary files need a writable folder (set TMPDIR to one)", name,
                                 describe_path(dir), std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw UsageError(fmt::format("{}: {}, not a folder (set TMPDIR to a writable folder)", name, describe_path(dir)));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw UsageError(fmt::format("{}: not writable: {} (set TMPDIR to a writable folder)", name, std::strerror(errno)));
  }
  return dir;
}

bool process_gone(pid_t pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH; }

int remove_stale_leftovers(const fs::path& dir, const std::string& prefix) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || !process_gone(pid)) continue;
    std::error_code rm;
    if (fs::remove_all(it->path(), rm) > 0 && !rm) ++removed;
  }
  return removed;
}

OutputLock::OutputLock(const fs::path& path, std::string_view option) : lock_path_(path.string() + ".lock") {
  // Up to a few tries: a holder that is releasing unlinks the file we may have just opened.
  for (int attempt = 0; attempt < 5; ++attempt) {
    const int fd = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) refuse(option, path.string(), fmt::format("cannot create its lock file: {}", std::strerror(errno)));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      char buf[32] = {};
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      ::close(fd);
      if (err == EWOULDBLOCK) {
        std::string holder = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
        holder = holder.substr(0, holder.find_first_not_of("0123456789"));
        refuse(option, path.string(),
               fmt::format("another gpubench run (pid {}) is writing this results file; give another path or wait "
                           "for it to end",
                           holder.empty() ? "?" : holder));
      }
      refuse(option, path.string(), fmt::format("cannot lock it: {}", std::strerror(err)));
    }
    struct stat held {}, now {};
    if (::fstat(fd, &held) == 0 && ::stat(lock_path_.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev) {
      const std::string pid = std::to_string(::getpid());
      if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        // The lock holds without the pid in it; only the refusal message of another run loses it.
      }
      fd_ = fd;
      add_interrupt_cleanup(lock_path_);
      return;
    }
    ::close(fd);
  }
  refuse(option, path.string(), "cannot lock it: its lock file keeps changing");
}

OutputLock::~OutputLock() { release(); }

OutputLock::OutputLock(OutputLock&& other) noexcept : fd_(other.fd_), lock_path_(std::move(other.lock_path_)) {
  other.fd_ = -1;
  other.lock_path_.clear();
}

OutputLock& OutputLock::operator=(OutputLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    lock_path_ = std::move(other.lock_path_);
    other.fd_ = -1;
    other.lock_path_.clear();
  }
  return *this;
}

void OutputLock::release() {
  if (fd_ < 0) return;
  // Unlink while still holding it: a run waiting on this file then finds it gone and retries.
  remove_interrupt_cleanup(lock_path_);
  ::unlink(lock_path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace gpubench
