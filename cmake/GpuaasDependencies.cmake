# Every dependency comes from a Debian 12 package (README lists them).
find_package(PkgConfig REQUIRED)
# Debian's cnats CMake config names a static library the package does not ship: use pkg-config.
pkg_check_modules(NATS REQUIRED IMPORTED_TARGET libnats)
find_package(Protobuf REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS filesystem)
find_package(spdlog REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(simdjson REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto SSL)  # sha256 of plugin libraries; the TLS shim

# Debian's civetweb CMake config names a binary that is not shipped: find the library directly.
find_library(CIVETWEB_LIBRARY NAMES civetweb REQUIRED)
find_path(CIVETWEB_INCLUDE_DIR civetweb.h REQUIRED)
add_library(gpuaas_civetweb INTERFACE)
target_link_libraries(gpuaas_civetweb INTERFACE ${CIVETWEB_LIBRARY})
target_include_directories(gpuaas_civetweb SYSTEM INTERFACE ${CIVETWEB_INCLUDE_DIR})

# gpuaas-bridge talks HTTPS to the Kubernetes API with libcurl (Debian libcurl4-openssl-dev).
find_package(CURL REQUIRED)

if(GPUAAS_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
find_package(benchmark REQUIRED)

# The daemon allocates per event; jemalloc cuts that cost by about a quarter (gpuaas-bench bus).
find_library(JEMALLOC_LIBRARY NAMES jemalloc REQUIRED)
