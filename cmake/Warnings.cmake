# All warnings are errors, for host code here and for device code in cmake/Cuda.cmake.
add_library(gpubench_warnings INTERFACE)
target_compile_options(gpubench_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Werror>)
# GCC 12 reports false maybe-uninitialized warnings inside <regex> when the sanitizers change
# its inlining; the Release build keeps the warning (as an error) for our own code.
if(GPUBENCH_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(gpubench_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
endif()

# Sanitizer flags for host code (the test command builds a second tree with them).
add_library(gpubench_sanitize INTERFACE)
if(GPUBENCH_SANITIZE)
  target_compile_options(gpubench_sanitize INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer>)
  target_link_options(gpubench_sanitize INTERFACE -fsanitize=address,undefined)
endif()

# Test executables: their own code runs little (what they test, gpubench's libraries, keeps the
# build type's optimization), and GoogleTest's expanded macros take twice as long to compile at
# -O2/-O3 and longer still under the sanitizers, so the unit tests build at -O0: a test file took
# 33 s at -O1 under the sanitizers and 10 s at -O0, and in the Release tree -O0 with the
# precompiled headers (cmake/TestPch.cmake) halved test_registry.cpp (6.8 s to 3.6 s). Tests that
# run kernel bodies compiled into them (the emulation tests, and the fake-runtime tests with their
# host launchers) keep -O1 (gpubench_emulation_test_flags): with every test at -O0 the sanitizer
# tree's ctest took 160 s instead of 90 s (on one loaded machine), nearly all of it the wgmma
# emulation.
add_library(gpubench_test_flags INTERFACE)
add_library(gpubench_emulation_test_flags INTERFACE)
target_compile_options(gpubench_emulation_test_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
target_compile_options(gpubench_test_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-O0>)
