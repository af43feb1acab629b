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

std::string Point::text_or(std::string_view axis, std::string_view fallback) const {
  for (const auto& [name, value] : values_) {
    if (name == axis) return to_string(value);
  }
  return std::string(fallback);
}

std::int64_t Point::integer_or(std::string_view axis, std::int64_t fallback) const {
  for (const auto& [name, value] : values_) {
    if (name == axis && std::holds_alternative<std::int64_t>(value)) return std::get<std::int64_t>(value);
  }
  return fallback;
}

bool Point::given(std::string_view axis) const {
  for (const std::string& g : given_) {
    if (g == axis) return true;
  }
  return false;
}

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
