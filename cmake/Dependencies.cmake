# Google Benchmark and GoogleTest: the system packages when present, FetchContent otherwise.
include(FetchContent)

find_package(Threads REQUIRED)

find_package(benchmark 1.6 QUIET)
if(NOT benchmark_FOUND)
  message(STATUS "Google Benchmark not found: fetching it")
  set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
  set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
  FetchContent_Declare(benchmark
    GIT_REPOSITORY https://github.com/google/benchmark.git
    GIT_TAG v1.8.3)
  FetchContent_MakeAvailable(benchmark)
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
