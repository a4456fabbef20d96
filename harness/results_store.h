// Result files: written to a temporary name beside the target and moved into place with
// link(2), which fails rather than replace an existing file - so a result is never overwritten
// and never seen half-written.
#pragma once

#include <cstddef>
#include <string>

namespace gpubench {

/// The longest file name the folder of `path` takes (NAME_MAX there; 255 when it cannot tell).
std::size_t longest_file_name(const std::string& path);

/// A temporary path in the same directory as `final_path` (so link() cannot cross filesystems):
/// `<final_path>.tmp.<pid>`, or `.gpubench-result.json.tmp.<pid>` beside it when that name would be
/// too long for the folder.
std::string temporary_path_for(const std::string& final_path);

/// Moves `tmp` to `final_path` without ever replacing an existing file. Returns false (and
/// leaves `tmp` in place) when `final_path` exists or the move fails; `error` says why.
bool publish_file(const std::string& tmp, const std::string& final_path, std::string* error);

/// Whether `path` holds a whole Google Benchmark JSON document as its reporter ends one (an
/// object with its "benchmarks" array, closed): a write that failed part way (a full disk, a
/// file size limit) leaves it empty or cut, and the stream's error is not reported to gpubench.
/// Otherwise false, with the reason in `error`.
bool whole_json_document(const std::string& path, std::string* error);

/// Publishes `tmp` into the results store under `final_path` or, when another run took that
/// name first (several runs finishing in one second), under the next free "-2", "-3" ... name.
/// Returns the name used, or "" (leaving `tmp` in place) with `error` saying why.
std::string publish_store_file(const std::string& tmp, const std::string& final_path, std::string* error);
/// DIR/<device_key>/<yyyymmddTHHMMSSZ>_<revision>.json for now (UTC), creating the directory.
/// When that name is taken, a suffix -2, -3 ... is added. Throws std::runtime_error on failure.
/// `*created` (when given) says whether this call made the device key's folder.
std::string results_store_path(const std::string& dir, const std::string& device_key, const std::string& revision,
                               bool* created = nullptr);

}  // namespace gpubench
