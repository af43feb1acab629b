#include "apps/gpubench/console.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "bench/core/progress.hpp"
#include "reports/cases.hpp"
#include "reports/document.hpp"
#include "reports/reference.hpp"
#include "reports/results_reader.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::app {
namespace {

// Other processes' CPU use or steal time, in % of the machine, above which a case is "contended"
// (compare's --contended default: the same threshold).
constexpr double kContendedPct = 10;

constexpr const char* kGap = "  ";

bool is_integer_text(const std::string& s) {
  if (s.empty()) return false;
  const std::size_t start = s[0] == '-' ? 1 : 0;
  return start < s.size() && std::all_of(s.begin() + static_cast<long>(start), s.end(), [](char c) {
           return c >= '0' && c <= '9';
         });
}

std::string axis_text(const PlannedCase& c, const std::string& axis) {
  if (axis == "device") return c.device.id();
  for (const auto& [name, v] : c.point.values()) {
    if (name == axis) return to_string(v);
  }
  return "";
}

std::string pad(const std::string& s, std::size_t width, bool right) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

// A status "skipped: why" shortened to its first word and a note number.
std::string with_note(const std::string& status, std::size_t note) {
  return fmt::format("{} [{}]", status.substr(0, status.find(':')), note);
}

}  // namespace

std::vector<std::string> wrap_words(const std::string& text, std::size_t width, const std::string& indent) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    const std::string prefix = lines.empty() ? "" : indent;
    if (!line.empty() && prefix.size() + line.size() + 1 + word.size() > width) {
      lines.push_back(prefix + line);
      line.clear();
    }
    // A word longer than a line is cut: the limit holds for every line.
    auto room = [&] {
      const std::size_t used = lines.empty() ? 0 : indent.size();
      return width > used ? width - used : std::size_t{1};
    };
    while (line.empty() && word.size() > room()) {
      const std::size_t r = room();
      lines.push_back((lines.empty() ? "" : indent) + word.substr(0, r));
      word = word.substr(r);
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty() || lines.empty()) lines.push_back((lines.empty() ? "" : indent) + line);
  return lines;
}

