// The video suite through the binary: the quick preset on the cpu device (x264 encodes and the
// H.264 decode, each verified and timed), QP 51 against its stated floor, the plans for a GPU
// without NVENC and one with it, and bad inputs named in one line.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

struct Video : CliTest {};

TEST_F(Video, QuickPresetOnTheCpuEncodesAndDecodesH264Verified) {
  const fs::path out = dir / "V.json";
  const auto t0 = std::chrono::steady_clock::now();
  const Output o = gpubench(fmt::format("run --device cpu --suite video --preset quick -q --out {}", out.string()));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_LT(took, 90);
  int encodes = 0, decodes = 0;
  for (const auto& g : iteration_entries(out)) {
    ASSERT_EQ(g["status"], "ok") << g.dump();
    EXPECT_TRUE(g["verification"]["passed"].get<bool>()) << g.dump();
    const auto& m = g["metrics"];
    EXPECT_EQ(g["axes"]["codec"], "h264");
    EXPECT_GT(m["fps"].get<double>(), 0) << g.dump();
    EXPECT_GT(m["psnr_db"].get<double>(), 30);
    EXPECT_GT(m["bits_per_pixel"].get<double>(), 0);
    EXPECT_GT(m["cpu_cores"].get<double>(), 0);
    if (g["axes"]["op"] == "encode") {
      ++encodes;
      EXPECT_EQ(m["codec"], "libx264");
      EXPECT_GE(m["psnr_db"].get<double>(), m["psnr_floor_db"].get<double>());
      EXPECT_GT(m["psnr_floor_db"].get<double>(), 20);
    } else {
      ++decodes;
      EXPECT_EQ(m["codec"], "h264");
    }
  }
  EXPECT_EQ(encodes, 2);
  EXPECT_EQ(decodes, 1);
  // The report's video section: the table of the codec, fps per CPU core for the CPU cases.
  const Output r = gpubench("report " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::size_t at = r.out.find("## Video encode and decode");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("### h264", at), std::string::npos);
  EXPECT_NE(r.out.find("fps per CPU core", at), std::string::npos);
}

TEST_F(Video, TheWorstQualityX264AllowsRunsAgainstItsStatedFloor) {
  const fs::path out = dir / "Q.json";
  const Output o = gpubench(fmt::format("run --device cpu --suite video -a op=encode -a codec=h264 -a qp=51 -a preset=veryfast "
                                        "-a frames=10 --min-time 0.05 -q --out {}",
                                        out.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const auto entries = iteration_entries(out);
  ASSERT_EQ(entries.size(), 1u);
  const auto& m = entries[0]["metrics"];
  EXPECT_EQ(entries[0]["status"], "ok") << entries[0].dump();
  // docs/suite-video.md states the floor at QP 51: 26.5 dB for H.264.
  EXPECT_DOUBLE_EQ(m["psnr_floor_db"].get<double>(), 26.5);
  EXPECT_GE(m["psnr_db"].get<double>(), 26.5);
}

TEST_F(Video, AGpuWithoutNvencPlansDecodesAndSkipsEncodesNamingNvenc) {
  const Output h100 = gpubench("run --dry-run --assume h100-sxm --suite video");
  ASSERT_EQ(h100.code, 0) << h100.err;
  int planned_decodes = 0, skipped_encodes = 0;
  std::istringstream lines(h100.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("/cuda:0") == std::string::npos) continue;
    if (line.find("op=decode") != std::string::npos && line.find("skipped") == std::string::npos) ++planned_decodes;
    if (line.find("op=encode") != std::string::npos && line.find("skipped:") != std::string::npos) {
      ++skipped_encodes;
      EXPECT_NE(line.find("NVENC"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(planned_decodes, 2) << h100.out;
  EXPECT_EQ(skipped_encodes, 4) << h100.out;
  const Output l40s = gpubench("run --dry-run --assume l40s --suite video");
  ASSERT_EQ(l40s.code, 0) << l40s.err;
  EXPECT_EQ(l40s.out.find("skipped:"), std::string::npos) << l40s.out;
  EXPECT_NE(l40s.out.find("op=encode/codec=h264/res=1080p/preset=p3"), std::string::npos) << l40s.out;
  EXPECT_NE(l40s.out.find("h264_nvenc"), std::string::npos);
}

TEST_F(Video, BadInputsAreNamedInOneLine) {
  const fs::path text = dir / "notes.txt";
  std::ofstream(text) << "not a video at all\n";
  for (const std::string& path : {std::string("/nonexistent/clip.mp4"), dir.string()}) {
    const Output o = gpubench(fmt::format("run --device cpu --suite video -a input={} --out {}", path, (dir / "X.json").string()));
    EXPECT_EQ(o.code, 2) << path << ": " << o.err;
    EXPECT_NE(o.err.find(path), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_FALSE(fs::exists(dir / "X.json"));
  }
  // A file that is not video is found out when it is read: a failed case naming it, no figure.
  const fs::path out = dir / "T.json";
  const Output t = gpubench(fmt::format("run --device cpu --suite video -a op=encode -a preset=veryfast -a input={} -q --out {}",
                                        text.string(), out.string()));
  EXPECT_NE(t.code, 0) << t.err;
  const auto entries = iteration_entries(out);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["status"], "failed") << entries[0].dump();
  EXPECT_NE(entries[0].dump().find(text.string()), std::string::npos) << entries[0].dump();
  EXPECT_FALSE(entries[0].contains("metrics") && entries[0]["metrics"].contains("fps")) << entries[0].dump();
}

}  // namespace
}  // namespace gpubench::e2e
