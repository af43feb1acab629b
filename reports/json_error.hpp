#pragma once
// nlohmann's parse messages start with "[json.exception.parse_error.101] ", which means
// nothing to a user; newlines are flattened so an error stays on one line.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench::reports {

inline std::string one_line_parse_message(const std::string& what) {
  std::string msg = what;
  if (!msg.empty() && msg.front() == '[') {
    if (auto close = msg.find("] "); close != std::string::npos) msg.erase(0, close + 2);
  }
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return msg;
}

// Parses JSON text refusing an object that holds one key twice (nlohmann keeps the last one
// silently; a results file so written is corrupt, not a choice to make for the user): throws
// std::runtime_error naming the key. Parse errors are nlohmann's exceptions, as from parse().
template <class Json>
Json parse_json_without_duplicate_keys(std::string_view text) {
  std::vector<std::set<std::string>> open;  // the keys of each object being read
  std::string duplicate;
  auto watch = [&](int, typename Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) open.emplace_back();
    if (event == Json::parse_event_t::object_end && !open.empty()) open.pop_back();
    if (event == Json::parse_event_t::key && !open.empty() && !open.back().insert(parsed.template get<std::string>()).second &&
        duplicate.empty()) {
      duplicate = parsed.template get<std::string>();
    }
    return true;
  };
  Json doc = Json::parse(text, watch);
  if (!duplicate.empty()) throw std::runtime_error("the key \"" + duplicate + "\" appears twice in one object");
  return doc;
}

}  // namespace gpubench::reports