ConsoleRow console_row(const std::vector<nlohmann::ordered_json>& entries) {
  std::vector<reports::ResultEntry> runs, aggregates;
  std::vector<std::string> suspect;
  for (const nlohmann::ordered_json& e : entries) {
    reports::ResultEntry r;
    try {
      r = reports::read_result_entry(e);
    } catch (const std::exception&) {
      continue;  // not a gpubench entry: nothing to show
    }
    if (reports::is_iteration(r)) {
      if (const auto g = e.find("gpubench"); g != e.end() && g->contains("suspect") && (*g)["suspect"].is_array()) {
        for (const auto& why : (*g)["suspect"]) {
          const std::string text = why.is_string() ? why.get<std::string>() : why.dump();
          if (std::find(suspect.begin(), suspect.end(), text) == suspect.end()) suspect.push_back(text);
        }
      }
      runs.push_back(std::move(r));
    } else {
      aggregates.push_back(std::move(r));
    }
  }
  ConsoleRow row;
  const std::vector<reports::ResultEntry>& from = runs.empty() ? aggregates : runs;
  for (const char* kind : {"failed", "skipped"}) {
    for (const reports::ResultEntry& r : from) {
      if (r.status == kind && row.status.empty()) {
        row.status = fmt::format("{}: {}", r.status == "failed" ? "FAILED" : "skipped", r.reason);
      }
    }
  }
  if (!row.status.empty() || from.empty()) {
    if (row.status.empty()) row.status = "FAILED: no result";
    return row;
  }
  // Repetitions: the mean of their rates and times, the largest of their noises.
  double rate = 0, time = 0, noise = -1;
  int rates = 0, times = 0;
  std::string unit;
  bool noisy = false, contended = false;
  for (const reports::ResultEntry& r : runs) {
    if (const auto p = reports::entry_perf(r); p && p->metric != "runs_per_s" && (unit.empty() || unit == p->unit)) {
      unit = p->unit;
      rate += p->value;
      ++rates;
    }
    std::optional<double> mean = reports::number_at(r.measurement, {"mean_s"});
    if (!mean) mean = r.real_time_s;
    if (mean) {
      time += *mean;
      ++times;
    }
    if (const auto n = reports::number_at(r.measurement, {"noise_pct"})) noise = std::max(noise, *n);
    noisy = noisy || reports::entry_noisy(r);
    // Load that was not ours while it was timed (the host instrument): the figure may be low for
    // a reason that is not the device's (compare then says `ambiguous: load`).
    for (const char* key : {"other_cpu_pct", "steal_pct"}) {
      if (const auto v = reports::number_at(r.profile, {"host", key}); v && *v > kContendedPct) contended = true;
    }
  }
  if (runs.empty()) {  // aggregates only (--benchmark_display_aggregates_only): their mean time
    for (const reports::ResultEntry& r : aggregates) {
      if (r.aggregate_name == "mean" && r.real_time_s) {
        time = *r.real_time_s;
        times = 1;
      }
    }
  }
  if (rates > 0) row.rate = reports::sig3(rate / rates) + " " + unit;
  if (times > 0) row.time = format_seconds(time / times);
  if (noise >= 0) row.noise = fmt::format("{:.1f}%", noise);
  row.status = "ok";
  if (noisy) row.status = "noisy";
  if (contended) row.status = noisy ? "noisy, contended" : "contended";
  if (!suspect.empty()) {
    row.status = "suspect: ";
    for (std::size_t i = 0; i < suspect.size(); ++i) row.status += (i ? "; " : "") + suspect[i];
  }
  return row;
}

Console::Console(const std::vector<PlannedCase>& plan, ConsoleOptions options) : plan_(plan), opt_(options) {
  group_index_.resize(plan.size());
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (groups_.empty() || plan[groups_.back().first].suite != plan[i].suite) {
      groups_.push_back(Group{});
      groups_.back().first = i;
    }
    groups_.back().last = i;
    group_index_[i] = groups_.size() - 1;
  }
  for (Group& g : groups_) {
    std::set<std::string> devices;
    for (std::size_t i = g.first; i <= g.last; ++i) devices.insert(plan[i].device.id());
    g.several_devices = devices.size() > 1;
    if (g.several_devices) g.varying.push_back("device");
    std::vector<std::string> constant;
    for (const auto& [axis, value] : plan[g.first].point.values()) {
      std::set<std::string> values;
      for (std::size_t i = g.first; i <= g.last; ++i) values.insert(axis_text(plan[i], axis));
      if (values.size() > 1) {
        g.varying.push_back(axis);
      } else {
        constant.push_back(axis + "=" + to_string(value));
      }
    }
    for (std::size_t i = 0; i < constant.size(); ++i) g.constant += (i ? " " : "") + constant[i];
    for (const std::string& axis : g.varying) {
      Column c{axis, axis.size(), true};
      for (std::size_t i = g.first; i <= g.last; ++i) {
        const std::string v = axis_text(plan[i], axis);
        c.width = std::max(c.width, v.size());
        c.right = c.right && is_integer_text(v);
      }
      g.columns.push_back(c);
    }
    // Fixed widths: rows print as cases end, before the later values are known.
    g.columns.push_back({"rate", 17, true});  // "1234 tokens/s", "12.3 GB/s (bus)"
    g.columns.push_back({"time/run", 10, true});
    g.columns.push_back({"noise", 7, true});
    g.columns.push_back({"status", 0, false});
  }
}

double Console::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

const Console::Group& Console::group_of(std::size_t index) const { return groups_[group_index_[index]]; }

