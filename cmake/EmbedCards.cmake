# Script mode: embeds a table CSV (INPUT) into a C++ source (OUTPUT) as a raw string named
# VARIABLE (default kCardsCsv): the card table and the expected bands.
if(NOT VARIABLE)
  set(VARIABLE kCardsCsv)
endif()
file(READ ${INPUT} csv)
get_filename_component(name ${INPUT} NAME)
set(text "// Generated from harness/model/${name} by cmake/EmbedCards.cmake.\nnamespace gpubench {\nextern const char* const ${VARIABLE};\nconst char* const ${VARIABLE} = R\"gpubench_csv(${csv})gpubench_csv\";\n}  // namespace gpubench\n")
include(${CMAKE_CURRENT_LIST_DIR}/WriteIfChanged.cmake)
write_if_changed(${OUTPUT} "${text}")
