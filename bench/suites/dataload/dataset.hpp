#pragma once
// The data-loading suite's dataset on disk: one JPEG file per sample, the same samples packed in
// a shard (data file + index), and token shards for language-model training.
//
//   DIR/images/00000000.jpg ...   one file per sample (any folder of .jpg/.jpeg files, searched
//                                 recursively, works too: an ImageNet subset, for example)
//   DIR/images.shard              "GBSHARD1", dataset id (u64), then the samples back to back
//   DIR/images.idx                "GBINDEX1", dataset id, data file size, count, then per sample
//                                 {offset u64, length u32, checksum u32} (little-endian)
//   DIR/tokens-u16.bin            "GBTOKENS", version u32 = 1, bytes per token u32 (2 or 4),
//   DIR/tokens-u32.bin            token count u64, vocabulary size u64, then the token ids
//   DIR/manifest.json             what `gpubench datagen` wrote, with which options
//
// An index whose dataset id differs from its data file's, or whose entries do not fit in the
// size it records, does not match its data file: an error naming both paths. A data file
// shorter than the index says (truncated after writing) leaves its last entries short: they are
// counted and skipped by the readers, not an error.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace gpubench::suites::dataload {

namespace fs = std::filesystem;

inline constexpr char kShardMagic[8] = {'G', 'B', 'S', 'H', 'A', 'R', 'D', '1'};
inline constexpr char kIndexMagic[8] = {'G', 'B', 'I', 'N', 'D', 'E', 'X', '1'};
inline constexpr char kTokensMagic[8] = {'G', 'B', 'T', 'O', 'K', 'E', 'N', 'S'};
inline constexpr std::uint64_t kShardHeaderBytes = 16;
inline constexpr std::uint64_t kTokensHeaderBytes = 32;

// FNV-1a (64-bit) folded to 32 bits: the per-entry checksum of the shard index.
std::uint32_t checksum32(const void* data, std::size_t size);

struct ShardEntry {
  std::uint64_t offset = 0;  // in the data file
  std::uint32_t length = 0;
  std::uint32_t checksum = 0;
};

struct ShardIndex {
  std::uint64_t dataset_id = 0;
  std::uint64_t data_bytes = 0;  // the data file's size when written
  std::vector<ShardEntry> entries;
};

// Writes `samples` to `data` and its index to `index` (both replaced atomically).
void write_shard(const fs::path& data, const fs::path& index, std::uint64_t dataset_id,
                 const std::vector<std::string>& samples);

// Reads and checks an index against its data file. Throws UsageError naming the path when
// either is missing or unreadable, or they do not match (see above).
ShardIndex read_shard_index(const fs::path& index, const fs::path& data);

// Entries of `index` that the data file (now `data_size` bytes) no longer holds in full.
std::int64_t short_entries(const ShardIndex& index, std::uint64_t data_size);

struct TokenShard {
  int token_bytes = 0;           // 2 (uint16) or 4 (uint32)
  std::uint64_t declared = 0;    // tokens the header announces
  std::uint64_t present = 0;     // tokens the file holds in full (short when < declared)
  std::uint64_t vocab = 0;
};
void write_tokens(const fs::path& path, int token_bytes, std::uint64_t vocab, std::uint64_t count, std::uint64_t seed);
// Throws UsageError naming the path for a missing file or a bad header; a short body is reported
// through `present`.
TokenShard read_tokens_header(const fs::path& path);
// Token i of a token shard as generated (Zipf-like: id = floor(vocab^u) - 1, u uniform), for tests.
std::uint64_t token_value(std::uint64_t seed, std::uint64_t vocab, std::uint64_t i);

// A dataset folder as the suite reads it.
struct Dataset {
  fs::path dir;
  std::vector<fs::path> files;  // the JPEG files, sorted
  fs::path shard_data, shard_index;
  bool has_shard = false;
  ShardIndex index;             // when has_shard
  std::string warning;          // what is odd about the folder (an unfinished datagen), said once
};

// Opens DIR: UsageError naming the path when it is missing, not a folder, holds no JPEG file,
// or holds a shard whose index does not match its data file.
Dataset open_dataset(const fs::path& dir);

// Reads a whole file into a string; throws std::runtime_error naming it on failure.
std::string read_file(const fs::path& path);
// Writes `bytes` to `path` through a temporary file and a rename; std::runtime_error with the
// system's reason (the temporary file removed) when the disk refuses.
void write_file_atomic(const fs::path& path, const void* data, std::size_t size);

}  // namespace gpubench::suites::dataload
