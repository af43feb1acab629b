#include "reports/fleet.hpp"

#include <algorithm>
#include <string_view>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/cases.hpp"
#include "reports/stats.hpp"

namespace gpubench::reports {
namespace {

using json = nlohmann::json;

// Below this many devices the MAD is not a spread: the best device is the reference.
constexpr std::size_t kMinForMad = 3;
// The MAD's floor, relative to the median (see fleet.hpp).
constexpr double kMadFloor = 0.001;

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The context's record of a device ("cuda:0" -> its uuid, PCI bus id).
const json* context_device(const ResultsFile& f, const std::string& id) {
  const json* devices = json_at(f.context, {"gpubench", "devices"});
  if (devices == nullptr || !devices->is_array()) return nullptr;
  for (const json& d : *devices) {
    if (d.is_object() && str(d, "id") == id) return &d;
  }
  return nullptr;
}

std::string metric_name(const ResultEntry& e) {
  const std::string axes = axes_label(e);
  return axes.empty() ? e.suite : e.suite + " " + axes;
}

// The per-rank figures of a gathered entry (gpubench.ranks, docs/results-format.md).
void add_rank_samples(const ResultsFile& f, const ResultEntry& e, const json& ranks, std::vector<FleetSample>& out) {
  for (const json& r : ranks) {
    if (!r.is_object()) continue;
    ResultEntry one = e;  // the rank's own metrics and time, read as an entry's
    one.metrics = r.value("metrics", json::object());
    one.real_time_s = r.contains("mean_s") && r["mean_s"].is_number() ? std::optional<double>(r["mean_s"].get<double>())
                                                                       : std::nullopt;
    const std::optional<Perf> p = entry_perf(one);
    if (!p || !(p->value > 0) || !std::isfinite(p->value)) continue;
    FleetSample s;
    s.host = str(r, "host");
    if (r.contains("rank") && r["rank"].is_number_integer()) s.rank = r["rank"].get<int>();
    s.device = str(r, "device");
    s.uuid = str(r, "uuid");
    s.pci_bus_id = str(r, "pci_bus_id");
    s.serial = str(r, "serial");
    s.model = str(r, "device_name");
    if (s.model.empty()) s.model = e.device_name;
    s.metric = metric_name(e);
    s.unit = p->unit;
    s.value = p->value;
    s.file = f.path.string();
    out.push_back(std::move(s));
  }
}

// A soak's devices: each one's mean throughput over its judged samples (gpubench.soak.trends of
// a plain soak, not of a sweep's phases), with its identity from gpubench.soak.devices (host,
// rank, device_name, uuid, pci_bus_id, serial; docs/soak.md).
void add_soak_samples(const ResultsFile& f, std::vector<FleetSample>& out) {
  if (!f.soak.is_object()) return;
  const json* trends = json_at(f.soak, {"trends"});
  if (trends == nullptr || !trends->is_array()) return;
  const json* devices = json_at(f.soak, {"devices"});
  for (const json& t : *trends) {
    if (!t.is_object() || !str(t, "phase").empty()) continue;
    const std::optional<double> v = number_at(t, {"mean"});
    if (!v || !(*v > 0) || !std::isfinite(*v)) continue;
    FleetSample s;
    s.device = str(t, "device");
    s.host = f.host();
    if (devices != nullptr && devices->is_array()) {
      for (const json& d : *devices) {
        if (!d.is_object() || str(d, "device") != s.device) continue;
        if (!str(d, "host").empty()) s.host = str(d, "host");
        if (d.contains("rank") && d["rank"].is_number_integer()) s.rank = d["rank"].get<int>();
        if (!str(d, "id").empty()) s.device = str(d, "id");
        s.model = str(d, "device_name");
        s.uuid = str(d, "uuid");
        s.pci_bus_id = str(d, "pci_bus_id");
        s.serial = str(d, "serial");
      }
    }
    s.metric = "soak " + str(t, "load");
    s.unit = str(t, "unit");
    s.value = *v;
    s.file = f.path.string();
    out.push_back(std::move(s));
  }
}

std::string pct_text(double pct) { return fmt::format("{:.0f}%", pct); }

}  // namespace

std::string FleetSample::identity() const {
  return host + "\x1f" + device + "\x1f" + uuid + "\x1f" + (rank ? std::to_string(*rank) : std::string());
}

std::string FleetSample::label() const {
  std::string who = host.empty() ? "(unknown host)" : host;
  if (device.rfind("cuda:", 0) == 0) {
    who += " GPU " + device.substr(5);
  } else {
    who += " " + (device.empty() ? std::string("device") : device);
  }
  std::vector<std::string> extra;
  if (!uuid.empty()) extra.push_back("UUID " + uuid);
  if (rank) extra.push_back("rank " + std::to_string(*rank));
  if (!extra.empty()) who += fmt::format(" ({})", fmt::join(extra, ", "));
  return who;
}

namespace {
// A soak's own summary entry: "soak/<load>/<case>", under a launcher "rank<N>/soak/..."
// (cmd_soak.cpp names each rank's entries so).
bool is_soak_entry(const std::string& name) {
  std::string_view n = name;
  if (n.rfind("rank", 0) == 0 && n.find('/') != std::string_view::npos) {
    const std::string_view r = n.substr(4, n.find('/') - 4);
    if (!r.empty() && std::all_of(r.begin(), r.end(), [](char c) { return c >= '0' && c <= '9'; })) n.remove_prefix(n.find('/') + 1);
  }
  return n.rfind("soak/", 0) == 0;
}
}  // namespace

std::vector<FleetSample> fleet_samples(const std::vector<ResultsFile>& files) {
  std::vector<FleetSample> out;
  for (const ResultsFile& f : files) {
    // A soak: its devices' series, not its summary entries ("soak/..."); the file's other entries
    // (an evaluation's screen beside its soak) count as any file's.
    add_soak_samples(f, out);
    for (const ResultEntry& e : f.entries) {
      if (!is_iteration(e) || e.status != "ok") continue;
      if (f.soak.is_object() && is_soak_entry(e.name)) continue;
      if (e.suite == "collectives") continue;  // a collective's time belongs to the team, not a device
      if (e.ranks.is_array() && !e.ranks.empty()) {
        add_rank_samples(f, e, e.ranks, out);
        continue;
      }
      const std::optional<Perf> p = entry_perf(e);
      if (!p || !(p->value > 0) || !std::isfinite(p->value)) continue;
      FleetSample s;
      s.host = f.host();
      s.device = e.device;
      s.model = e.device_name;
      if (const json* d = context_device(f, e.device)) {
        s.uuid = str(*d, "uuid");
        s.pci_bus_id = str(*d, "pci_bus_id");
        s.serial = str(*d, "serial");
      }
      s.metric = metric_name(e);
      s.unit = p->unit;
      s.value = p->value;
      s.file = f.path.string();
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<FleetGroup> rank_fleet(const std::vector<FleetSample>& samples, const FleetOptions& options) {
  // (model, metric) -> identity -> figures
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<const FleetSample*>>> by_group;
  std::vector<std::pair<std::string, std::string>> order;
  for (const FleetSample& s : samples) {
    const auto key = std::make_pair(s.model, s.metric);
    if (!by_group.count(key)) order.push_back(key);
    by_group[key][s.identity()].push_back(&s);
  }
  std::vector<FleetGroup> groups;
  for (const auto& key : order) {
    const auto& devices = by_group[key];
    if (devices.size() < 2) continue;
    FleetGroup g;
    g.model = key.first;
    g.metric = key.second;
    std::vector<double> values;
    for (const auto& [identity, figures] : devices) {
      std::vector<double> v;
      for (const FleetSample* s : figures) v.push_back(s->value);
      FleetRow row;
      row.sample = *figures.front();
      row.sample.value = median(v);
      values.push_back(row.sample.value);
      g.rows.push_back(std::move(row));
    }
    g.unit = g.rows.front().sample.unit;
    g.median = median(values);
    g.best = *std::max_element(values.begin(), values.end());
    std::vector<double> deviations;
    for (double v : values) deviations.push_back(std::fabs(v - g.median));
    g.mad = median(deviations);
    const bool use_mad = values.size() >= kMinForMad;
    const double mad = std::max(g.mad, kMadFloor * g.median);
    for (FleetRow& r : g.rows) {
      const double v = r.sample.value;
      r.pct_vs_median = (v / g.median - 1) * 100;
      if (use_mad) {
        r.mads_below = (g.median - v) / mad;
        r.outlier = *r.mads_below > options.mads && -r.pct_vs_median > options.pct;
      } else {
        r.outlier = (1 - v / g.best) * 100 > options.pct;
      }
    }
    std::sort(g.rows.begin(), g.rows.end(),
              [](const FleetRow& a, const FleetRow& b) { return a.sample.value > b.sample.value; });
    groups.push_back(std::move(g));
  }
  return groups;
}

std::vector<FleetOutlier> fleet_outliers(const std::vector<FleetGroup>& groups) {
  std::vector<FleetOutlier> out;
  for (const FleetGroup& g : groups) {
    for (const FleetRow& r : g.rows) {
      if (!r.outlier) continue;
      FleetOutlier o;
      o.sample = r.sample;
      o.devices = g.rows.size();
      o.mads = r.mads_below;
      if (r.mads_below) {
        o.pct_below = -r.pct_vs_median;
        o.text = fmt::format("{}: {} {} below the fleet median ({:.0f} MADs)", r.sample.label(), g.metric,
                             pct_text(o.pct_below), *r.mads_below);
      } else {
        o.pct_below = (1 - r.sample.value / g.best) * 100;
        o.text = fmt::format("{}: {} {} below the best of {} devices (too few for the MAD rule)", r.sample.label(),
                             g.metric, pct_text(o.pct_below), g.rows.size());
      }
      out.push_back(std::move(o));
    }
  }
  return out;
}

void fleet_section(Document& doc, const std::vector<ResultsFile>& files, const FleetOptions& options,
                   nlohmann::ordered_json* summary) {
  const std::vector<FleetGroup> groups = rank_fleet(fleet_samples(files), options);
  if (groups.empty()) return;
  const std::vector<FleetOutlier> outliers = fleet_outliers(groups);
  std::set<std::string> identities;
  for (const FleetGroup& g : groups) {
    for (const FleetRow& r : g.rows) identities.insert(r.sample.identity());
  }
  doc.heading("Fleet");
  doc.paragraph(fmt::format(
      "{} devices compared by model, {} metric{}. A device is flagged when it is more than {:g} MADs (median absolute "
      "deviation) and more than {:g}% below the median of its model; with fewer than {} devices, when it is more than "
      "{:g}% below the best.",
      identities.size(), groups.size(), groups.size() == 1 ? "" : "s", options.mads, options.pct, kMinForMad,
      options.pct));
  if (outliers.empty()) {
    doc.paragraph("No outlier.");
  } else {
    std::vector<std::string> lines;
    for (const FleetOutlier& o : outliers) lines.push_back(o.text);
    doc.heading("Outliers", 3);
    doc.list(lines);
  }
  // Nodes: the geometric mean of their devices' figures relative to each metric's median.
  struct Node {
    std::vector<double> ratios;
    std::set<std::string> devices;
    std::size_t outliers = 0;
    double worst = 1e300;
    std::string worst_text;
  };
  std::map<std::string, Node> nodes;
  for (const FleetGroup& g : groups) {
    for (const FleetRow& r : g.rows) {
      Node& n = nodes[r.sample.host];
      const double ratio = r.sample.value / g.median;
      n.ratios.push_back(ratio);
      n.devices.insert(r.sample.identity());
      if (r.outlier) ++n.outliers;
      if (ratio < n.worst) {
        n.worst = ratio;
        n.worst_text = fmt::format("{}: {} {}", r.sample.label(), g.metric, percent_change((ratio - 1) * 100));
      }
    }
  }
  if (nodes.size() > 1) {
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [host, n] : nodes) order.emplace_back(geomean(n.ratios).value_or(0), host);
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    Table t;
    t.add_column("#", true);
    t.add_column("node");
    t.add_column("devices", true);
    t.add_column("vs median (geomean)", true);
    t.add_column("outliers", true);
    t.add_column("weakest figure");
    for (std::size_t i = 0; i < order.size(); ++i) {
      const Node& n = nodes[order[i].second];
      t.rows.push_back({std::to_string(i + 1), order[i].second.empty() ? "(unknown host)" : order[i].second,
                        std::to_string(n.devices.size()), percent_change((order[i].first - 1) * 100),
                        std::to_string(n.outliers), n.worst_text});
    }
    doc.heading("Nodes", 3);
    doc.table(std::move(t));
  }
  for (const FleetGroup& g : groups) {
    doc.heading(fmt::format("{} on {} ({} devices)", g.metric, g.model, g.rows.size()), 3);
    Table t;
    t.add_column("#", true);
    t.add_column("device");
    t.add_column(g.unit.empty() ? "value" : g.unit, true);
    t.add_column("vs median", true);
    t.add_column("MADs below", true);
    t.add_column("");
    for (std::size_t i = 0; i < g.rows.size(); ++i) {
      const FleetRow& r = g.rows[i];
      t.rows.push_back({std::to_string(i + 1), r.sample.label(), sig3(r.sample.value), percent_change(r.pct_vs_median),
                        r.mads_below ? decimal(*r.mads_below, 1) : "", r.outlier ? "outlier" : ""});
    }
    doc.table(std::move(t));
  }
  if (summary != nullptr) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const FleetOutlier& o : outliers) {
      nlohmann::ordered_json j{{"host", o.sample.host},   {"device", o.sample.device}, {"uuid", o.sample.uuid},
                               {"model", o.sample.model}, {"metric", o.sample.metric}, {"pct_below", o.pct_below},
                               {"devices", o.devices},    {"text", o.text}};
      if (o.sample.rank) j["rank"] = *o.sample.rank;
      if (o.mads) j["mads"] = *o.mads;
      list.push_back(std::move(j));
    }
    (*summary)["fleet"] = {{"groups", groups.size()},
                           {"devices", identities.size()},
                           {"mads", options.mads},
                           {"pct", options.pct},
                           {"outliers", std::move(list)}};
  }
}

}  // namespace gpubench::reports
