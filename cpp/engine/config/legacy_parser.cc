// AmgX's legacy text config: "config_version=2, solver(main)=PCG,
// main:max_iters=10". Entries are separated by ',' or ';'; in multi-line
// text each line is trimmed, '#' lines are skipped and the lines are joined.
// Shapes: name=value, scope:name=value, name(new_scope)=SOLVER and
// scope:name(new_scope)=SOLVER. Without a leading config_version=2 the text
// is version 1: no scopes, and AmgX's renames apply.
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "config/config.h"
#include "config/internal.h"
#include "core/error.h"

namespace jaxamg {

namespace config_internal {

namespace {

struct Entry {
  std::string text;  // as written, for messages
  std::string scope, name, new_scope, value;
  bool has_scope = false, has_new_scope = false;
};

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split_entries(const std::string& text) {
  std::string joined;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    if (!joined.empty()) joined += ',';
    joined += line;
  }
  std::vector<std::string> entries;
  std::string cur;
  auto flush = [&] {
    // Whitespace carries no meaning (it is not allowed in names or values),
    // so "max_iters = 10" reads as "max_iters=10".
    std::string e;
    for (char c : cur) {
      if (!std::isspace(static_cast<unsigned char>(c))) e += c;
    }
    if (!e.empty()) entries.push_back(e);
    cur.clear();
  };
  for (char c : joined) {
    if (c == ',' || c == ';') {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
  return entries;
}

size_t count(const std::string& s, char c) {
  size_t n = 0;
  for (char x : s) n += x == c;
  return n;
}

[[noreturn]] void bad_entry(const std::string& entry, const std::string& why) {
  throw ConfigError("legacy config entry '" + entry + "': " + why);
}

Entry parse_entry(const std::string& text) {
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("=_.-+:()", c)) {
      bad_entry(text, std::string("character '") + c +
                          "' is not allowed; names and values use letters, digits and _ . - +");
    }
  }
  if (count(text, '=') != 1) {
    bad_entry(text, "needs exactly one '=' (name=value), found " +
                        std::to_string(count(text, '=')));
  }
  Entry e;
  e.text = text;
  const size_t eq = text.find('=');
  std::string lhs = text.substr(0, eq);
  e.value = text.substr(eq + 1);
  if (e.value.empty()) bad_entry(text, "has no value after '='; write name=value");
  if (e.value.find_first_of(":()") != std::string::npos) {
    bad_entry(text, "the value '" + e.value + "' may not contain ':' or parentheses; "
                    "write scope:name(new_scope)=value");
  }
  if (count(lhs, ':') > 1) bad_entry(text, "has more than one ':'; write scope:name=value");
  if (count(lhs, '(') > 1 || count(lhs, ')') > 1) {
    bad_entry(text, "has more than one '(...)'; write name(new_scope)=SOLVER");
  }
  const size_t colon = lhs.find(':');
  if (colon != std::string::npos) {
    e.has_scope = true;
    e.scope = lhs.substr(0, colon);
    lhs = lhs.substr(colon + 1);
    if (e.scope.empty()) bad_entry(text, "has an empty scope before ':'; write scope:name=value");
    if (e.scope.find_first_of("()") != std::string::npos) {
      bad_entry(text, "the scope comes first: write scope:name(new_scope)=SOLVER");
    }
  }
  const size_t open = lhs.find('('), close = lhs.find(')');
  if (open != std::string::npos || close != std::string::npos) {
    if (open == std::string::npos || close != lhs.size() - 1 || close < open + 2) {
      bad_entry(text, "a new scope is written name(new_scope)=SOLVER, with a non-empty name "
                      "in the parentheses at the end of the left-hand side");
    }
    e.has_new_scope = true;
    e.new_scope = lhs.substr(open + 1, close - open - 1);
    lhs = lhs.substr(0, open);
  }
  e.name = lhs;
  if (e.name.empty()) bad_entry(text, "has no parameter name before '='");
  return e;
}

bool is_number_text(const std::string& s) {
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && !std::strchr("+-.eE", c)) return false;
  }
  return !s.empty();
}

bool parse_long(const std::string& s, long long& out) {
  if (!is_number_text(s)) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end == s.c_str() + s.size();
}

bool parse_double(const std::string& s, double& out) {
  if (!is_number_text(s)) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// Stores `value` as the registered type of `name` wants it.
void store_text(Config& cfg, const std::string& scope, const std::string& name,
                const std::string& value) {
  const ParamSpec& spec = require_param(name, scope);
  long long i = 0;
  double d = 0.0;
  switch (spec.type) {
    case ParamSpec::kInt:
      if (parse_long(value, i)) return set_integer(cfg, name, scope, i);
      if (parse_double(value, d)) return cfg.set_double(name, scope, d);
      throw_type_error(spec, scope, "'" + value + "'");
    case ParamSpec::kDouble:
      if (parse_double(value, d)) return cfg.set_double(name, scope, d);
      throw_type_error(spec, scope, "'" + value + "'");
    case ParamSpec::kString:
    case ParamSpec::kSolver:
      return cfg.set_string(name, scope, value);
  }
}

int parse_version(const Entry& e) {
  if (e.value == "1") return 1;
  if (e.value == "2") return 2;
  bad_entry(e.text, "config_version must be 1 or 2, got '" + e.value + "'");
}

bool is_version_entry(const Entry& e) {
  return e.name == "config_version" && !e.has_new_scope && (!e.has_scope || e.scope == "default");
}

}  // namespace

void apply_legacy_text(Config& cfg, const std::string& text, bool allow_redefine) {
  const std::vector<std::string> entries = split_entries(text);
  int version = 1;
  size_t first = 0;
  if (!entries.empty()) {
    const Entry e = parse_entry(entries[0]);
    if (is_version_entry(e)) {
      version = parse_version(e);
      first = 1;
    }
  }
  for (size_t k = first; k < entries.size(); ++k) {
    Entry e = parse_entry(entries[k]);
    if (e.name == "config_version") {
      bad_entry(e.text, "config_version must be the first entry; move it to the front");
    }
    if (version == 1) {
      if (e.has_scope || e.has_new_scope) {
        bad_entry(e.text, "scope syntax needs version 2; put config_version=2 as the first "
                          "entry");
      }
      // AmgX's version-1 conversion.
      if (e.name == "smoother_weight") e.name = "relaxation_factor";
      if (e.name == "min_block_rows") e.name = "min_coarse_rows";
      if (e.value == "JACOBI" || e.value == "JACOBI_NO_CUSP") e.value = "BLOCK_JACOBI";
    }
    const std::string scope = e.has_scope ? e.scope : "default";
    try {
      if (e.has_new_scope) {
        define_solver_scope(cfg, scope, e.name, e.value, e.new_scope, allow_redefine);
      } else {
        store_text(cfg, scope, e.name, e.value);
      }
    } catch (const ConfigError& err) {
      bad_entry(e.text, err.what());
    }
  }
}

}  // namespace config_internal

Config Config::parse_legacy(const std::string& text) {
  Config cfg;
  config_internal::apply_legacy_text(cfg, text, false);
  return cfg;
}

}  // namespace jaxamg
