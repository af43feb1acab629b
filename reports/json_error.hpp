#pragma once
// nlohmann's parse messages start with "[json.exception.parse_error.101] ", which means
// nothing to a user; newlines are flattened so an error stays on one line.
#include <string>

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

}  // namespace gpubench::reports
