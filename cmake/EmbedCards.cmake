# Script mode: embeds the card table CSV (INPUT) into a C++ source (OUTPUT) as a raw string.
file(READ ${INPUT} csv)
set(text "// Generated from harness/model/cards.csv by cmake/EmbedCards.cmake.\nnamespace gpubench {\nextern const char* const kCardsCsv;\nconst char* const kCardsCsv = R\"gpubench_csv(${csv})gpubench_csv\";\n}  // namespace gpubench\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUTPUT} "${text}")
endif()
