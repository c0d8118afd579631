# The ThreadSanitizer tier (STATGPU_SANITIZE=thread): the tests that run the
# engine from several threads at once -- its own thread pool, contexts, and
# every method from many threads with a context each -- against the
# instrumented engine, labelled thread_sanitizer (ctest -L thread_sanitizer
# runs them; the other tests registered above can run under ThreadSanitizer
# too, by name). As in the ASan tier (sanitize.cmake), reports go to files in
# one folder and a last test fails on any of them; halt_on_error also fails
# the test whose run raced. A report's file name begins with its test's name.
set(statgpu_sanitizer_logs ${CMAKE_CURRENT_BINARY_DIR}/sanitizer-reports)
set(statgpu_thread_sanitizer_tests engine_pool engine_context engine_context_omp_num_threads
  engine_context_affinity engine_cuda_module_missing engine_concurrency)

get_property(statgpu_sanitized_tests DIRECTORY PROPERTY TESTS)

add_test(NAME sanitizer_reports_clear
  COMMAND ${CMAKE_COMMAND} -D logs=${statgpu_sanitizer_logs} -D clear=ON
    -P ${CMAKE_CURRENT_SOURCE_DIR}/sanitizer_reports.cmake)
set_tests_properties(sanitizer_reports_clear PROPERTIES FIXTURES_SETUP statgpu_sanitizer)
add_test(NAME sanitizer_reports
  COMMAND ${CMAKE_COMMAND} -D logs=${statgpu_sanitizer_logs}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/sanitizer_reports.cmake)
set_tests_properties(sanitizer_reports PROPERTIES FIXTURES_CLEANUP statgpu_sanitizer)

foreach(test IN LISTS statgpu_sanitized_tests)
  get_test_property(${test} DISABLED disabled)
  if(disabled)
    continue()
  endif()
  # Appended to what the environment already holds, so that the caller may add
  # options. The engine's threads are its own (core/pool.c, no OpenMP), so the
  # tool sees every synchronisation and nothing is suppressed.
  set(log ${statgpu_sanitizer_logs}/${test})
  set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT_MODIFICATION
    "TSAN_OPTIONS=string_append::log_path=${log}.tsan:halt_on_error=1:second_deadlock_stack=1")
  set_property(TEST ${test} APPEND PROPERTY FIXTURES_REQUIRED statgpu_sanitizer)
  if(test IN_LIST statgpu_thread_sanitizer_tests)
    set_property(TEST ${test} APPEND PROPERTY LABELS thread_sanitizer)
  endif()
endforeach()
set_tests_properties(sanitizer_reports_clear sanitizer_reports PROPERTIES LABELS thread_sanitizer)

# Registered after the loop: its report goes to its own output, where it is
# expected, not to the folder that must stay empty.
add_executable(sanitizer_canary sanitizer_canary.c)
target_link_libraries(sanitizer_canary PRIVATE Threads::Threads)
add_test(NAME sanitizer_catches_race COMMAND sanitizer_canary thread)
set_tests_properties(sanitizer_catches_race PROPERTIES
  PASS_REGULAR_EXPRESSION "ThreadSanitizer: data race" LABELS thread_sanitizer)
