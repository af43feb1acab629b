// The file the storage suite reads, its content, and where each job reads next.
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "bench/core/errors.hpp"
#include "bench/core/interrupt.hpp"
#include "bench/core/paths.hpp"
#include "bench/suites/dataload/io.hpp"
#include "bench/suites/storage/storage.hpp"
#include "kernels/common/random.hpp"

namespace gpubench::suites::storage {
namespace fs = std::filesystem;

std::uint64_t content_word(std::uint64_t i) { return kernels::mix64(kContentSeed + i); }

std::optional<std::int64_t> first_wrong_byte(std::uint64_t offset, const std::uint8_t* data, std::size_t size) {
  for (std::size_t at = 0; at + 8 <= size; at += 8) {
    const std::uint64_t want = content_word((offset + at) / 8);
    if (std::memcmp(data + at, &want, 8) != 0) {
      for (std::size_t b = 0; b < 8; ++b) {
        if (data[at + b] != reinterpret_cast<const std::uint8_t*>(&want)[b]) return static_cast<std::int64_t>(at + b);
      }
    }
  }
  return std::nullopt;
}

std::string filesystem_type(const fs::path& path) {
  struct statfs s {};
  if (::statfs(path.c_str(), &s) != 0) return "unknown";
  // The magic numbers of linux/magic.h, for the filesystems a dataset lives on.
  switch (static_cast<unsigned long>(s.f_type)) {
    case EXT4_SUPER_MAGIC: return "ext4";  // also ext2 and ext3: one magic
    case XFS_SUPER_MAGIC: return "xfs";
    case BTRFS_SUPER_MAGIC: return "btrfs";
    case TMPFS_MAGIC: return "tmpfs";
    case NFS_SUPER_MAGIC: return "nfs";
    case OVERLAYFS_SUPER_MAGIC: return "overlay";
    case 0x65735546: return "fuse";
    case 0x0bd00bd0: return "lustre";  // LL_SUPER_MAGIC (lustre_user.h)
    case 0x47504653: return "gpfs";    // GPFS_SUPER_MAGIC (IBM Storage Scale)
    case 0x2fc12fc1: return "zfs";
    default: return fmt::format("0x{:x}", static_cast<unsigned long>(s.f_type));
  }
}

namespace {

const char* env_value(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

void check_given_file(const fs::path& p) {
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (ec || !fs::exists(st)) throw UsageError(fmt::format("{}={}: no such file", kFileEnv, p.string()));
  if (!fs::is_regular_file(st)) throw UsageError(fmt::format("{}={}: not a regular file", kFileEnv, p.string()));
  if (::access(p.c_str(), R_OK) != 0) throw UsageError(fmt::format("{}={}: not readable", kFileEnv, p.string()));
}

fs::path generate_dir() {
  if (const char* d = env_value(kDirEnv)) return d;
  return temp_folder();
}

// The generated file: one per process, removed when the process ends (or by the interruption
// handler on a signal); killed runs' leftovers are removed at the next start.
struct Generated {
  fs::path path;
  std::int64_t bytes = 0;
  ~Generated() {
    if (path.empty()) return;
    std::error_code ec;
    fs::remove(path, ec);
    remove_interrupt_cleanup(path.string());
  }
};

// Appends content from `from` up to `to` bytes, makes it durable and drops its cached pages, so
// the first reads of a buffered case come from the device.
void extend(const fs::path& path, std::int64_t from, std::int64_t to) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw CaseSkipped(fmt::format("cannot create {}: {}", path.string(), std::strerror(errno)));
  constexpr std::size_t kChunk = 1 << 20;
  std::vector<std::uint64_t> words(kChunk / 8);
  std::string error;
  for (std::int64_t at = from; at < to && error.empty();) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::int64_t>(kChunk, to - at));
    for (std::size_t w = 0; w < n / 8; ++w) words[w] = content_word(static_cast<std::uint64_t>(at) / 8 + w);
    const ssize_t wrote = ::pwrite(fd, words.data(), n, at);
    if (wrote != static_cast<ssize_t>(n)) {
      error = wrote < 0 ? std::strerror(errno) : "short write";
      break;
    }
    at += static_cast<std::int64_t>(n);
  }
  ::close(fd);
  if (error.empty()) {
    if (auto why = dataload::evict(path)) error = *why;  // fdatasync, then POSIX_FADV_DONTNEED
  }
  if (!error.empty()) {
    throw CaseSkipped(fmt::format("cannot write the {} MiB test file {}: {}", to >> 20, path.string(), error));
  }
}

}  // namespace

void check_environment() {
  if (const char* f = env_value(kFileEnv)) check_given_file(f);
  if (const char* d = env_value(kDirEnv)) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) throw UsageError(fmt::format("{}={}: not a folder", kDirEnv, d));
    if (::access(d, W_OK) != 0) throw UsageError(fmt::format("{}={}: not writable", kDirEnv, d));
  }
}

FileInfo file_for(std::int64_t size) {
  FileInfo info;
  if (const char* f = env_value(kFileEnv)) {
    check_given_file(f);
    info.path = f;
    std::error_code ec;
    info.bytes = static_cast<std::int64_t>(fs::file_size(info.path, ec));
    if (info.bytes < size) {
      throw CaseSkipped(fmt::format("{}={} holds {} bytes, fewer than filesize={}", kFileEnv, f, info.bytes, size));
    }
    info.origin = fmt::format("{}={} (its first {} bytes)", kFileEnv, f, size);
    info.filesystem = filesystem_type(info.path);
    return info;
  }
  static std::mutex mutex;
  static Generated g;
  const std::lock_guard<std::mutex> lock(mutex);
  if (g.path.empty()) {
    const fs::path dir = generate_dir();
    remove_stale_leftovers(dir, "gpubench-storage-");
    g.path = dir / fmt::format("gpubench-storage-{}", ::getpid());
    add_interrupt_cleanup(g.path.string());
  }
  if (g.bytes < size) {
    extend(g.path, g.bytes, size);
    g.bytes = size;
  }
  info.path = g.path;
  info.bytes = g.bytes;
  info.generated = true;
  info.origin = fmt::format("generated in {} ({} bytes of position-derived content; set {} to read another file)",
                            g.path.parent_path().string(), g.bytes, kFileEnv);
  info.filesystem = filesystem_type(g.path);
  return info;
}

Offsets::Offsets(const Config& c, int job)
    : pattern_(c.pattern), block_(static_cast<std::uint64_t>(c.block)), job_(static_cast<std::uint64_t>(job)) {
  const std::uint64_t all = static_cast<std::uint64_t>(c.size) / block_;
  if (pattern_ == Pattern::Seq) {
    // Job j's part: blocks [j x all / jobs, (j + 1) x all / jobs), at least one block.
    const auto jobs = static_cast<std::uint64_t>(c.jobs);
    begin_ = job_ * all / jobs;
    blocks_ = std::max<std::uint64_t>(1, (job_ + 1) * all / jobs - begin_);
  } else {
    begin_ = 0;
    blocks_ = std::max<std::uint64_t>(1, all);
  }
}

std::uint64_t Offsets::next() {
  std::uint64_t b;
  if (pattern_ == Pattern::Seq) {
    b = begin_ + cursor_;
    cursor_ = cursor_ + 1 == blocks_ ? 0 : cursor_ + 1;
  } else {
    b = kernels::mix64(kernels::mix64(kContentSeed ^ (job_ << 32)) + cursor_++) % blocks_;
  }
  return b * block_;
}

}  // namespace gpubench::suites::storage
