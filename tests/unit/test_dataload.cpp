// The dataload suite's pieces: dataset determinism, the shard index and token shards, JPEG
// corruption, the augmentation against its plain reference, the bounded queue and pipeline
// back-pressure, and the stall and summary arithmetic on synthetic timelines and entries.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "bench/suites/dataload/datagen.hpp"
#include "bench/suites/dataload/dataload.hpp"
#include "bench/suites/dataload/jpeg.hpp"
#include "bench/suites/dataload/pipeline.hpp"
#include "bench/suites/dataload/queue.hpp"
#include "bench/suites/dataload/stall.hpp"
#include "kernels/common/float_formats.hpp"
#include "kernels/common/random.hpp"
#include "test_util.hpp"

namespace gpubench::suites::dataload {
namespace {

namespace kd = kernels::dataload;
using gpubench::testing::usage_error;

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("gpubench-dl-" + std::to_string(::getpid()) + "-" + name + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::map<std::string, std::string> all_files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = read_file(e.path());
  }
  return out;
}

GenerateOptions small(const fs::path& dir, std::uint64_t seed) {
  GenerateOptions o;
  o.dir = dir;
  o.count = 6;
  o.mean_width = 96;
  o.mean_height = 72;
  o.seed = seed;
  o.tokens = 1000;
  return o;
}

TEST(DataloadDatagen, SameSeedSameBytes) {
  TempDir a("a"), b("b"), c("c");
  GenerateOptions oa = small(a.path, 5), ob = small(b.path, 5), oc = small(c.path, 6);
  ob.threads = 1;  // the thread count must not matter
  generate_dataset(oa);
  generate_dataset(ob);
  generate_dataset(oc);
  const auto fa = all_files(a.path), fb = all_files(b.path), fc = all_files(c.path);
  ASSERT_EQ(fa.size(), 6u + 5u);  // images, shard, index, 2 token shards, manifest
  EXPECT_EQ(fa, fb);
  EXPECT_NE(fa.at("images/00000000.jpg"), fc.at("images/00000000.jpg"));
  EXPECT_NE(fa.at("tokens-u16.bin"), fc.at("tokens-u16.bin"));
}

TEST(DataloadDatagen, SizesSpreadAroundTheMean) {
  GenerateOptions o;
  double area = 0;
  int portrait = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    int w = 0, h = 0;
    image_size(o, static_cast<std::uint64_t>(i), w, h);
    area += static_cast<double>(w) * h;
    portrait += h > w ? 1 : 0;
  }
  EXPECT_NEAR(area / n / (500.0 * 375.0), 1.0, 0.03);
  EXPECT_GT(portrait, n / 10);
  EXPECT_LT(portrait, n / 3);
  o.fixed_size = true;
  int w = 0, h = 0;
  image_size(o, 3, w, h);
  EXPECT_EQ(w, 500);
  EXPECT_EQ(h, 375);
}

TEST(DataloadDatagen, BadOptionsAreUsageErrors) {
  TempDir d("bad");
  GenerateOptions o = small(d.path, 1);
  o.count = 0;
  EXPECT_NE(usage_error([&] { generate_dataset(o); }).find("--count"), std::string::npos);
  o = small(d.path, 1);
  o.quality = 101;
  EXPECT_NE(usage_error([&] { generate_dataset(o); }).find("--quality"), std::string::npos);
}

TEST(DataloadShard, IndexRoundTrip) {
  TempDir d("shard");
  fs::create_directories(d.path);
  const std::vector<std::string> samples{"alpha", std::string(5000, 'x'), "", "omega!"};
  write_shard(d.path / "s.shard", d.path / "s.idx", 42, samples);
  const ShardIndex idx = read_shard_index(d.path / "s.idx", d.path / "s.shard");
  ASSERT_EQ(idx.entries.size(), samples.size());
  EXPECT_EQ(idx.dataset_id, 42u);
  const std::string data = read_file(d.path / "s.shard");
  EXPECT_EQ(idx.data_bytes, data.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const ShardEntry& e = idx.entries[i];
    EXPECT_EQ(data.substr(e.offset, e.length), samples[i]);
    EXPECT_EQ(e.checksum, checksum32(samples[i].data(), samples[i].size()));
  }
  EXPECT_EQ(short_entries(idx, data.size()), 0);
  // Truncated data: the last entries are short (counted), the index still opens.
  fs::resize_file(d.path / "s.shard", data.size() - 3);
  const ShardIndex cut = read_shard_index(d.path / "s.idx", d.path / "s.shard");
  EXPECT_EQ(short_entries(cut, data.size() - 3), 1);
}

