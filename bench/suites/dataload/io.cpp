#include "bench/suites/dataload/io.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "bench/core/errors.hpp"

namespace gpubench::suites::dataload {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;  // x86-64 and arm64 (4 KiB pages) THP size

std::size_t round_up(std::size_t n) { return (n + kDirectAlign - 1) / kDirectAlign * kDirectAlign; }

int open_for(const char* path, IoMode mode) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC | (mode == IoMode::Direct ? O_DIRECT : 0));
  if (fd < 0 && mode == IoMode::Direct && errno == EINVAL) {
    throw CaseSkipped(fmt::format("O_DIRECT is not supported by the filesystem holding {}", path));
  }
  return fd;
}

// Reads [offset, offset + length) completely (pread loops over short reads); false on EOF or error.
bool pread_all(int fd, std::uint8_t* dst, std::size_t length, std::uint64_t offset, std::size_t* got = nullptr) {
  std::size_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, dst + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (got) *got = done;
  return done == length;
}

}  // namespace

void ReadBuffer::Free::operator()(std::uint8_t* p) const { std::free(p); }

std::uint8_t* ReadBuffer::reserve(std::size_t bytes) {
  if (bytes > capacity_) {
    std::size_t cap = round_up(bytes + bytes / 2);
    // A buffer of 1 MiB or more is whole 2 MiB transparent huge pages (MADV_HUGEPAGE; THP's
    // `madvise` mode suffices), so a large O_DIRECT read lands in a few physically contiguous
    // runs, not in up to 256 scattered pages: a virtual disk pays per segment (on the build VM a
    // 1 MiB read into 256 runs went at 0.6 of one into 33; docs/suite-storage.md, "Against fio").
    std::size_t align = kDirectAlign;
    if (cap >= (std::size_t{1} << 20)) {
      align = kHugePage;
      cap = (cap + kHugePage - 1) / kHugePage * kHugePage;
    }
    void* p = std::aligned_alloc(align, cap);
    if (p == nullptr) throw std::bad_alloc();
    if (align == kHugePage) (void)::madvise(p, cap, MADV_HUGEPAGE);  // advice only: refused, small pages
    data_.reset(static_cast<std::uint8_t*>(p));
    capacity_ = cap;
  }
  return data_.get();
}

ReadResult read_whole_file(const std::filesystem::path& path, IoMode mode, ReadBuffer& buffer) {
  ReadResult r;
  const int fd = open_for(path.c_str(), mode);
  if (fd < 0) return r;
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    // O_DIRECT reads whole aligned blocks: ask for the rounded-up length and accept the short
    // read at the end of the file.
    const std::size_t want = mode == IoMode::Direct ? round_up(size) : size;
    std::uint8_t* dst = buffer.reserve(want + 1);
    std::size_t got = 0;
    (void)pread_all(fd, dst, want, 0, &got);
    r = {dst, std::min(got, size), got >= size};
    if (mode == IoMode::Cold) (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  }
  ::close(fd);
  return r;
}

RangeFile::RangeFile(const std::filesystem::path& path, IoMode mode) : mode_(mode), path_(path.string()) {
  fd_ = open_for(path_.c_str(), mode);
  if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open {}: {}", path_, std::strerror(errno)));
}

RangeFile::~RangeFile() {
  if (fd_ >= 0) ::close(fd_);
}

ReadResult RangeFile::read(std::uint64_t offset, std::size_t length, ReadBuffer& buffer) {
  ReadResult r;
  if (mode_ == IoMode::Direct) {
    const std::uint64_t start = offset / kDirectAlign * kDirectAlign;
    const std::size_t span = round_up(static_cast<std::size_t>(offset - start) + length);
    std::uint8_t* dst = buffer.reserve(span);
    std::size_t got = 0;
    (void)pread_all(fd_, dst, span, start, &got);
    const std::size_t skip = static_cast<std::size_t>(offset - start);
    r = {dst + skip, got > skip ? std::min(got - skip, length) : 0, got >= skip + length};
    return r;
  }
  std::uint8_t* dst = buffer.reserve(length);
  std::size_t got = 0;
  r.ok = pread_all(fd_, dst, length, offset, &got);
  r.data = dst;
  r.size = got;
  if (mode_ == IoMode::Cold) (void)::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_DONTNEED);
  return r;
}

std::optional<std::string> evict(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fmt::format("cannot open {}: {}", path.string(), std::strerror(errno));
  (void)::fdatasync(fd);  // dirty pages (a freshly written dataset) are not dropped
  const int rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  if (rc != 0) return fmt::format("posix_fadvise(DONTNEED) on {}: {}", path.string(), std::strerror(rc));
  return std::nullopt;
}

std::optional<double> resident_fraction(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<double> out;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map != MAP_FAILED) {
      const long page = ::sysconf(_SC_PAGESIZE);
      const std::size_t pages = (size + static_cast<std::size_t>(page) - 1) / static_cast<std::size_t>(page);
      std::vector<unsigned char> vec(pages);
      if (::mincore(map, size, vec.data()) == 0) {
        std::size_t resident = 0;
        for (unsigned char v : vec) resident += v & 1;
        out = static_cast<double>(resident) / static_cast<double>(pages);
      }
      ::munmap(map, size);
    }
  }
  ::close(fd);
  return out;
}

}  // namespace gpubench::suites::dataload
