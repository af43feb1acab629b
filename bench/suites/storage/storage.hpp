#pragma once
// The `storage` suite: reads of one large file as fio measures them (docs/suite-storage.md):
// sequential or random blocks, at a queue depth per job and a number of jobs, around the page
// cache (O_DIRECT) or through it, by io_uring (liburing, where the build found it) or by
// synchronous pread. GB/s, IOPS and the latency of every read (p50 .. p99.9).
//
// Files: storage_file (the file read: generated here with known content, or GPUBENCH_STORAGE_FILE),
// reader (the two engines, one job each), read_case (the case: jobs over a pool of threads, the
// latencies), storage_suite (axes, presets, rules).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/suite.hpp"

namespace gpubench::suites::storage {

std::unique_ptr<Suite> make_suite();

inline constexpr const char* kFileEnv = "GPUBENCH_STORAGE_FILE";  // read this file (never written)
inline constexpr const char* kDirEnv = "GPUBENCH_STORAGE_DIR";    // generate the file here (else TMPDIR)
// O_DIRECT's alignment of buffers, offsets and lengths (4 KiB covers 512 B and 4 KiB sectors).
inline constexpr std::int64_t kAlign = 4096;
inline constexpr std::uint64_t kContentSeed = 0x5701a6e;

enum class Pattern { Seq, Rand };
enum class Io { Direct, Buffered };
enum class Engine { Uring, Psync };

struct Config {
  Pattern pattern = Pattern::Seq;
  std::int64_t block = 1 << 20;  // bytes per read
  int qd = 1;                    // reads in flight per job
  int jobs = 1;                  // threads, each with its own queue and its own part of the file
  Io io = Io::Direct;
  Engine engine = Engine::Uring;
  std::int64_t size = 256 << 20;  // bytes of the file read
};
Config to_config(const Point& point);
std::string to_string(Pattern p);
std::string to_string(Io io);
std::string to_string(Engine e);

// Whether this build has the io_uring engine (liburing found at configure time), and why not.
bool have_uring();
std::string uring_missing_reason();

// ---- the file -------------------------------------------------------------------------------

// The 8-byte word at byte offset 8 x i of a generated file: position-derived, so any block can
// be checked alone and the file extended without rewriting it.
std::uint64_t content_word(std::uint64_t i);
// Whether `size` bytes at `offset` (both multiples of 8) hold the generated content; else the
// first wrong byte's offset within the range.
std::optional<std::int64_t> first_wrong_byte(std::uint64_t offset, const std::uint8_t* data, std::size_t size);

struct FileInfo {
  std::filesystem::path path;
  std::int64_t bytes = 0;      // its size (at least the case's `size`)
  bool generated = false;      // written by this process with content_word (else GPUBENCH_STORAGE_FILE)
  std::string origin;          // how it was chosen, for the results
  std::string filesystem;      // statfs type name (ext4, xfs, tmpfs, nfs, ...)
};
// The file a case of `size` bytes reads: GPUBENCH_STORAGE_FILE (UsageError if it is missing,
// not a regular file or unreadable; CaseSkipped if smaller than `size`), else one generated file
// per process in GPUBENCH_STORAGE_DIR or the temporary folder, extended as larger cases need,
// its pages dropped from the page cache after writing, removed at exit or on a signal.
FileInfo file_for(std::int64_t size);
// The filesystem type of the folder or file at `path` ("unknown" when statfs fails).
std::string filesystem_type(const std::filesystem::path& path);
// Cheap checks for planning: GPUBENCH_STORAGE_FILE and GPUBENCH_STORAGE_DIR when set.
void check_environment();

// ---- offsets --------------------------------------------------------------------------------

// Where job `job` of `jobs` reads next: sequential jobs walk their own contiguous part of the
// first `size` bytes (wrapping at its end), random ones draw block-aligned offsets uniformly over
// all of it (the counter generator over seed, job and draw).
class Offsets {
 public:
  Offsets(const Config& c, int job);
  std::uint64_t next();

 private:
  Pattern pattern_;
  std::uint64_t block_, begin_, blocks_, cursor_ = 0, job_;
};

// ---- the engines ----------------------------------------------------------------------------

// Called with each completed read's offset and bytes (verification only).
using CheckRead = std::function<void(std::uint64_t offset, const std::uint8_t* data, std::size_t size)>;

// One job: reads `block` bytes at the next offsets, `qd` of them in flight (io_uring: the queue
// stays full between calls, as in one continuous fio run) or one at a time (psync).
class Reader {
 public:
  virtual ~Reader() = default;
  // Returns after `n` more reads have completed (io_uring: the qd in flight carry on); appends each one's
  // latency (seconds from its submission to its reaped completion) to `latencies`. Throws
  // std::runtime_error on an I/O error or a short read.
  virtual void complete(std::int64_t n, std::vector<float>& latencies, const CheckRead* check) = 0;
};
// Opens `path` (O_DIRECT for Io::Direct: CaseSkipped when the filesystem refuses it) for job `job`.
std::unique_ptr<Reader> make_reader(const Config& c, const std::filesystem::path& path, int job);

// The case: jobs readers on a pool of threads (read_case.cpp).
std::unique_ptr<Case> make_read_case(const Config& c);

}  // namespace gpubench::suites::storage