TEST(DataloadShard, MismatchedIndexNamesThePath) {
  TempDir d("mismatch");
  fs::create_directories(d.path);
  write_shard(d.path / "a.shard", d.path / "a.idx", 1, {"one", "two"});
  write_shard(d.path / "b.shard", d.path / "b.idx", 2, {"one", "two"});
  std::string msg = usage_error([&] { read_shard_index(d.path / "a.idx", d.path / "b.shard"); });
  EXPECT_NE(msg.find((d.path / "a.idx").string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not match"), std::string::npos) << msg;
  // A data file longer than the index describes.
  { std::ofstream(d.path / "a.shard", std::ios::app) << "extra"; }
  msg = usage_error([&] { read_shard_index(d.path / "a.idx", d.path / "a.shard"); });
  EXPECT_NE(msg.find("does not match"), std::string::npos) << msg;
  msg = usage_error([&] { read_shard_index(d.path / "missing.idx", d.path / "a.shard"); });
  EXPECT_NE(msg.find("missing.idx"), std::string::npos) << msg;
  { std::ofstream(d.path / "junk.idx") << "not an index at all, no no no no no no"; }
  msg = usage_error([&] { read_shard_index(d.path / "junk.idx", d.path / "a.shard"); });
  EXPECT_NE(msg.find("junk.idx"), std::string::npos) << msg;
}

TEST(DataloadShard, TokenShardsRoundTripAndShortBodies) {
  TempDir d("tokens");
  fs::create_directories(d.path);
  write_tokens(d.path / "t16.bin", 2, 50257, 1000, 3);
  write_tokens(d.path / "t32.bin", 4, 128256, 1000, 3);
  const TokenShard t16 = read_tokens_header(d.path / "t16.bin"), t32 = read_tokens_header(d.path / "t32.bin");
  EXPECT_EQ(t16.token_bytes, 2);
  EXPECT_EQ(t32.token_bytes, 4);
  EXPECT_EQ(t16.present, 1000u);
  EXPECT_EQ(t32.vocab, 128256u);
  const std::string body = read_file(d.path / "t32.bin");
  for (std::uint64_t i : {0ull, 1ull, 999ull}) {
    std::uint32_t v;
    std::memcpy(&v, body.data() + kTokensHeaderBytes + 4 * i, 4);
    EXPECT_EQ(v, token_value(3, 128256, i));
    EXPECT_LT(v, 128256u);
  }
  fs::resize_file(d.path / "t16.bin", kTokensHeaderBytes + 2 * 600 + 1);
  EXPECT_EQ(read_tokens_header(d.path / "t16.bin").present, 600u);
  EXPECT_NE(usage_error([&] { read_tokens_header(d.path / "none.bin"); }).find("none.bin"), std::string::npos);
}

// What the dataset reader says is at a path, it is (issue 49): a regular file where the dataset
// folder goes, a folder or a FIFO where a token shard goes (a FIFO read would wait for a writer).
TEST(DataloadDataset, PathMessagesSayWhatThePathIs) {
  TempDir d("kinds");
  fs::create_directories(d.path);
  std::ofstream(d.path / "plain") << "x";
  fs::create_directories(d.path / "folder.bin");
  ASSERT_EQ(::mkfifo((d.path / "fifo.bin").c_str(), 0644), 0);
  EXPECT_EQ(usage_error([&] { open_dataset(d.path / "plain"); }),
            "dataset " + (d.path / "plain").string() + ": it is a regular file, not a folder");
  EXPECT_EQ(usage_error([&] { open_dataset(d.path / "missing"); }),
            "dataset " + (d.path / "missing").string() + ": it does not exist (no such folder)");
  EXPECT_EQ(usage_error([&] { read_tokens_header(d.path / "folder.bin"); }),
            "token shard " + (d.path / "folder.bin").string() + ": it is a folder, not a regular file");
  EXPECT_EQ(usage_error([&] { read_tokens_header(d.path / "fifo.bin"); }),
            "token shard " + (d.path / "fifo.bin").string() + ": it is a FIFO, not a regular file");
  EXPECT_EQ(usage_error([&] { read_tokens_header(d.path / "none.bin"); }),
            "token shard " + (d.path / "none.bin").string() + ": it does not exist");
}

TEST(DataloadDataset, MissingOrEmptyFolderNamesThePath) {
  TempDir d("empty");
  std::string msg = usage_error([&] { open_dataset(d.path); });
  EXPECT_NE(msg.find(d.path.string()), std::string::npos);
  EXPECT_NE(msg.find("no such folder"), std::string::npos);
  fs::create_directories(d.path);
  msg = usage_error([&] { open_dataset(d.path); });
  EXPECT_NE(msg.find("no .jpg"), std::string::npos) << msg;
}

TEST(DataloadJpeg, CorruptAndTruncatedFilesFailToDecode) {
  const std::vector<std::uint8_t> rgb = synth_image(1, 0, 120, 80);
  JpegEncoder enc;
  const std::string jpeg = enc.encode(rgb.data(), 120, 80, 90);
  JpegDecoder dec;
  DecodedImage img;
  ASSERT_TRUE(dec.decode(jpeg.data(), jpeg.size(), 1, img));
  EXPECT_EQ(img.width, 120);
  ASSERT_TRUE(dec.decode(jpeg.data(), jpeg.size(), 2, img));
  EXPECT_EQ(img.width, 60);
  EXPECT_EQ(img.height, 40);
  std::string why;
  EXPECT_FALSE(dec.decode(jpeg.data(), jpeg.size() / 2, 1, img, &why));  // truncated
  EXPECT_FALSE(why.empty());
  const std::string garbage(2000, '\x5a');
  EXPECT_FALSE(dec.decode(garbage.data(), garbage.size(), 1, img));
  // The same decoder works again after a failure (libjpeg-turbo 2.1 needed a fresh handle).
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(dec.decode(jpeg.data(), 200, 1, img));
    ASSERT_TRUE(dec.decode(jpeg.data(), jpeg.size(), 1, img));
  }
}

// Photo-like content: a JPEG at quality 90 should neither be nearly free (flat colour, well
// under 0.1 bytes/pixel) nor incompressible (white noise, several bytes/pixel).
TEST(DataloadJpeg, SyntheticContentCompressesLikeAPhoto) {
  const std::vector<std::uint8_t> rgb = synth_image(1, 0, 500, 375);
  JpegEncoder enc;
  const double bpp = static_cast<double>(enc.encode(rgb.data(), 500, 375, 90).size()) / (500.0 * 375.0);
  EXPECT_GT(bpp, 0.2);
  EXPECT_LT(bpp, 1.5);
}

// ---- augmentation -----------------------------------------------------------------------------

TEST(DataloadAugment, CropsStayInsideAndFollowTorchvisionRanges) {
  int flips = 0;
  for (std::uint64_t s = 0; s < 2000; ++s) {
    const int w = 100 + static_cast<int>(s % 400), h = 80 + static_cast<int>((s * 7) % 300);
    const kd::Crop c = kd::random_crop(9, s, w, h);
    ASSERT_GE(c.x, 0);
    ASSERT_GE(c.y, 0);
    ASSERT_LE(c.x + c.w, w);
    ASSERT_LE(c.y + c.h, h);
    const double area = static_cast<double>(c.w) * c.h / (static_cast<double>(w) * h);
    EXPECT_GT(area, 0.07);
    const double ratio = static_cast<double>(c.w) / c.h;
    if (area < 0.999) {  // a random crop (not the centre fallback)
      EXPECT_GT(ratio, 0.70);
      EXPECT_LT(ratio, 1.40);
    }
    flips += c.flip;
  }
  EXPECT_GT(flips, 850);
  EXPECT_LT(flips, 1150);
  const kd::Crop a = kd::random_crop(9, 5, 300, 200), b = kd::random_crop(9, 5, 300, 200);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.w, b.w);
}

