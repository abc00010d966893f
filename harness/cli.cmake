# The CLI: every command in harness_cli (shared with the tests), a thin main.
add_library(harness_cli STATIC
  harness/commands.cc
  harness/cmd_run.cc
  harness/cmd_history.cc
  harness/cmd_report.cc
  harness/cmd_version.cc
  harness/cmd_pending.cc
  harness/cmd_serve_sim.cc
)
target_link_libraries(harness_cli
  PUBLIC harness_core harness_stacks harness_reports refstack_sim CLI11::CLI11
  PRIVATE harness_warnings)

add_executable(harness harness/main.cc $<TARGET_OBJECTS:harness_suites>)
target_link_libraries(harness PRIVATE harness_cli harness_suites CURL::libcurl harness_warnings)
set_target_properties(harness PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# End-to-end tests of the real binary (they run build/harness as a subprocess).
harness_test(cli_tests
  SOURCES harness/cli_test.cc harness/run_e2e_test.cc harness/catalogue_e2e_test.cc
  LIBS harness_cli)
add_dependencies(cli_tests harness)
