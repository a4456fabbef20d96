// Whether a text is one whole JSON document, for the check that a result file was written whole
// before it is published (results_store.cpp whole_json_document): a file cut at any byte, even
// right after an entry's closing brace, is not. Syntax only (RFC 8259), plus the non-finite
// numbers Google Benchmark's JSON reporter writes for NaN and infinite counters (NaN, Infinity,
// each with an optional minus), which Python's json module reads too.
#pragma once

#include <string>
#include <string_view>

namespace gpubench {

/// "" when `text` is exactly one JSON value with only whitespace around it; otherwise what is
/// wrong and at which byte ("ends part way through", "unexpected 'x' at byte 12", ...). Nesting is
/// followed on a heap stack, so any depth is judged without recursion.
std::string json_syntax_error(std::string_view text);

}  // namespace gpubench