TEST(DataloadAugment, MatchesThePlainReferenceEverywhere) {
  const int w = 157, h = 93;
  const std::vector<std::uint8_t> rgb = synth_image(4, 1, w, h);
  const kd::ImageView view{rgb.data(), w, h};
  std::vector<kd::Crop> crops{kd::random_crop(1, 0, w, h), kd::random_crop(1, 1, w, h), {0, 0, w, h, 1}, {150, 90, 7, 3, 0}};
  for (kd::OutType type : {kd::OutType::F32, kd::OutType::F16}) {
    for (const kd::Crop& c : crops) {
      std::vector<std::uint8_t> out(kd::out_bytes(type));
      kd::augment_host(view, c, type, out.data());
      double worst = 0;
      for (int ch = 0; ch < 3; ++ch) {
        for (int oy = 0; oy < kd::kAugmentSize; ++oy) {
          for (int ox = 0; ox < kd::kAugmentSize; ++ox) {
            const std::size_t i = (static_cast<std::size_t>(ch) * kd::kAugmentSize + oy) * kd::kAugmentSize + ox;
            double got;
            if (type == kd::OutType::F32) {
              float f;
              std::memcpy(&f, out.data() + 4 * i, 4);
              got = f;
            } else {
              std::uint16_t b;
              std::memcpy(&b, out.data() + 2 * i, 2);
              got = kernels::half_bits_to_float(b);
            }
            worst = std::max(worst, std::fabs(got - kd::augment_reference(view, c, ch, oy, ox)));
          }
        }
      }
      EXPECT_LE(worst, kd::augment_tolerance(type)) << "crop " << c.x << "," << c.y << " " << c.w << "x" << c.h;
    }
  }
  // The reference itself: a flat image normalizes to (v/255 - mean)/std everywhere.
  std::vector<std::uint8_t> flat(static_cast<std::size_t>(w) * h * 3, 128);
  EXPECT_NEAR(kd::augment_reference({flat.data(), w, h}, crops[0], 1, 10, 20), (128 / 255.0 - 0.456) / 0.224, 1e-6);
  // Flip: output column ox of a flipped crop is column S-1-ox of the unflipped one.
  kd::Crop c = crops[0], f = crops[0];
  c.flip = 0;
  f.flip = 1;
  EXPECT_DOUBLE_EQ(kd::augment_reference(view, f, 0, 5, 3), kd::augment_reference(view, c, 0, 5, kd::kAugmentSize - 1 - 3));
}

