#include "harness/json_syntax.h"

#include <cctype>
#include <utility>
#include <vector>

namespace gpubench {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// What the scanner expects next.
enum class Want {
  kValue,         // a value (after ':' or ',' in an array, and at the start)
  kValueOrClose,  // a value or ']' (just after '[')
  kKey,           // a string key (after ',' in an object)
  kKeyOrClose,    // a key or '}' (just after '{')
  kColon,         // ':' after a key
  kCommaOrClose,  // ',' or the container's close, or the end when no container is open
};

class Scanner {
 public:
  explicit Scanner(std::string_view text) : s_(text) {}

  std::string run() {
    std::vector<char> open;  // '{' or '[' per container not yet closed
    Want want = Want::kValue;
    for (;;) {
      while (i_ < s_.size() && is_space(s_[i_])) ++i_;
      if (i_ == s_.size()) {
        if (want == Want::kCommaOrClose && open.empty()) return {};
        return "ends part way through (" + std::to_string(s_.size()) + " bytes)";
      }
      const char c = s_[i_];
      switch (want) {
        case Want::kValue:
        case Want::kValueOrClose:
          if (c == ']' && want == Want::kValueOrClose) {
            open.pop_back();
            ++i_;
            want = Want::kCommaOrClose;
          } else if (c == '{' || c == '[') {
            open.push_back(c);
            ++i_;
            want = c == '{' ? Want::kKeyOrClose : Want::kValueOrClose;
          } else {
            if (!scalar()) return error_;
            want = Want::kCommaOrClose;
          }
          break;
        case Want::kKey:
        case Want::kKeyOrClose:
          if (c == '}' && want == Want::kKeyOrClose) {
            open.pop_back();
            ++i_;
            want = Want::kCommaOrClose;
          } else if (c == '"') {
            if (!string()) return error_;
            want = Want::kColon;
          } else {
            return unexpected("a key");
          }
          break;
        case Want::kColon:
          if (c != ':') return unexpected("':'");
          ++i_;
          want = Want::kValue;
          break;
        case Want::kCommaOrClose:
          if (open.empty()) return unexpected("the end of the document");
          if (c == ',') {
            want = open.back() == '{' ? Want::kKey : Want::kValue;
          } else if ((c == '}' && open.back() == '{') || (c == ']' && open.back() == '[')) {
            open.pop_back();
            want = Want::kCommaOrClose;
          } else {
            return unexpected(open.back() == '{' ? "',' or '}'" : "',' or ']'");
          }
          ++i_;
          break;
      }
    }
  }

 private:
  std::string unexpected(const char* expected) {
    const unsigned char c = static_cast<unsigned char>(s_[i_]);
    const std::string what = std::isprint(c) ? std::string("'") + s_[i_] + "'" : "byte " + std::to_string(c);
    return what + " at byte " + std::to_string(i_) + " where " + expected + " belongs";
  }

  bool fail(std::string why) {
    error_ = std::move(why);
    return false;
  }

  // A string, a number, true, false, null, or Google Benchmark's NaN / Infinity.
  bool scalar() {
    const char c = s_[i_];
    if (c == '"') return string();
    const std::size_t left = s_.size() - i_;
    for (std::string_view w : {"true", "false", "null", "NaN", "Infinity", "-NaN", "-Infinity"}) {
      if (s_.substr(i_, w.size()) == w) {
        i_ += w.size();
        return true;
      }
      if (left < w.size() && w.substr(0, left) == s_.substr(i_)) return fail(ended());  // cut at the end
    }
    if (c == '-' || is_digit(c)) return number();
    return fail(unexpected("a value"));
  }

  std::string ended() const { return "ends part way through (" + std::to_string(s_.size()) + " bytes)"; }

  bool digits() {
    const std::size_t start = i_;
    while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
    if (i_ > start) return true;
    return fail(i_ == s_.size() ? ended() : unexpected("a digit"));
  }

  bool number() {
    if (s_[i_] == '-') ++i_;
    if (i_ == s_.size()) return fail(ended());
    if (s_[i_] == '0') {
      ++i_;
    } else if (!digits()) {
      return false;
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (!digits()) return false;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!digits()) return false;
    }
    return true;
  }

  bool string() {
    ++i_;  // the opening quote
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '"') {
        ++i_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return fail(unexpected("a string's text (controls escaped)"));
      if (c != '\\') {
        ++i_;
        continue;
      }
      if (++i_ == s_.size()) break;
      const char e = s_[i_];
      if (e == 'u') {
        for (int k = 0; k < 4; ++k) {
          if (++i_ == s_.size()) return fail(ended());
          if (!std::isxdigit(static_cast<unsigned char>(s_[i_]))) return fail(unexpected("a hex digit of \\u"));
        }
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return fail(unexpected("an escape"));
      }
      ++i_;
    }
    return fail(ended());
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::string error_;
};

}  // namespace

std::string json_syntax_error(std::string_view text) { return Scanner(text).run(); }

}  // namespace gpubench
