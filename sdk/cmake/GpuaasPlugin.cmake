# gpuaas_add_plugin(NAME SOURCES src... [LIBS lib...] [OUTPUT_DIRECTORY dir]
#                   [INSTALL_DESTINATION dir] [INSTALL_RPATH path])
#
# Builds a workload plugin: a MODULE library lib<NAME>.so with hidden visibility (only the entry
# point is exported) and no undefined symbols, linked to the SDK. Its manifest (lib<NAME>.yaml:
# name, version, kinds, sha256) is written beside it after every link, and again at the install
# destination after `cmake --install` rewrote its RPATH, so each copy matches its own file.
# The sources also form an OBJECT library <NAME>_objects, for tests that run the plugin in-process
# with the SDK's fake host (gpuaas/plugin/testing.hpp).
#
# Works the same in the gpuaas tree and in an outside project after find_package(gpuaas-sdk).
function(gpuaas_add_plugin name)
  cmake_parse_arguments(P "" "OUTPUT_DIRECTORY;INSTALL_DESTINATION;INSTALL_RPATH" "SOURCES;LIBS"
                        ${ARGN})
  if(NOT P_SOURCES)
    message(FATAL_ERROR "gpuaas_add_plugin(${name}): SOURCES is empty")
  endif()
  if(NOT P_OUTPUT_DIRECTORY)
    set(P_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/plugins)
  endif()
  if(NOT P_INSTALL_DESTINATION)
    set(P_INSTALL_DESTINATION lib/gpuaas/plugins)
  endif()
  if(NOT DEFINED P_INSTALL_RPATH)
    set(P_INSTALL_RPATH "${GPUAAS_PLUGIN_INSTALL_RPATH}")
  endif()

  add_library(${name}_objects OBJECT ${P_SOURCES})
  set_target_properties(${name}_objects PROPERTIES CXX_VISIBILITY_PRESET hidden
                                                   VISIBILITY_INLINES_HIDDEN ON
                                                   POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(${name}_objects PUBLIC gpuaas::plugin_sdk ${P_LIBS})
  # Every plugin source parses the same heavy headers (JSON, protobuf): parse them once.
  target_precompile_headers(${name}_objects PRIVATE <nlohmann/json.hpp> <gpuaas/v1/plugin.pb.h>)

  add_library(${name} MODULE $<TARGET_OBJECTS:${name}_objects>)
  target_link_libraries(${name} PRIVATE gpuaas::plugin_sdk ${P_LIBS})
  target_link_options(${name} PRIVATE -Wl,--no-undefined)
  set_target_properties(${name} PROPERTIES
    PREFIX "lib"
    LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIRECTORY}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    INSTALL_RPATH "${P_INSTALL_RPATH}")
  if(TARGET gpuaas-plugin-manifest)
    add_dependencies(${name} gpuaas-plugin-manifest)
  endif()
  add_custom_command(TARGET ${name} POST_BUILD
    COMMAND ${GPUAAS_PLUGIN_MANIFEST_TOOL} $<TARGET_FILE:${name}>
    COMMENT "Writing the manifest of plugin ${name}")

  install(TARGETS ${name} LIBRARY DESTINATION ${P_INSTALL_DESTINATION})
  install(CODE "
    set(_lib \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${P_INSTALL_DESTINATION}/$<TARGET_FILE_NAME:${name}>\")
    execute_process(COMMAND \"${GPUAAS_PLUGIN_MANIFEST_TOOL}\" \"\${_lib}\" RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR \"gpuaas: could not write the manifest of \${_lib}\")
    endif()
    message(STATUS \"Manifest: \${_lib}\")")
endfunction()
