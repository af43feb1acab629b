// AlgoConfig's text and JSON forms (plain C++: tuning caches are read where there is no CUDA).
#include "kernels/blas/algo_config.hpp"

#include <limits>
#include <sstream>
#include <stdexcept>

namespace gpubench::blas {

namespace {
// One row per serialised field: its name in text and JSON, and where it lives in AlgoConfig.
template <typename T>
bool parse_field(const std::string& value, T& out) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(value, &used);
    if (used != value.size()) return false;
    if (v < static_cast<long long>(std::numeric_limits<T>::min()) || v > static_cast<long long>(std::numeric_limits<T>::max()))
      return false;
    out = static_cast<T>(v);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

template <typename F>
void for_each_field(AlgoConfig& c, F&& f) {
  f("id", c.id);
  f("tile", c.tile);
  f("stages", c.stages);
  f("splitk", c.splitk);
  f("reduction", c.reduction);
  f("swizzle", c.swizzle);
  f("custom", c.custom);
  f("inner", c.inner_shape);
  f("cluster", c.cluster_shape);
}
}  // namespace

std::string to_string(const AlgoConfig& config) {
  AlgoConfig c = config;
  std::ostringstream os;
  bool first = true;
  for_each_field(c, [&](const char* name, auto& v) {
    os << (first ? "" : " ") << name << '=' << static_cast<long long>(v);
    first = false;
  });
  return os.str();
}

AlgoConfig parse_algo_config(const std::string& text) {
  AlgoConfig c;
  std::istringstream in(text);
  std::string token;
  int seen = 0;
  while (in >> token) {
    const auto eq = token.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("algorithm config: '" + token + "' is not name=value");
    const std::string name = token.substr(0, eq), value = token.substr(eq + 1);
    bool known = false;
    for_each_field(c, [&](const char* field, auto& v) {
      if (name != field) return;
      known = true;
      if (!parse_field(value, v)) throw std::invalid_argument("algorithm config: bad value for " + name + ": '" + value + "'");
      ++seen;
    });
    if (!known) throw std::invalid_argument("algorithm config: unknown field '" + name + "'");
  }
  if (seen == 0) throw std::invalid_argument("algorithm config: empty");
  return c;
}

void to_json(nlohmann::ordered_json& j, const AlgoConfig& config) {
  AlgoConfig c = config;
  j = nlohmann::ordered_json::object();
  for_each_field(c, [&](const char* name, auto& v) { j[name] = static_cast<long long>(v); });
}

void from_json(const nlohmann::ordered_json& j, AlgoConfig& c) {
  if (!j.is_object()) throw std::invalid_argument("algorithm config: not a JSON object");
  for_each_field(c, [&](const char* name, auto& v) {
    const auto it = j.find(name);
    if (it == j.end() || !it->is_number_integer()) {
      throw std::invalid_argument(std::string("algorithm config: field '") + name + "' missing or not an integer");
    }
    if (!parse_field(std::to_string(it->get<long long>()), v)) {
      throw std::invalid_argument(std::string("algorithm config: field '") + name + "' out of range");
    }
  });
}

}  // namespace gpubench::blas
