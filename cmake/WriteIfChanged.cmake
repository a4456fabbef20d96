# write_if_changed(PATH TEXT): writes TEXT to PATH only when PATH does not already hold it, so
# a generated file keeps its timestamp and nothing that includes it is rebuilt for nothing.
# Shared by the script-mode generators (EmbedCards.cmake, WriteVersion.cmake).
function(write_if_changed path text)
  set(old "")
  if(EXISTS "${path}")
    file(READ "${path}" old)
  endif()
  if(NOT "${old}" STREQUAL "${text}")
    file(WRITE "${path}" "${text}")
  endif()
endfunction()