TEST(DataloadAugment, ChecksumIsEveryStrideWord) {
  std::vector<std::uint32_t> words(3000);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::uint32_t>(i * 3 + 1);
  EXPECT_EQ(kd::batch_checksum(words.data(), 3000), 1ull + 3073ull + 6145ull);
}

TEST(DataloadAugment, CheckAugmentedPassesTheRightTensorAndNamesAWrongValue) {
  const int w = 120, h = 90;
  const std::vector<std::uint8_t> rgb = synth_image(2, 3, w, h);
  const kd::ImageView view{rgb.data(), w, h};
  const kd::Crop crop = kd::random_crop(5, 3, w, h);
  for (kd::OutType type : {kd::OutType::F32, kd::OutType::F16}) {
    std::vector<std::uint8_t> out(kd::out_bytes(type));
    kd::augment_host(view, crop, type, out.data());
    kd::AugmentCheck ok;
    kd::check_augmented(view, crop, type, out.data(), 100, 3, ok);
    EXPECT_TRUE(ok.passed()) << ok.first_mismatch;
    EXPECT_EQ(ok.checked, 100);
    EXPECT_LE(ok.max_error, 1.0);
    // Another sample's crop: the values no longer match.
    kd::AugmentCheck bad;
    kd::check_augmented(view, kd::random_crop(5, 4, w, h), type, out.data(), 100, 3, bad);
    EXPECT_FALSE(bad.passed());
    EXPECT_GT(bad.max_error, 1.0);
    EXPECT_EQ(bad.first_mismatch.rfind("sample 3 channel ", 0), 0u) << bad.first_mismatch;
  }
}

// Pooled features: blocks of known values average to them, in both tensor types; the feature
// order is [sample][channel][gy][gx].
TEST(DataloadAugment, PoolFeaturesAveragesEachBlock) {
  const int size = 8, grid = 2, count = 2;  // 4x4 blocks
  std::vector<float> f32(static_cast<std::size_t>(count) * 3 * size * size);
  for (int n = 0; n < count; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < size; ++y) {
        for (int x = 0; x < size; ++x) {
          // Block (gy, gx) holds values averaging to n + c/4 + gy/8 + gx/16, +-0.5 in a checkerboard.
          const float mean = static_cast<float>(n) + c / 4.0f + (y / 4) / 8.0f + (x / 4) / 16.0f;
          f32[((static_cast<std::size_t>(n) * 3 + c) * size + y) * size + x] = mean + ((x + y) % 2 ? 0.5f : -0.5f);
        }
      }
    }
  }
  std::vector<std::uint16_t> f16(f32.size());
  for (std::size_t i = 0; i < f32.size(); ++i) f16[i] = kernels::float_to_half_bits(f32[i]);
  for (kd::OutType type : {kd::OutType::F32, kd::OutType::F16}) {
    std::vector<float> out(static_cast<std::size_t>(count) * kd::pooled_features(grid));
    kd::pool_features_host(type == kd::OutType::F32 ? static_cast<const void*>(f32.data()) : f16.data(), type, count,
                           grid, out.data(), size);
    for (int n = 0; n < count; ++n) {
      for (int c = 0; c < 3; ++c) {
        for (int gy = 0; gy < grid; ++gy) {
          for (int gx = 0; gx < grid; ++gx) {
            const float want = static_cast<float>(n) + c / 4.0f + gy / 8.0f + gx / 16.0f;
            EXPECT_NEAR(out[((static_cast<std::size_t>(n) * 3 + c) * grid + gy) * grid + gx], want, 2e-3)
                << n << " " << c << " " << gy << " " << gx;
          }
        }
      }
    }
  }
  EXPECT_EQ(kd::pooled_features(16), 768);
}

