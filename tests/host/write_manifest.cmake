# Writes a plugin manifest beside a test plugin (the host refuses a library without one):
#   cmake -DLIB=libx.so -DOUT=libx.yaml -DNAME=x -DVERSION=1.0.0 -DKINDS=group/version/Kind[,...]
#         [-DSHA=hex] -P write_manifest.cmake
# sha256 is the library file's unless SHA is given (to test a mismatch). An empty group is
# written as "/v1/Pod".
foreach(var LIB OUT NAME VERSION KINDS)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "write_manifest.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT SHA)
  file(SHA256 "${LIB}" SHA)
endif()

set(text "# Written by tests/host/write_manifest.cmake\nname: ${NAME}\nversion: ${VERSION}\nkinds:\n")
string(REPLACE "," ";" kinds "${KINDS}")
foreach(k IN LISTS kinds)
  string(REPLACE "/" ";" parts "${k}")
  list(LENGTH parts n)
  if(NOT n EQUAL 3)
    message(FATAL_ERROR "write_manifest.cmake: kind \"${k}\" is not group/version/Kind")
  endif()
  list(GET parts 0 group)
  list(GET parts 1 version)
  list(GET parts 2 kind)
  string(APPEND text "  - {group: \"${group}\", version: \"${version}\", kind: \"${kind}\"}\n")
endforeach()
string(APPEND text "sha256: ${SHA}\n")
file(WRITE "${OUT}" "${text}")