std::string Console::short_label(std::size_t index) const {
  const PlannedCase& c = plan_[index];
  std::string out = c.suite->name();
  for (const std::string& axis : group_of(index).varying) out += " " + axis + "=" + axis_text(c, axis);
  return out;
}

std::size_t Console::live_width() const {
  winsize ws{};
  if (::ioctl(::fileno(opt_.err), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    return std::min<std::size_t>(opt_.width, ws.ws_col - 1u);  // the last column would wrap on some terminals
  }
  return opt_.width;
}

void Console::clear_live() {
  if (!live_shown_) return;
  fmt::print(opt_.err, "\r\033[K");
  std::fflush(opt_.err);
  live_shown_ = false;
}

void Console::started(std::size_t index) {
  if (opt_.quiet || !opt_.live || index >= plan_.size()) return;
  const double elapsed = elapsed_s();
  const std::string left = done_ ? "~" + format_duration(eta_seconds(done_, plan_.size(), elapsed)) : "?";
  std::string line = fmt::format("[{}/{} {}, {} left] {}", index + 1, plan_.size(), format_duration(elapsed), left,
                                 short_label(index));
  if (line.size() > live_width()) line.resize(live_width());
  fmt::print(opt_.err, "\r\033[K{}", line);
  std::fflush(opt_.err);
  live_shown_ = true;
}

std::vector<std::string> Console::cells(std::size_t index) const {
  std::vector<std::string> out;
  for (const std::string& axis : group_of(index).varying) out.push_back(axis_text(plan_[index], axis));
  return out;
}

void Console::print_header(Group& g) {
  for (Group& earlier : groups_) {
    if (&earlier == &g) break;
    if (earlier.header_printed && !earlier.closed) close(earlier);
  }
  g.header_printed = true;
  const PlannedCase& first = plan_[g.first];
  const std::size_t cases = g.last - g.first + 1;
  std::string where = g.several_devices ? "several devices"
                                        : fmt::format("{} ({})", first.device.id(), first.device.name);
  std::string title = fmt::format("{}: {} case{} on {}", first.suite->name(), cases, cases == 1 ? "" : "s", where);
  if (!g.constant.empty()) title += "; constant: " + g.constant;
  for (const std::string& line : wrap_words(title, opt_.width, "    ")) fmt::print(opt_.out, "{}\n", line);
  std::string header = kGap;
  for (std::size_t i = 0; i < g.columns.size(); ++i) {
    const Column& c = g.columns[i];
    header += (i ? kGap : "") + (i + 1 == g.columns.size() ? c.title : pad(c.title, c.width, c.right));
  }
  fmt::print(opt_.out, "{}\n", header);
}

void Console::close(Group& g) {
  g.closed = true;
  // Beside the datasheet's % of peak (in the results), the measured figure published for the
  // same thing on the same GPU (issue 27): the suite's cases furthest below it first.
  if (!g.published.empty()) {
    std::sort(g.published.begin(), g.published.end());
    std::string line = "% of published (data/reference.json): ";
    const std::size_t shown = std::min<std::size_t>(g.published.size(), 3);
    for (std::size_t i = 0; i < shown; ++i) line += (i ? "; " : "") + g.published[i].second;
    if (g.published.size() > shown) line += fmt::format("; and {} more (gpubench report)", g.published.size() - shown);
    const std::size_t room = opt_.width > 2 ? opt_.width - 2 : 1;
    for (const std::string& l : wrap_words(line, room, "    ")) fmt::print(opt_.out, "  {}\n", l);
  }
  for (std::size_t i = 0; i < g.notes.size(); ++i) {
    const std::size_t room = opt_.width > 2 ? opt_.width - 2 : 1;
    for (const std::string& line : wrap_words(fmt::format("[{}] {}", i + 1, g.notes[i]), room, "    ")) {
      fmt::print(opt_.out, "  {}\n", line);
    }
  }
  fmt::print(opt_.out, "\n");
}

std::optional<std::pair<double, std::string>> Console::published_text(std::size_t index,
                                                                      const std::vector<nlohmann::ordered_json>& entries) const {
  static const reports::SpecSheet sheet = reports::SpecSheet::builtin();
  for (const nlohmann::ordered_json& j : entries) {
    const reports::ResultEntry e = reports::read_result_entry(j);
    if (e.status != "ok" || !reports::is_iteration(e)) continue;
    const std::optional<reports::Perf> perf = reports::entry_perf(e);
    const reports::GpuSpec* gpu = e.device_name.empty() ? nullptr : sheet.find(e.device_name);
    if (!perf || gpu == nullptr) return std::nullopt;
    const auto m = reports::ReferenceTable::builtin().match(gpu->key, e, perf->metric, perf->value);
    if (!m || !m->differs.empty()) return std::nullopt;
    return std::pair<double, std::string>(
        m->pct, fmt::format("{} {:.0f}% of {:g} {} ({})", short_label(index), m->pct, m->row->value, m->row->unit,
                            m->row->short_source()));
  }
  return std::nullopt;
}

void Console::print_progress_line(std::size_t index, const std::string& outcome) {
  const double elapsed = elapsed_s();
  std::string line = fmt::format("[{}/{}] {}: {} (elapsed {}, left ~{})", done_, plan_.size(), short_label(index),
                                 outcome, format_duration(elapsed),
                                 format_duration(eta_seconds(done_, plan_.size(), elapsed)));
  for (const std::string& l : wrap_words(line, opt_.width, "    ")) fmt::print(opt_.err, "{}\n", l);
}

void Console::finished(std::size_t index, const std::vector<nlohmann::ordered_json>& entries) {
  ++done_;
  if (opt_.quiet || index >= plan_.size()) return;
  clear_live();
  const ConsoleRow row = console_row(entries);
  if (!opt_.tables) {
    if (!opt_.live) {
      std::string outcome = row.status;
      for (const std::string* part : {&row.time, &row.rate}) {
        if (!part->empty()) outcome += ", " + *part;
      }
      print_progress_line(index, outcome);
    }
    std::fflush(opt_.err);
    return;
  }
  Group& g = groups_[group_index_[index]];
  if (!g.header_printed) print_header(g);
  if (const std::optional<std::pair<double, std::string>> p = published_text(index, entries)) g.published.push_back(*p);
  std::vector<std::string> values = cells(index);
  values.insert(values.end(), {row.rate, row.time, row.noise});
  std::string line = kGap;
  for (std::size_t i = 0; i < values.size(); ++i) line += (i ? kGap : "") + pad(values[i], g.columns[i].width, g.columns[i].right);
  line += kGap;
  std::string status = row.status;
  if (line.size() + status.size() > opt_.width) {
    auto it = std::find(g.notes.begin(), g.notes.end(), status);
    if (it == g.notes.end()) it = g.notes.insert(g.notes.end(), status);
    status = with_note(status, static_cast<std::size_t>(it - g.notes.begin()) + 1);
  }
  line += status;
  if (line.size() > opt_.width) line.resize(opt_.width);  // axis columns alone wider than the limit
  fmt::print(opt_.out, "{}\n", line);
  if (index == g.last) close(g);
  std::fflush(opt_.out);
}

void Console::done() {
  if (opt_.quiet) return;
  clear_live();
  for (Group& g : groups_) {
    if (g.header_printed && !g.closed) close(g);
  }
  std::fflush(opt_.out);
}

RunObserverFactory console_observer() {
  return [](const std::vector<PlannedCase>& plan, const ObservedRun& run) -> std::unique_ptr<RunObserver> {
    ConsoleOptions c;
    c.quiet = run.quiet;
    c.tables = run.tables;
    c.live = ::isatty(STDERR_FILENO) != 0;
    return std::make_unique<Console>(plan, c);
  };
}

}  // namespace gpubench::app
