# Test helpers shared by tests/ and by the plugins' tests beside their sources.
# Tests that need NATS start a real nats-server (tests/support).
include(GoogleTest)

set(GPUAAS_SHARED_DIR "${PROJECT_SOURCE_DIR}/../shared" CACHE PATH
    "Test data from outside the repository (read, never copied)")
get_filename_component(GPUAAS_SHARED_DIR_ABS "${GPUAAS_SHARED_DIR}" ABSOLUTE)

add_library(gpuaas_test_support INTERFACE)
target_include_directories(gpuaas_test_support INTERFACE ${PROJECT_SOURCE_DIR}/tests/support)
target_compile_definitions(gpuaas_test_support INTERFACE
  GPUAAS_SHARED_DIR="${GPUAAS_SHARED_DIR_ABS}"
  GPUAAS_BIN_DIR="${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
target_link_libraries(gpuaas_test_support INTERFACE GTest::gtest_main GTest::gmock gpuaas_bus)

# gpuaas_add_test(NAME SOURCES... LIBS ... [TIMEOUT SECONDS, default 300] [SERIAL]): one executable per
# folder, discovered by ctest. SERIAL: its tests run alone (they measure real time).
function(gpuaas_add_test name)
  cmake_parse_arguments(T "SERIAL" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  set(serial FALSE)
  if(T_SERIAL)
    set(serial TRUE)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE gpuaas_test_support ${T_LIBS})
  gpuaas_target_defaults(${name})
  target_precompile_headers(${name} PRIVATE <gtest/gtest.h> <string> <vector> <memory>)
  # Prefixed with the executable, so `ctest -R ray_plugin` selects one plugin's tests.
  gtest_discover_tests(${name} TEST_PREFIX "${name}." DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT ${T_TIMEOUT} RUN_SERIAL ${serial})
endfunction()