// The host train consumer trains the mlp on the batch's pooled images and checks its step:
// the right batch passes, another batch's tensors do not.
TEST(DataloadTrainConsumer, TrainsOnThePooledBatchAndChecksIt) {
  const int batch = 2, grid = 16;
  const kernels::train::ModelConfig m = train_consumer_model(grid, batch);
  EXPECT_EQ(m.hidden, 768);
  EXPECT_EQ(m.vocab, 1000);
  EXPECT_EQ(m.batch, batch);
  std::vector<std::uint8_t> tensors(batch * kd::out_bytes(kd::OutType::F32)), other(tensors.size());
  SampleWorker w;
  for (int s = 0; s < batch; ++s) {
    const std::vector<std::uint8_t> rgb = synth_image(7, static_cast<std::uint64_t>(s), 160, 120);
    kd::augment_host({rgb.data(), 160, 120}, kd::random_crop(1, s, 160, 120), kd::OutType::F32,
                     tensors.data() + s * kd::out_bytes(kd::OutType::F32));
    kd::augment_host({rgb.data(), 160, 120}, kd::random_crop(2, s, 160, 120), kd::OutType::F32,
                     other.data() + s * kd::out_bytes(kd::OutType::F32));
  }
  auto consumer = make_host_train_consumer(grid, batch, kd::OutType::F32);
  HostBatch b;
  b.data = tensors.data();
  b.capacity = b.bytes = tensors.size();
  b.samples = batch;
  consumer->consume(b);
  EXPECT_EQ(consumer->check_training(tensors.data(), batch), "");
  const std::string wrong = consumer->check_training(other.data(), batch);
  EXPECT_NE(wrong.find("input feature"), std::string::npos) << wrong;
  EXPECT_EQ(consumer->last_checksum(), kd::batch_checksum(tensors.data(), static_cast<std::int64_t>(tensors.size() / 4)));
  EXPECT_NE(consumer->describe().find("3x16x16"), std::string::npos);
  // A loss that is not finite fails the check whatever the features.
  std::vector<float> features(static_cast<std::size_t>(batch) * 768);
  kd::pool_features_host(tensors.data(), kd::OutType::F32, batch, grid, features.data());
  EXPECT_EQ(check_training_step(features, 6.9, tensors.data(), kd::OutType::F32, batch, grid), "");
  EXPECT_NE(check_training_step(features, std::nan(""), tensors.data(), kd::OutType::F32, batch, grid).find("loss"),
            std::string::npos);
}

// ---- decoded batches (augmentation on the GPU) --------------------------------------------------

TEST(DataloadDecodedBatch, LayoutRegionsAreAlignedAndApart) {
  for (int count : {1, 3, 32, 4096}) {
    const kd::DecodedBatchLayout l = kd::decoded_batch_layout(count);
    const std::size_t n = static_cast<std::size_t>(count);
    EXPECT_EQ(l.offsets, 0u);
    EXPECT_GE(l.widths, l.offsets + n * sizeof(std::uint64_t));
    EXPECT_GE(l.heights, l.widths + n * sizeof(int));
    EXPECT_GE(l.crops, l.heights + n * sizeof(int));
    EXPECT_EQ(l.crops % alignof(kd::Crop), 0u);
    EXPECT_GE(l.pixels, l.crops + n * sizeof(kd::Crop));
    EXPECT_EQ(l.pixels % 256, 0u) << count;
  }
}

// Plain memory that counts its allocations (to see a batch buffer grow).
class CountingMemory final : public BatchMemory {
 public:
  void* allocate(std::size_t bytes) override {
    ++allocations;
    return plain->allocate(bytes);
  }
  void release(void* p) override { plain->release(p); }
  std::unique_ptr<BatchMemory> plain = plain_memory();
  int allocations = 0;
};

