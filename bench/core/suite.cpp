#include "suite.hpp"

#include <stdexcept>

namespace gpubench {

void Point::set(std::string axis, AxisValue value) {
  for (auto& [name, v] : values_) {
    if (name == axis) {
      v = std::move(value);
      return;
    }
  }
  values_.emplace_back(std::move(axis), std::move(value));
}

const AxisValue& Point::find(std::string_view axis) const {
  for (const auto& [name, v] : values_) {
    if (name == axis) return v;
  }
  throw std::logic_error("point has no axis '" + std::string(axis) + "'");
}

std::int64_t Point::integer(std::string_view axis) const { return std::get<std::int64_t>(find(axis)); }
const std::string& Point::text(std::string_view axis) const { return std::get<std::string>(find(axis)); }

std::string Point::label() const {
  std::string out;
  for (const auto& [name, v] : values_) {
    if (!out.empty()) out += '/';
    out += name + '=' + to_string(v);
  }
  return out;
}

nlohmann::ordered_json Point::to_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, v] : values_) {
    if (const auto* i = std::get_if<std::int64_t>(&v)) {
      j[name] = *i;
    } else {
      j[name] = std::get<std::string>(v);
    }
  }
  return j;
}

}  // namespace gpubench
