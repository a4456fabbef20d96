# Google Benchmark and GoogleTest: the system packages when present, FetchContent otherwise.
include(FetchContent)

find_package(Threads REQUIRED)

# 1.7: --benchmark_time_unit (from 1.6.2), which gpubench always passes (us unless given).
find_package(benchmark 1.7 QUIET)
if(NOT benchmark_FOUND)
  message(STATUS "Google Benchmark not found: fetching it")
  set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
  set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
  FetchContent_Declare(benchmark
    GIT_REPOSITORY https://github.com/google/benchmark.git
    GIT_TAG v1.8.3)
  FetchContent_MakeAvailable(benchmark)
endif()
# From 1.8 Google Benchmark reads --benchmark_min_time as <seconds>s (or <iterations>x) and logs
# a line for every benchmark given a bare number: gpubench passes the form the library reads.
if(NOT benchmark_FOUND OR benchmark_VERSION VERSION_GREATER_EQUAL 1.8)
  set(GPUBENCH_GBENCH_MIN_TIME_SUFFIX 1)
else()
  set(GPUBENCH_GBENCH_MIN_TIME_SUFFIX 0)
endif()

if(GPUBENCH_TESTS)
  find_package(GTest 1.10 QUIET)
  if(NOT GTest_FOUND)
    message(STATUS "GoogleTest not found: fetching it")
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    FetchContent_Declare(googletest
      GIT_REPOSITORY https://github.com/google/googletest.git
      GIT_TAG v1.14.0)
    FetchContent_MakeAvailable(googletest)
  endif()
endif()

# RE2 (Debian's libre2-dev), linked statically so that gpubench needs no RE2 at run time (the
# device kit carries the binary to machines without it). RE2_ROOT may point at another prefix.
find_path(RE2_INCLUDE_DIR re2/re2.h HINTS ${RE2_ROOT} PATH_SUFFIXES include)
find_library(RE2_LIBRARY NAMES libre2.a re2 HINTS ${RE2_ROOT} PATH_SUFFIXES lib lib/x86_64-linux-gnu lib64)
if(NOT RE2_INCLUDE_DIR OR NOT RE2_LIBRARY)
  message(FATAL_ERROR "RE2 not found (apt-get install libre2-dev, or set RE2_ROOT)")
endif()
add_library(gpubench_re2 INTERFACE)
target_include_directories(gpubench_re2 SYSTEM INTERFACE ${RE2_INCLUDE_DIR})
target_link_libraries(gpubench_re2 INTERFACE ${RE2_LIBRARY} Threads::Threads)
