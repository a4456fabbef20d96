# Precompiled headers for the test executables: GoogleTest and the standard headers the test
# files include most, parsed once per flag set instead of once per file (test_registry.cpp took
# 6.8 s, 1.3 s of it parsing these). GCC uses a precompiled header only under the flags it was made
# with, so each test flag target (cmake/Warnings.cmake) has its own producer, built with the same
# interface targets as the tests that reuse it; a mismatch would show as -Winvalid-pch, an error
# under -Werror, not as a silent slow build. Project headers stay out: a change to one of them
# would rebuild every test's header instead of the tests that include it.
# The producer is an executable like its consumers, so that it is compiled as they are: a static
# library would get -fPIC where they get -fPIE (CMAKE_POSITION_INDEPENDENT_CODE=ON), which GCC
# refuses for a precompiled header. It links the sanitizers whatever the consumer: every test
# target of a sanitizer tree has them.
function(gpubench_test_pch target flags)
  set(producer gpubench_test_pch_${flags})
  if(NOT TARGET ${producer})
    set(anchor ${PROJECT_BINARY_DIR}/test_pch/${producer}.cpp)
    file(GENERATE OUTPUT ${anchor}
         CONTENT "// The translation unit that owns ${producer}'s precompiled header.\nint main() { return 0; }\n")
    add_executable(${producer} ${anchor})
    target_link_libraries(${producer} PRIVATE GTest::gtest gpubench_sanitize gpubench_warnings ${flags})
    target_precompile_headers(${producer} PRIVATE
      <gtest/gtest.h> <algorithm> <chrono> <cmath> <cstdint> <cstring> <functional> <map> <memory>
      <random> <set> <sstream> <stdexcept> <string> <vector>)
  endif()
  target_precompile_headers(${target} REUSE_FROM ${producer})
endfunction()
