// The storage suite's axes, presets and rules (docs/suite-storage.md).
#include <fmt/format.h>

#include <cstdlib>

#include "bench/core/errors.hpp"
#include "bench/core/sizes.hpp"
#include "bench/suites/storage/storage.hpp"

namespace gpubench::suites::storage {

std::string to_string(Pattern p) { return p == Pattern::Seq ? "read" : "randread"; }
std::string to_string(Io io) { return io == Io::Direct ? "direct=1" : "direct=0"; }
std::string to_string(Engine e) { return e == Engine::Uring ? "io_uring" : "psync"; }

Config to_config(const Point& point) {
  Config c;
  c.pattern = point.text("rw") == "randread" ? Pattern::Rand : Pattern::Seq;
  c.block = point.integer("bs");
  c.qd = static_cast<int>(point.integer("iodepth"));
  c.jobs = static_cast<int>(point.integer("numjobs"));
  c.io = point.integer("direct") == 1 ? Io::Direct : Io::Buffered;
  c.engine = point.text("ioengine") == "psync" ? Engine::Psync : Engine::Uring;
  c.size = point.integer("filesize");
  return c;
}

namespace {

// Cases hold jobs x qd buffers of `block` bytes: at most this much.
constexpr std::int64_t kMaxBufferBytes = std::int64_t{16} << 30;

class StorageSuite final : public Suite {
 public:
  std::string name() const override { return "storage"; }
  std::string description() const override {
    return "Storage reads of one large file as fio runs them: sequential and random blocks at a queue depth and a number of "
           "jobs, O_DIRECT or buffered, io_uring or pread; GB/s, IOPS and read latency percentiles";
  }

  // fio's option names and values (rw, bs, iodepth, numjobs, direct, ioengine, filesize), so a
  // case reads as the fio command line it compares with.
  std::vector<AxisSpec> axes() const override {
    return {
        {"rw", AxisKind::Enum, "read (each job walks its own part of the file) or randread (bs-aligned offsets drawn uniformly)", {"read", "randread"}, 1},
        {"bs", AxisKind::Int, "bytes per read (a multiple of 4096 with direct=1)", {}, 512, {}, std::int64_t{1} << 30},
        {"iodepth", AxisKind::Int, "reads in flight per job (ioengine=io_uring; psync has 1)", {}, 1, {}, 4096},
        {"numjobs", AxisKind::Int, "threads, each with its own queue", {}, 1, {}, 256},
        {"direct", AxisKind::Int, "1: O_DIRECT (the device, never the page cache); 0: buffered, through the page cache", {}, 0, {}, 1},
        {"ioengine", AxisKind::Enum, "io_uring (by liburing) or psync (pread, one read at a time)", {"io_uring", "psync"}, 1},
        {"filesize", AxisKind::Int, "bytes of the file read (generated at this size, or the first bytes of GPUBENCH_STORAGE_FILE)", {}, 4096, {}, kMaxAxisBytes},
    };
  }

  std::vector<Preset> presets() const override {
    auto p = [](std::string rw, std::string bs, std::string iodepth, std::string numjobs, std::string direct, std::string ioengine,
                std::string filesize) {
      return std::vector<std::pair<std::string, std::string>>{{"rw", rw},         {"bs", bs},          {"iodepth", iodepth},
                                                              {"numjobs", numjobs}, {"direct", direct}, {"ioengine", ioengine},
                                                              {"filesize", filesize}};
    };
    // quick: fio's four reference points (sequential 1 MiB and random 4 KiB reads, queue depth 1
    // and 32, O_DIRECT, io_uring) and psync at depth 1, over a 256 MiB file: about 15 s.
    // standard and full sweep the queue, the jobs and the block, buffered reads too, over files
    // of 1 and 4 GiB. The suite runs on the CPU device only (the host's storage).
    const auto quick = p("read,randread", "4k,1M", "1,32", "1", "1", "io_uring,psync", "256M");
    const auto standard = p("read,randread", "4k,64k,1M", "1,4,16,32,64", "1,4", "1,0", "io_uring,psync", "1G");
    const auto full = p("read,randread", "4k,16k,64k,256k,1M,4M", "1:256:x2", "1,2,4,8,16", "1,0", "io_uring,psync", "4G");
    return {{"quick", quick, quick}, {"standard", standard, standard}, {"full", full, full}};
  }

