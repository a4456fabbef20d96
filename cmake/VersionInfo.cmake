# version.h: the gpubench version and the git revision the binary was built from. Regenerated
# at every build (the file changes only when the revision does), so results name the right one.
set(GPUBENCH_VERSION_HEADER ${CMAKE_CURRENT_BINARY_DIR}/generated/version.h)
add_custom_target(gpubench_version
  COMMAND ${CMAKE_COMMAND}
          -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}
          -DOUTPUT=${GPUBENCH_VERSION_HEADER}
          -DVERSION=${PROJECT_VERSION}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/WriteVersion.cmake
  BYPRODUCTS ${GPUBENCH_VERSION_HEADER}
  COMMENT "Recording the git revision")
