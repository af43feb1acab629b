#pragma once
// Escaping for every output format. All text that comes from a results file (benchmark and
// host names, axis values, labels, library versions) passes through one of these before it is
// written, so a hostile file cannot inject markup, table cells, CSV columns or XML.
#include <string>
#include <string_view>

namespace gpubench::reports {

// HTML text and attribute values (also valid inside inline SVG): & < > " ' become entities;
// control characters other than tab and newline are dropped.
std::string html_escape(std::string_view text);

// XML 1.0 (JUnit): as html_escape, and characters XML 1.0 forbids are dropped.
std::string xml_escape(std::string_view text);

// One Markdown table cell or inline text (GitHub and GitLab flavours): Markdown punctuation is
// backslash-escaped, < > & become entities (both render inline HTML), line breaks become
// spaces. Empty text becomes "-".
std::string md_escape(std::string_view text);

// The same for text that starts a line (a paragraph, a list item, a heading): a leading
// # - + > = or "1." is escaped too.
std::string md_escape_paragraph(std::string_view text);

// One CSV field (RFC 4180): quoted when it holds a comma, quote or line break, quotes doubled.
// Text starting with = + - @ (a spreadsheet formula) is prefixed with ' unless it is a number.
std::string csv_field(std::string_view text);

}  // namespace gpubench::reports
