# All warnings are errors, for host code here and for device code in cmake/Cuda.cmake.
add_library(gpubench_warnings INTERFACE)
target_compile_options(gpubench_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Werror>)

# Sanitizer flags for host code (the test command builds a second tree with them).
add_library(gpubench_sanitize INTERFACE)
if(GPUBENCH_SANITIZE)
  target_compile_options(gpubench_sanitize INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer>)
  target_link_options(gpubench_sanitize INTERFACE -fsanitize=address,undefined)
endif()
