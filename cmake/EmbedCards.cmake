# Script mode: embeds the card table CSV (INPUT) into a C++ source (OUTPUT) as a raw string.
file(READ ${INPUT} csv)
set(text "// Generated from harness/model/cards.csv by cmake/EmbedCards.cmake.\nnamespace gpubench {\nextern const char* const kCardsCsv;\nconst char* const kCardsCsv = R\"gpubench_csv(${csv})gpubench_csv\";\n}  // namespace gpubench\n")
include(${CMAKE_CURRENT_LIST_DIR}/WriteIfChanged.cmake)
write_if_changed(${OUTPUT} "${text}")
