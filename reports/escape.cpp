// Escaping for every output format (see escape.hpp).
#include "reports/escape.hpp"

#include <cctype>
#include <charconv>

namespace gpubench::reports {

namespace {

bool is_dropped_control(unsigned char c) { return c < 0x20 && c != '\t' && c != '\n' && c != '\r'; }

bool looks_numeric(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (c == 0x7f || (c < 0x20 && c != '\t' && c != '\n')) break;  // DEL, NUL, CR, ...
        out += ch;
    }
  }
  return out;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (is_dropped_control(c)) continue;
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string md_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '\n':
      case '\r':
      case '\t': out += ' '; break;
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '|': case '\\': case '`': case '*': case '_': case '[': case ']': case '~': case '$':
        out += '\\';
        out += ch;
        break;
      default:
        if (c < 0x20 || c == 0x7f) break;
        out += ch;
    }
  }
  return out.empty() ? "-" : out;
}

std::string md_escape_paragraph(std::string_view text) {
  // A leading # - + > or "1." would start a heading, list or quote at the start of a line.
  std::string out = md_escape(text);
  const bool numbered = !out.empty() && std::isdigit(static_cast<unsigned char>(out[0])) &&
                        out.find_first_not_of("0123456789") != std::string::npos &&
                        (out[out.find_first_not_of("0123456789")] == '.' || out[out.find_first_not_of("0123456789")] == ')');
  if (!out.empty() && (out[0] == '#' || out[0] == '+' || out[0] == '-' || out[0] == '>' || out[0] == '=')) {
    out.insert(0, 1, '\\');
  } else if (numbered) {
    out.insert(out.find_first_not_of("0123456789"), 1, '\\');
  }
  return out;
}

std::string csv_field(std::string_view text) {
  std::string body;
  bool quote = false;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == ',' || ch == '"' || ch == '\n' || ch == '\r') quote = true;
    if (is_dropped_control(c)) continue;
    if (ch == '"') body += '"';
    body += ch;
  }
  // A cell a spreadsheet would run as a formula (OWASP's CSV injection list: = + - @, tab and
  // carriage return), judged on what is written, after dropped controls: "\x01=cmd" too.
  const char first = body.empty() ? '\0' : body[0];
  if ((first == '=' || first == '+' || first == '-' || first == '@' || first == '\t' || first == '\r') &&
      !looks_numeric(body)) {
    body.insert(body.begin(), '\'');
  }
  return quote ? "\"" + body + "\"" : body;
}

}  // namespace gpubench::reports