  bool applies(const DeviceInfo& device, const Point& point) const override {
    if (device.is_cuda()) return false;  // the host's storage: measured once, on the cpu device
    const Config c = to_config(point);
    // pread keeps one read in flight: a deeper queue means nothing unless asked for by name
    // (then unsupported() says why).
    if (c.engine == Engine::Psync && c.qd > 1 && !(point.given("ioengine") && point.given("iodepth"))) return false;
    // The presets cross rw and bs; fio's reference points are sequential reads of large blocks
    // and random reads of small ones, and sequential reads of 4 KiB with a deep queue say little
    // more than of 1 MiB. Given by name, every pair runs.
    if (!point.given("bs") && !point.given("rw")) {
      if (c.pattern == Pattern::Seq && c.block < (64 << 10)) return false;
      if (c.pattern == Pattern::Rand && c.block > (256 << 10)) return false;
    }
    return true;
  }

  std::optional<std::string> unsupported(const DeviceInfo& device, const Point& point) const override {
    (void)device;
    check_environment();  // a bad GPUBENCH_STORAGE_FILE or _DIR is a usage error before anything runs
    const Config c = to_config(point);
    if (c.engine == Engine::Uring && !have_uring()) return uring_missing_reason();
    if (c.engine == Engine::Psync && c.qd > 1) {
      return fmt::format("ioengine=psync keeps one read in flight per job: iodepth={} needs ioengine=io_uring (or more numjobs)", c.qd);
    }
    if (c.io == Io::Direct && c.block % kAlign != 0) {
      return fmt::format("bs={}: O_DIRECT reads whole 4096-byte sectors (a multiple of 4096; or direct=0)", c.block);
    }
    if (c.size < c.block * c.jobs) {
      return fmt::format("filesize={}: smaller than bs x numjobs ({} x {})", c.size, c.block, c.jobs);
    }
    return std::nullopt;
  }

  void check_sizes(const DeviceInfo& device, const Point& point) const override {
    (void)device;
    const Config c = to_config(point);
    const std::int64_t buffers = c.block * c.qd * c.jobs;  // each factor is bounded by its axis: no overflow
    if (buffers > kMaxBufferBytes) {
      throw UsageError(fmt::format("storage: bs x iodepth x numjobs = {} x {} x {} bytes of read buffers, more than {} GiB", c.block, c.qd,
                                   c.jobs, kMaxBufferBytes >> 30));
    }
  }

  std::optional<std::string> plan_note(const DeviceInfo& device, const Point& point) const override {
    (void)device;
    const Config c = to_config(point);
    if (const char* f = std::getenv(kFileEnv); f != nullptr && *f != '\0') return fmt::format("reads {}", f);
    return fmt::format("reads a {} MiB file it writes in {}", c.size >> 20,
                       std::getenv(kDirEnv) != nullptr && *std::getenv(kDirEnv) != '\0' ? std::getenv(kDirEnv) : "the temporary folder");
  }

  std::unique_ptr<Case> make_case(const DeviceInfo& device, const Point& point) const override {
    (void)device;
    return make_read_case(to_config(point));
  }

  nlohmann::ordered_json libraries() const override {
    return {{"liburing", have_uring() ? "linked (io_uring engine)" : "not built in (psync only)"}};
  }
};

}  // namespace

std::unique_ptr<Suite> make_suite() { return std::make_unique<StorageSuite>(); }

}  // namespace gpubench::suites::storage
