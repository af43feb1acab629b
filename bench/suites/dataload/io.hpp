#pragma once
// Storage reads as a loader does them: whole files or ranges of a shard, through the page cache
// (`cached`), through it but evicted again after every read so the next epoch reads the device
// (`cold`, posix_fadvise(POSIX_FADV_DONTNEED)), or around it (`direct`, O_DIRECT with aligned
// buffers and offsets).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace gpubench::suites::dataload {

enum class IoMode { Cached, Cold, Direct };

// 4 KiB: the alignment O_DIRECT asks of buffers, offsets and lengths on 512 B and 4 KiB sector
// devices alike (open(2), "O_DIRECT").
inline constexpr std::size_t kDirectAlign = 4096;

// A reusable aligned read buffer (one per thread).
class ReadBuffer {
 public:
  std::uint8_t* reserve(std::size_t bytes);  // at least `bytes`, aligned to kDirectAlign
  std::uint8_t* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(std::uint8_t* p) const;
  };
  std::unique_ptr<std::uint8_t, Free> data_;
  std::size_t capacity_ = 0;
};

struct ReadResult {
  const std::uint8_t* data = nullptr;  // inside the buffer
  std::size_t size = 0;
  bool ok = false;                     // false: the file or range could not be read in full
};

// Reads a whole file. Throws CaseSkipped when O_DIRECT is refused by the filesystem (tmpfs).
ReadResult read_whole_file(const std::filesystem::path& path, IoMode mode, ReadBuffer& buffer);

// An open file (a shard) read by ranges with pread.
class RangeFile {
 public:
  RangeFile(const std::filesystem::path& path, IoMode mode);
  ~RangeFile();
  RangeFile(const RangeFile&) = delete;
  RangeFile& operator=(const RangeFile&) = delete;
  ReadResult read(std::uint64_t offset, std::size_t length, ReadBuffer& buffer);
  int fd() const { return fd_; }  // for reads of its own (the storage suite's io_uring engine)

 private:
  int fd_ = -1;
  IoMode mode_;
  std::string path_;
};

// Writes back and drops a file's cached pages (fdatasync, then POSIX_FADV_DONTNEED): nullopt
// when done, else why not.
std::optional<std::string> evict(const std::filesystem::path& path);
// Share of a file's pages resident in the page cache (mmap + mincore), or nullopt if unknown.
std::optional<double> resident_fraction(const std::filesystem::path& path);

}  // namespace gpubench::suites::dataload
