#include "harness/memory_check.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gpubench {

namespace {

std::string mib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

std::string bytes_or_unknown(const std::optional<MemoryReading>& r, std::uint64_t MemoryReading::*field) {
  return r ? std::to_string((*r).*field) : std::string("unknown");
}

// A JSON string literal: quotes, backslashes and control characters escaped.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

}  // namespace

std::uint64_t cuda_leak_tolerance_bytes(std::uint64_t total_bytes, std::uint64_t flush_buffer_bytes) {
  return std::max(kMinLeakToleranceBytes, total_bytes / 100) + flush_buffer_bytes;
}

MemoryCheck check_memory(const std::optional<MemoryReading>& start, const std::optional<MemoryReading>& end) {
  MemoryCheck m;
  if (!start || !end) {
    m.summary = std::string("not checked: the memory could not be read at the ") + (start ? "end" : "start");
    return m;
  }
  const std::string what = start->used_what.empty() ? std::string("memory in use") : start->used_what;
  const std::uint64_t tolerance = start->leak_tolerance_bytes;
  const std::string figures = what + ": " + mib(start->used_bytes) + " MiB at the start, " + mib(end->used_bytes) +
                              " MiB at the end, tolerance " + mib(tolerance) + " MiB";
  const std::string shared = !start->shared_with.empty() ? start->shared_with : end->shared_with;
  if (end->used_bytes > start->used_bytes && end->used_bytes - start->used_bytes > tolerance && !shared.empty()) {
    // Device-wide memory: what another process allocated meanwhile is in it too.
    m.summary = "not attributed: " + figures + "; other processes used the device: " + shared;
    m.note = "gpubench: note: " + what + " grew by " + mib(end->used_bytes - start->used_bytes) +
             " MiB over the run while other processes used the device (" + shared + "): not counted as this run's leak";
  } else if (end->used_bytes > start->used_bytes && end->used_bytes - start->used_bytes > tolerance) {
    m.leaked = true;
    m.summary = "leak: " + figures;
    m.line = "gpubench: memory leak: " + what + " grew from " + mib(start->used_bytes) +
             " MiB at the start of the run to " + mib(end->used_bytes) + " MiB at its end (+" +
             mib(end->used_bytes - start->used_bytes) + " MiB), more than the tolerance of " + mib(tolerance) +
             " MiB: a benchmark kept memory after its workload was released";
  } else {
    m.summary = "ok: " + figures;
  }
  return m;
}

ContextEntries start_memory_context(const std::optional<MemoryReading>& start) {
  return {{"memory_total_bytes", bytes_or_unknown(start, &MemoryReading::total_bytes)},
          {"memory_free_start_bytes", bytes_or_unknown(start, &MemoryReading::free_bytes)}};
}

ContextEntries end_memory_context(const std::optional<MemoryReading>& end, const MemoryCheck& check) {
  return {{"memory_free_end_bytes", bytes_or_unknown(end, &MemoryReading::free_bytes)},
          {"memory_leak_check", check.summary}};
}

bool insert_context_entries(std::string& json, const ContextEntries& entries, std::string* error) {
  const auto fail = [error](const std::string& why) {
    if (error) *error = why;
    return false;
  };
  if (entries.empty()) return true;
  // Google Benchmark's JSONReporter opens every file with "{\n  \"context\": {\n    \"date\": ..."
  // (one entry per line); a document in any other layout is left alone.
  static const std::string kContext = "\"context\": {";
  const std::size_t open = json.find_first_not_of(" \t\r\n");
  if (open == std::string::npos || json[open] != '{') return fail("the file is not a JSON object");
  const std::size_t key = json.find_first_not_of(" \t\r\n", open + 1);
  if (key == std::string::npos || json.compare(key, kContext.size(), kContext) != 0)
    return fail("its first entry is not the \"context\" object");
  const std::size_t line_end = key + kContext.size();
  if (line_end >= json.size() || json[line_end] != '\n') return fail("\"context\": { is not a line of its own");
  const std::size_t next = json.find_first_not_of(" \t", line_end + 1);
  if (next == std::string::npos) return fail("the file ends inside the context");
  std::string indent;
  bool empty = false;
  if (json[next] == '"') {  // the first entry: the new ones go before it, indented alike
    indent = json.substr(line_end + 1, next - line_end - 1);
  } else if (json[next] == '}') {  // an empty context
    empty = true;
    const std::size_t line_start = json.rfind('\n', key);
    indent = std::string(line_start == std::string::npos ? key - open - 1 : key - line_start - 1, ' ') + "  ";
  } else {
    return fail("the context's first line is not an entry");
  }
  std::string text;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    text += indent + json_string(entries[i].first) + ": " + json_string(entries[i].second);
    text += (i + 1 < entries.size() || !empty) ? ",\n" : "\n";
  }
  json.insert(line_end + 1, text);
  return true;
}

bool add_context_entries_to_file(const std::string& path, const ContextEntries& entries, std::string* error) {
  std::string json;
  {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream buf;
    buf << in.rdbuf();
    if (!in.is_open() || !buf) {
      if (error) *error = "cannot read '" + path + "'";
      return false;
    }
    json = buf.str();
  }
  if (!insert_context_entries(json, entries, error)) return false;
  // A new file renamed over the old one: either the whole new document or the old one, intact.
  // Named short beside it (a result name near the length limit leaves no room for a suffix) and
  // created only if nothing has that name: never written through a link or over a file someone
  // left there.
  const std::size_t slash = path.find_last_of('/');
  const std::string side = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) +
                           ".gpubench-context.tmp." + std::to_string(::getpid());
  {
    const int fd = ::open(side.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
      if (error) *error = "cannot create '" + side + "': " + std::strerror(errno);
      return false;
    }
    std::size_t done = 0;
    while (done < json.size()) {
      const ssize_t n = ::write(fd, json.data() + done, json.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    const int saved = errno;
    if (::close(fd) != 0 || done < json.size()) {
      ::unlink(side.c_str());
      if (error) *error = "cannot write '" + side + "': " + std::strerror(done < json.size() ? saved : errno);
      return false;
    }
  }
  if (std::rename(side.c_str(), path.c_str()) != 0) {
    ::unlink(side.c_str());
    if (error) *error = "cannot replace '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace gpubench