// A worker decoding into a batch of decoded images (what aug=gpu ships to the GPU) leaves, per
// image, the pixels decode() gives, its size and the crop of its sample; augmenting them from
// the table gives the CPU path's tensor bit for bit. A buffer planned too small grows, keeping
// what it held; a corrupt image leaves the batch as it was.
TEST(DataloadDecodedBatch, WorkersDecodeIntoTheBatchAndItAugmentsLikeTheCpuPath) {
  const std::vector<std::pair<int, int>> sizes{{120, 80}, {64, 48}, {201, 150}, {33, 17}, {96, 96}};
  JpegEncoder enc;
  std::vector<std::string> jpegs;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto [w, h] = sizes[i];
    jpegs.push_back(enc.encode(synth_image(3, i, w, h).data(), w, h, 90));
  }
  const int count = static_cast<int>(sizes.size());
  for (int scale : {1, 2}) {
    CountingMemory memory;
    HostBatch b;
    b.capacity = kd::decoded_batch_layout(count).pixels + 1000;  // room for the table and a sliver
    b.data = memory.allocate(b.capacity);
    start_decoded_batch(b, count);
    SampleWorker worker, cpu;
    std::size_t pixel_bytes = 0;
    for (int i = 0; i < count; ++i) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(jpegs[i].data());
      if (i == 2) {  // corrupt and truncated input in the middle: refused, nothing changes
        const std::size_t bytes = b.bytes;
        EXPECT_FALSE(worker.decode_into(p, jpegs[i].size() / 2, scale, 99, count, b, memory));
        const std::string garbage(500, '\x33');
        EXPECT_FALSE(worker.decode_into(reinterpret_cast<const std::uint8_t*>(garbage.data()), garbage.size(), scale, 99,
                                        count, b, memory));
        EXPECT_FALSE(worker.error.empty());
        EXPECT_EQ(b.samples, 2);
        EXPECT_EQ(b.bytes, bytes);
      }
      ASSERT_TRUE(worker.decode_into(p, jpegs[i].size(), scale, 10 + i, count, b, memory)) << worker.error;
      pixel_bytes += static_cast<std::size_t>(scaled_size(sizes[i].first, scale)) * scaled_size(sizes[i].second, scale) * 3;
    }
    EXPECT_EQ(b.samples, count);
    EXPECT_GT(memory.allocations, 1) << "the batch should have grown";
    EXPECT_EQ(b.bytes, kd::decoded_batch_layout(count).pixels + pixel_bytes);
    EXPECT_LE(b.bytes, b.capacity);
    const kd::DecodedBatch t = kd::decoded_batch(b.data, count);
    for (int i = 0; i < count; ++i) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(jpegs[i].data());
      DecodedImage img;
      ASSERT_TRUE(cpu.decoder.decode(p, jpegs[i].size(), scale, img));
      ASSERT_EQ(t.widths[i], img.width);
      ASSERT_EQ(t.heights[i], img.height);
      const std::size_t bytes = static_cast<std::size_t>(img.width) * img.height * 3;
      EXPECT_EQ(std::memcmp(t.pixels + t.offsets[i], img.pixels.data(), bytes), 0) << "image " << i;
      const kd::Crop want = kd::random_crop(kAugmentSeed, 10 + i, img.width, img.height);
      EXPECT_EQ(std::memcmp(&t.crops[i], &want, sizeof want), 0) << "image " << i;
      std::vector<std::uint8_t> from_table(kd::out_bytes(kd::OutType::F16)), from_cpu(from_table.size());
      kd::augment_host({t.pixels + t.offsets[i], t.widths[i], t.heights[i]}, t.crops[i], kd::OutType::F16,
                       from_table.data());
      ASSERT_TRUE(cpu.decode_augment(p, jpegs[i].size(), scale, 10 + i, kd::OutType::F16, from_cpu.data()));
      EXPECT_EQ(from_table, from_cpu) << "image " << i;
    }
    EXPECT_THROW(worker.decode_into(reinterpret_cast<const std::uint8_t*>(jpegs[0].data()), jpegs[0].size(), scale, 0,
                                    count, b, memory),
                 std::logic_error);  // full
    memory.release(b.data);
  }
}

// ---- queue and pipeline -------------------------------------------------------------------------

