# Own-target settings: linked PRIVATE so third-party headers never trip -Werror.
add_library(harness_warnings INTERFACE)
target_compile_options(harness_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
  -Wcast-align -Wformat=2
  -Wno-missing-field-initializers)  # designated initializers leave the rest defaulted on purpose

option(HARNESS_WERROR "Treat warnings as errors (CI)" OFF)
if(HARNESS_WERROR)
  target_compile_options(harness_warnings INTERFACE -Werror)
endif()

# The fuzz build (preset fuzz, Debian's clang): every library instrumented for libFuzzer,
# ASan and UBSan; tools/fuzz/ links the fuzz_<name> binaries with -fsanitize=fuzzer.
option(HARNESS_FUZZ "Build the libFuzzer targets (clang)" OFF)
if(HARNESS_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

option(HARNESS_SANITIZE "Build with AddressSanitizer and UBSan" OFF)
if(HARNESS_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  # Position-dependent executables: the sanitizers' metadata made the harness binary carry
  # 894,000 relative relocations, which the loader applied at every start (a quarter of a
  # 55 ms start; the sanitized e2e tests start the binary thousands of times).
  add_compile_options(-fno-pie)
  add_link_options(-no-pie)
  # GCC's uninitialized-use analysis misfires on sanitizer-instrumented code (in libstdc++'s
  # std::regex at -O1); the ci build, uninstrumented at -O2, keeps the warning as an error.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(harness_warnings INTERFACE -Wno-maybe-uninitialized)
  endif()
endif()

# harness_library(NAME SOURCES... DEPS...): a component's static library. Includes are
# rooted at the source tree ("harness/store/store.h"); DEPS are linked PUBLIC.
function(harness_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE harness_warnings)
endfunction()

# The optimization of test sources alone (the *_test.cc files of harness_test targets), e.g.
# -O0; empty: the build type's. The CI presets set -O0: a test body is compiled once and run
# once, so optimizing it costs more than it saves, while the code under test (libraries and
# the harness binary the e2e tests run) keeps the build type's level (ci/README.md).
set(HARNESS_TEST_OPTIMIZE "" CACHE STRING "Optimization flag for test sources only (e.g. -O0)")

# harness_test(NAME SOURCES... LIBS ...): one test binary per component, discovered by CTest.
# Test binaries, and only they, link the test helpers (harness_testing, harness/testing/).
function(harness_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  if(HARNESS_TEST_OPTIMIZE)
    target_compile_options(${name} PRIVATE ${HARNESS_TEST_OPTIMIZE})
  endif()
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} harness_testing GTest::gtest_main GTest::gmock harness_warnings)
  target_compile_definitions(${name} PRIVATE
    HARNESS_SOURCE_ROOT="${HARNESS_SOURCE_ROOT}"
    HARNESS_BINARY="$<TARGET_FILE:harness>")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
    PROPERTIES ENVIRONMENT "HARNESS_ROOT=${HARNESS_SOURCE_ROOT}")
endfunction()

# harness_bench(NAME SOURCES... LIBS... [DEFINITIONS...]): a Google Benchmark binary (not
# run by ctest).
# The asan preset leaves them out: their numbers mean nothing under a sanitizer.
option(HARNESS_BENCHMARKS "Build the Google Benchmark binaries" ON)
function(harness_bench name)
  if(NOT HARNESS_BENCHMARKS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;DEFINITIONS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} benchmark::benchmark harness_warnings)
  target_compile_definitions(${name} PRIVATE ${ARG_DEFINITIONS})
endfunction()
