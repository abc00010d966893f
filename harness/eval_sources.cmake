# The eval-loop pieces of harness_core (GSM8K data, prompts, scoring, statistics and
# verdicts) and the eval loop's test binary. Included by harness/CMakeLists.txt.
target_sources(harness_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/answer_extract.cc
  ${CMAKE_CURRENT_LIST_DIR}/gsm8k_data.cc
  ${CMAKE_CURRENT_LIST_DIR}/gsm8k_prompt.cc
  ${CMAKE_CURRENT_LIST_DIR}/gsm8k_score.cc
  ${CMAKE_CURRENT_LIST_DIR}/stats.cc
  ${CMAKE_CURRENT_LIST_DIR}/verdict.cc
)

harness_test(gsm8k_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/answer_extract_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/gsm8k_data_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/gsm8k_score_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/stats_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/verdict_test.cc
    ${PROJECT_SOURCE_DIR}/runners/openai/gsm8k_eval_test.cc
    ${PROJECT_SOURCE_DIR}/runners/openai/openai_client_test.cc
    ${PROJECT_SOURCE_DIR}/runners/openai/progress_test.cc
    ${PROJECT_SOURCE_DIR}/runners/refstack/sim/sim_model_test.cc
    ${PROJECT_SOURCE_DIR}/runners/refstack/sim/sim_profile_test.cc
    ${PROJECT_SOURCE_DIR}/runners/refstack/sim/sim_server_test.cc
  LIBS harness_core openai_client refstack_sim refstack_kernels PkgConfig::HTTPLIB)

# The gsm8k suite end to end through the built binary (kill and resume).
harness_test(gsm8k_e2e_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/gsm8k_e2e_test.cc
  LIBS harness_core refstack_sim)
add_dependencies(gsm8k_e2e_tests harness)