TEST(DataloadQueue, ProducersBlockWhenFull) {
  // No fixed sleeps before the checks (a loaded machine can delay the producer past any of
  // them): wait until the producer got as far as it can, then check it went no further.
  BoundedQueue<int> q(2);
  std::atomic<int> pushed{0};
  std::thread producer([&] {
    for (int i = 0; i < 5; ++i) {
      if (!q.push(i)) return;
      ++pushed;
    }
  });
  auto wait_for = [&](int n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (pushed.load() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // room to overrun, were it possible
  };
  wait_for(2);
  EXPECT_EQ(pushed.load(), 2);  // back-pressure: blocked on the third
  std::size_t depth = 0;
  EXPECT_EQ(q.pop(&depth), 0);
  EXPECT_EQ(depth, 2u);
  wait_for(3);
  EXPECT_EQ(pushed.load(), 3);
  q.close();
  producer.join();
  EXPECT_EQ(q.pop(), 1);  // drains after close
  EXPECT_EQ(q.pop(), 2);
  EXPECT_FALSE(q.pop().has_value());
  EXPECT_FALSE(q.push(9));
}

TEST(DataloadPipeline, WorkersRunAtMostPrefetchAheadOfTheConsumer) {
  auto memory = plain_memory();
  std::atomic<int> filled{0};
  PipelineConfig cfg{3, 2, 4096};
  Pipeline p(cfg, *memory, [&](HostBatch& b, int) {
    b.samples = 1;
    b.checksum = static_cast<unsigned long long>(++filled);
  });
  p.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Full queue (2) plus one finished batch per worker waiting to get in (3).
  EXPECT_EQ(filled.load(), cfg.prefetch + cfg.workers);
  double wait = 0;
  int depth = 0;
  HostBatch* b = p.next(wait, depth);
  EXPECT_EQ(depth, 2);
  p.give_back(b);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(filled.load(), cfg.prefetch + cfg.workers + 1);
  p.stop();
}

TEST(DataloadPipeline, AWorkerErrorReachesTheConsumer) {
  auto memory = plain_memory();
  Pipeline p({1, 2, 64}, *memory, [](HostBatch&, int) { throw std::runtime_error("disk on fire"); });
  p.start();
  double wait = 0;
  int depth = 0;
  try {
    (void)p.next(wait, depth);
    ADD_FAILURE() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("disk on fire"), std::string::npos);
  }
}

TEST(DataloadPipeline, HostConsumerTakesItsStepTime) {
  auto consumer = make_host_consumer(0.002);
  std::vector<std::uint32_t> data(4096, 1);
  HostBatch b;
  b.data = data.data();
  b.capacity = b.bytes = data.size() * 4;
  b.samples = 1;
  const auto t0 = std::chrono::steady_clock::now();
  consumer->consume(b);
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.002);
  EXPECT_EQ(consumer->last_checksum(), 4u);  // words 0, 1024, 2048, 3072
}

// ---- stall arithmetic -----------------------------------------------------------------------------

