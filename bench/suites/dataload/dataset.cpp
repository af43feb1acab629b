#include "bench/suites/dataload/dataset.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <system_error>

#include "bench/core/errors.hpp"
#include "bench/core/path_text.hpp"
#include "kernels/common/random.hpp"

namespace gpubench::suites::dataload {
namespace {

template <typename T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // little-endian hosts only (x86-64, aarch64)
  out.append(b, sizeof(T));
}

template <typename T>
T get(const std::string& in, std::size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof(T));
  return v;
}

std::uint64_t file_size_or_throw(const fs::path& p, const char* what) {
  std::error_code ec;
  // A folder or a FIFO in place of the file: say what is there, not the errno of file_size.
  if (!fs::is_regular_file(p, ec)) {
    const std::string is = describe_path(p.string());
    throw UsageError(fmt::format("{} {}: it {}{}", what, p.string(), is, is.rfind("is ", 0) == 0 ? ", not a regular file" : ""));
  }
  const auto size = fs::file_size(p, ec);
  if (ec) throw UsageError(fmt::format("{} {}: {}", what, p.string(), ec.message()));
  return size;
}

}  // namespace

std::uint32_t checksum32(const void* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return static_cast<std::uint32_t>(h ^ (h >> 32));
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open {}", path.string()));
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error(fmt::format("cannot read {}", path.string()));
  return s;
}

void write_file_atomic(const fs::path& path, const void* data, std::size_t size) {
  // A failed write is the machine's (a full disk, a quota), not a usage error: runtime_error
  // (exit 1), with the system's reason, and the temporary file removed.
  const fs::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
  const char* p = static_cast<const char*>(data);
  std::size_t done = 0;
  int err = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  std::error_code ec;
  if (err == 0) fs::rename(tmp, path, ec);
  if (err != 0 || ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), err != 0 ? std::strerror(err) : ec.message()));
  }
}

void write_shard(const fs::path& data, const fs::path& index, std::uint64_t dataset_id,
                 const std::vector<std::string>& samples) {
  std::string d(kShardMagic, 8), x(kIndexMagic, 8);
  put(d, dataset_id);
  std::uint64_t size = kShardHeaderBytes;
  for (const std::string& s : samples) size += s.size();
  put(x, dataset_id);
  put(x, size);
  put(x, static_cast<std::uint64_t>(samples.size()));
  d.reserve(size);
  for (const std::string& s : samples) {
    put(x, static_cast<std::uint64_t>(d.size()));
    put(x, static_cast<std::uint32_t>(s.size()));
    put(x, checksum32(s.data(), s.size()));
    d += s;
  }
  write_file_atomic(data, d.data(), d.size());
  write_file_atomic(index, x.data(), x.size());
}

ShardIndex read_shard_index(const fs::path& index, const fs::path& data) {
  (void)file_size_or_throw(index, "shard index");
  const std::uint64_t data_size = file_size_or_throw(data, "shard data file");
  const std::string x = read_file(index);
  const std::string mismatch = fmt::format("shard index {} does not match its data file {}", index.string(), data.string());
  if (x.size() < 32 || std::memcmp(x.data(), kIndexMagic, 8) != 0) {
    throw UsageError(fmt::format("shard index {}: not a gpubench shard index (bad header)", index.string()));
  }
  ShardIndex out;
  out.dataset_id = get<std::uint64_t>(x, 8);
  out.data_bytes = get<std::uint64_t>(x, 16);
  const std::uint64_t count = get<std::uint64_t>(x, 24);
  if (count > (x.size() - 32) / 16 || x.size() != 32 + count * 16) {
    throw UsageError(fmt::format("shard index {}: {} bytes do not hold the {} entries it announces", index.string(),
                                 x.size(), count));
  }
  char head[kShardHeaderBytes] = {};
  {
    std::ifstream in(data, std::ios::binary);
    in.read(head, sizeof head);
    if (in.gcount() != static_cast<std::streamsize>(sizeof head) || std::memcmp(head, kShardMagic, 8) != 0) {
      throw UsageError(fmt::format("shard data file {}: not a gpubench shard (bad header)", data.string()));
    }
  }
  std::uint64_t id;
  std::memcpy(&id, head + 8, 8);
  if (id != out.dataset_id) {
    throw UsageError(fmt::format("{}: dataset id {:016x} in the index, {:016x} in the data file", mismatch,
                                 out.dataset_id, id));
  }
  if (data_size > out.data_bytes) {
    throw UsageError(fmt::format("{}: the data file has {} bytes, the index describes {}", mismatch, data_size,
                                 out.data_bytes));
  }
  out.entries.resize(count);
  std::uint64_t end = kShardHeaderBytes;
  for (std::uint64_t i = 0; i < count; ++i) {
    ShardEntry& e = out.entries[i];
    e.offset = get<std::uint64_t>(x, 32 + 16 * i);
    e.length = get<std::uint32_t>(x, 40 + 16 * i);
    e.checksum = get<std::uint32_t>(x, 44 + 16 * i);
    if (e.offset < end || e.offset + e.length > out.data_bytes) {
      throw UsageError(fmt::format("{}: entry {} (offset {}, {} bytes) lies outside the {} bytes of data", mismatch, i,
                                   e.offset, e.length, out.data_bytes));
    }
    end = e.offset + e.length;
  }
  return out;
}

