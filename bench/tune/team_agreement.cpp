#include "bench/tune/team_agreement.hpp"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <utility>

namespace gpubench::tune {

Clock agreed_clock(Team& team, Clock local) {
  if (!local) throw std::invalid_argument("agreed_clock: no local clock");
  return [&team, local = std::move(local)] {
    // Only rank 0's reading matters, but every rank reads its own clock: reading costs nothing
    // and keeps the exchange one all_gather of equal-sized values.
    return team.all_gather(local(), "the tune search's clock").at(0);
  };
}

std::string measured_to_text(const Measured& m) {
  nlohmann::ordered_json j = {{"status", to_string(m.status)}, {"score", m.score}, {"reason", m.reason},
                              {"figures", m.figures}};
  // A failure's reason may hold bytes that are not UTF-8 (an exception's text): replaced, not thrown.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Measured measured_from_text(const std::string& text) {
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
  Measured m;
  const std::string status = j.at("status").get<std::string>();
  if (status == "ok") {
    m.status = Status::Ok;
  } else if (status == "failed") {
    m.status = Status::Failed;
  } else if (status == "does-not-fit") {
    m.status = Status::DoesNotFit;
  } else if (status == "skipped") {
    m.status = Status::Skipped;
  } else {
    throw std::invalid_argument("measured_from_text: unknown status " + status);
  }
  // A non-finite score is written as null by JSON: read back as NaN (the search rejects it).
  m.score = j.at("score").is_number() ? j.at("score").get<double>() : std::numeric_limits<double>::quiet_NaN();
  m.reason = j.at("reason").get<std::string>();
  m.figures = j.at("figures");
  return m;
}

Measured agreed_measurement(Team& team, const std::function<Measured()>& measure, const std::string& step) {
  Measured mine;
  try {
    mine = measure();
  } catch (const std::exception& e) {
    mine = Measured{};
    mine.status = Status::Failed;
    mine.reason = e.what();
  }
  const std::vector<std::string> all = team.all_gather(measured_to_text(mine), step);
  Measured agreed = measured_from_text(all.at(0));
  if (agreed.status != Status::Ok) return agreed;
  for (std::size_t r = 1; r < all.size(); ++r) {
    Measured other = measured_from_text(all[r]);
    if (other.status == Status::Ok) continue;
    other.reason = fmt::format("rank {}: {}", r, other.reason);
    // The log keeps the case's name (rank 0's), not figures of a step that did not run everywhere.
    other.figures = nlohmann::ordered_json::object();
    if (agreed.figures.contains("case")) other.figures["case"] = agreed.figures["case"];
    other.score = 0;
    return other;
  }
  return agreed;
}

}  // namespace gpubench::tune