TEST(DataloadStall, ShareOfWaitInStepTime) {
  // 4 steps of 10 ms; two waited 5 ms: 10 ms of 40 stalled.
  std::vector<StepRecord> t{{0, 0.005, 0.010, 0}, {0.010, 0, 0.010, 2}, {0.020, 0.005, 0.010, 0}, {0.030, 0, 0.010, 1}};
  const StallStats s = stall_stats(t);
  EXPECT_EQ(s.steps, 4);
  EXPECT_DOUBLE_EQ(s.stall_share, 0.25);
  EXPECT_DOUBLE_EQ(s.mean_step_s, 0.010);
  EXPECT_EQ(s.stalled_steps, 2);
  EXPECT_EQ(stall_stats({}).steps, 0);
  const auto q = queue_depth_summary(t, 2);
  EXPECT_DOUBLE_EQ(q["mean"].get<double>(), 0.75);
  EXPECT_EQ(q["max"].get<int>(), 2);
  EXPECT_DOUBLE_EQ(q["empty_share"].get<double>(), 0.5);
  ASSERT_EQ(q["series"].size(), 2u);
  EXPECT_DOUBLE_EQ(q["series"][0][1].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(q["series"][1][0].get<double>(), 0.020);
}

TEST(DataloadStall, DsAnalyzerSplit) {
  // Compute 10 ms; cached 14 ms (4 ms preparation stall); cold 20 ms (6 ms fetch stall).
  const DsSplit d = ds_analyzer_split(0.010, 0.014, 0.020);
  EXPECT_NEAR(d.prep_stall_s, 0.004, 1e-12);
  EXPECT_NEAR(d.fetch_stall_s, 0.006, 1e-12);
  EXPECT_NEAR(d.prep_share, 0.2, 1e-12);
  EXPECT_NEAR(d.fetch_share, 0.3, 1e-12);
  EXPECT_NEAR(d.compute_share, 0.5, 1e-12);
  // Noise making cold faster than cached: no negative stall.
  const DsSplit n = ds_analyzer_split(0.010, 0.012, 0.0119);
  EXPECT_EQ(n.fetch_stall_s, 0);
  EXPECT_NEAR(n.prep_share + n.fetch_share + n.compute_share, 1.0, 1e-12);
}

// ---- summary ------------------------------------------------------------------------------------------

nlohmann::ordered_json entry(const std::string& stage, int workers, double rate, const std::string& io = "memory",
                             double step_s = 0, std::int64_t step_us = 0) {
  nlohmann::ordered_json axes{{"stage", stage}, {"workers", workers}, {"order", "seq"},   {"io", io},
                              {"format", "files"}, {"scale", 1},      {"dtype", "fp32"},  {"batch", 16},
                              {"prefetch", stage == "pipeline" ? 4 : 0}, {"pinned", 0},   {"aug", "cpu"},
                              {"step_us", step_us}};
  return {{"name", "x"},
          {"run_type", "iteration"},
          {"gpubench",
           {{"suite", "dataload"},
            {"device", "cpu"},
            {"device_name", "Test CPU"},
            {"axes", axes},
            {"status", "ok"},
            {"metrics", {{"items_per_s", rate}}},
            {"measurement", {{"mean_s", step_s}}},
            {"details", {{"data_stall_share", 0.1}}}}}};
}

TEST(DataloadSummary, ScalingSaturationStallSplitAndCores) {
  std::vector<nlohmann::ordered_json> e{
      entry("decode_augment", 1, 100), entry("decode_augment", 2, 195), entry("decode_augment", 4, 380),
      entry("decode_augment", 8, 400),
      entry("pipeline", 4, 1600, "memory", 0.010, 10000), entry("pipeline", 4, 1142.857, "cached", 0.014, 10000),
      entry("pipeline", 4, 800, "cold", 0.020, 10000)};
  const auto s = summarize(e);
  const auto& d = s["devices"]["cpu"];
  const auto& st = d["stages"]["stage=decode_augment/order=seq/io=memory/format=files/scale=1/dtype=fp32/batch=16/prefetch=0/pinned=0/aug=cpu/step_us=0"];
  EXPECT_DOUBLE_EQ(st["per_core_samples_per_s"].get<double>(), 100);
  EXPECT_EQ(st["best_workers"].get<int>(), 8);
  EXPECT_EQ(st["saturates_at_workers"].get<int>(), 4);  // 380 >= 0.95 * 400
  EXPECT_DOUBLE_EQ(st["scaling"][1]["efficiency"].get<double>(), 0.975);
  ASSERT_EQ(d["pipelines"].size(), 1u);
  const auto& p = d["pipelines"][0];
  EXPECT_NEAR(p["ds_analyzer"]["prep_stall_share"].get<double>(), 0.2, 1e-9);
  EXPECT_NEAR(p["ds_analyzer"]["fetch_stall_share"].get<double>(), 0.3, 1e-9);
  EXPECT_DOUBLE_EQ(p["consumer_samples_per_s"].get<double>(), 1600);  // the synthetic run's rate
  EXPECT_DOUBLE_EQ(p["cores_needed"].get<double>(), 16);               // 1600 / 100 per core
  EXPECT_TRUE(summarize({}).empty());
}

// With the GPU augmenting, the workers only decode: cores needed come from decode's per-core
// rate (measured on the cpu device), not decode_augment's.
TEST(DataloadSummary, GpuAugmentationCountsDecodeCoresOnly) {
  auto pipe = entry("pipeline", 2, 1000, "memory", 0.016, 16000);
  pipe["gpubench"]["device"] = "cuda:0";
  pipe["gpubench"]["axes"]["aug"] = "gpu";
  const auto s = summarize({entry("decode", 1, 250), entry("decode_augment", 1, 100), pipe});
  const auto& p = s["devices"]["cuda:0"]["pipelines"][0];
  EXPECT_DOUBLE_EQ(p["per_core_samples_per_s"].get<double>(), 250);
  EXPECT_DOUBLE_EQ(p["cores_needed"].get<double>(), 4);  // 1000 / 250
  EXPECT_NE(p["cores_needed_note"].get<std::string>().find("decode/scale=1"), std::string::npos);
  // Without a decode case the rate is unknown, and the note says which case is missing.
  const auto none = summarize({entry("decode_augment", 1, 100), pipe});
  const auto& q = none["devices"]["cuda:0"]["pipelines"][0];
  EXPECT_FALSE(q.contains("cores_needed"));
  EXPECT_NE(q["cores_needed_note"].get<std::string>().find("no decode/scale=1 case"), std::string::npos);
}

}  // namespace
}  // namespace gpubench::suites::dataload