std::int64_t short_entries(const ShardIndex& index, std::uint64_t data_size) {
  std::int64_t n = 0;
  for (const ShardEntry& e : index.entries) n += e.offset + e.length > data_size ? 1 : 0;
  return n;
}

std::uint64_t token_value(std::uint64_t seed, std::uint64_t vocab, std::uint64_t i) {
  // Word frequencies fall off roughly as 1/rank (Zipf); ids spread log-uniformly over the
  // vocabulary give that shape: P(id <= k) = log(k + 1) / log(vocab).
  const double u = (kernels::uniform_value(seed, i) + 1.0) * 0.5;
  const auto id = static_cast<std::uint64_t>(std::exp(u * std::log(static_cast<double>(vocab)))) - 1;
  return std::min(id, vocab - 1);
}

void write_tokens(const fs::path& path, int token_bytes, std::uint64_t vocab, std::uint64_t count, std::uint64_t seed) {
  std::string out(kTokensMagic, 8);
  put(out, std::uint32_t{1});
  put(out, static_cast<std::uint32_t>(token_bytes));
  put(out, count);
  put(out, vocab);
  out.reserve(kTokensHeaderBytes + count * static_cast<std::uint64_t>(token_bytes));
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t t = token_value(seed, vocab, i);
    if (token_bytes == 2) put(out, static_cast<std::uint16_t>(t));
    else put(out, static_cast<std::uint32_t>(t));
  }
  write_file_atomic(path, out.data(), out.size());
}

TokenShard read_tokens_header(const fs::path& path) {
  const std::uint64_t size = file_size_or_throw(path, "token shard");
  std::ifstream in(path, std::ios::binary);
  std::string h(kTokensHeaderBytes, '\0');
  in.read(h.data(), static_cast<std::streamsize>(h.size()));
  if (in.gcount() != static_cast<std::streamsize>(h.size()) || std::memcmp(h.data(), kTokensMagic, 8) != 0 ||
      get<std::uint32_t>(h, 8) != 1) {
    throw UsageError(fmt::format("token shard {}: not a gpubench token shard (bad header)", path.string()));
  }
  TokenShard t;
  t.token_bytes = static_cast<int>(get<std::uint32_t>(h, 12));
  if (t.token_bytes != 2 && t.token_bytes != 4) {
    throw UsageError(fmt::format("token shard {}: {} bytes per token (expected 2 or 4)", path.string(), t.token_bytes));
  }
  t.declared = get<std::uint64_t>(h, 16);
  t.vocab = get<std::uint64_t>(h, 24);
  t.present = std::min(t.declared, (size - kTokensHeaderBytes) / static_cast<std::uint64_t>(t.token_bytes));
  return t;
}

Dataset open_dataset(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    // "does not exist", or what is there instead of a folder ("is a regular file, not a folder").
    const std::string what = describe_path(dir.string());
    throw UsageError(fmt::format("dataset {}: it {}{}", dir.string(), what,
                                 what.rfind("is ", 0) == 0 ? ", not a folder" : " (no such folder)"));
  }
  Dataset d;
  d.dir = dir;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) throw UsageError(fmt::format("dataset {}: {}", dir.string(), ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw UsageError(fmt::format("dataset {}: {}", dir.string(), ec.message()));
    std::string ext = it->path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if ((ext == ".jpg" || ext == ".jpeg") && it->is_regular_file(ec)) d.files.push_back(it->path());
  }
  std::sort(d.files.begin(), d.files.end());
  // A gpubench datagen folder writes manifest.json last: its shard or images/ without one is a
  // generation that did not finish (interrupted, a full disk), which is used, but said.
  if ((fs::exists(dir / "images.shard", ec) || fs::is_directory(dir / "images", ec)) && !fs::exists(dir / "manifest.json", ec)) {
    d.warning = fmt::format("dataset {}: no manifest.json beside its images: a gpubench datagen that did not finish? "
                            "(regenerate it with `gpubench datagen --out {}`)",
                            dir.string(), dir.string());
  }
  if (d.files.empty()) {
    throw UsageError(fmt::format("dataset {}: no .jpg or .jpeg file in it (make one with `gpubench datagen --out {}`)",
                                 dir.string(), dir.string()));
  }
  d.shard_data = dir / "images.shard";
  d.shard_index = dir / "images.idx";
  if (fs::exists(d.shard_data, ec) || fs::exists(d.shard_index, ec)) {
    d.index = read_shard_index(d.shard_index, d.shard_data);
    d.has_shard = true;
  }
  return d;
}

}  // namespace gpubench::suites::dataload
