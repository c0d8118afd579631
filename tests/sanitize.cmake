# The sanitizer tiers. STATGPU_SANITIZE=ON: every test registered above runs
# against the engine and tool built with ASan and UBSan. STATGPU_SANITIZE=
# thread: the same tests with ThreadSanitizer, those that run the engine from
# several threads at once -- its own thread pool, contexts, and every method
# from many threads with a context each -- labelled thread_sanitizer (ctest
# -L thread_sanitizer runs them; any other test can run under it by name).
# Sanitizer reports go to files in one folder, and a last test fails on any
# of them: the CLI tests run the tool on bad input and expect it to fail, so
# a report from a process that was meant to fail would otherwise pass unseen.
# A report's file name begins with its test's name.
set(statgpu_sanitizer_logs ${CMAKE_CURRENT_BINARY_DIR}/sanitizer-reports)
set(statgpu_thread_sanitizer_tests engine_pool engine_context engine_context_omp_num_threads
  engine_context_affinity engine_cuda_module_missing engine_concurrency)
set(statgpu_thread_tier FALSE)
if(STATGPU_SANITIZE STREQUAL "thread")
  set(statgpu_thread_tier TRUE)
endif()

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
  # options (detect_leaks=0 where LeakSanitizer cannot run).
  set(log ${statgpu_sanitizer_logs}/${test})
  if(statgpu_thread_tier)
    # The engine's threads are its own (core/pool.c, no OpenMP), so the tool
    # sees every synchronisation and nothing is suppressed.
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT_MODIFICATION
      "TSAN_OPTIONS=string_append::log_path=${log}.tsan:halt_on_error=1:second_deadlock_stack=1")
    if(test IN_LIST statgpu_thread_sanitizer_tests)
      set_property(TEST ${test} APPEND PROPERTY LABELS thread_sanitizer)
    endif()
  else()
    # An allocation too large returns NULL, as from the C library, instead of
    # stopping the test: refusing an impossible size with OUT_OF_MEMORY is the
    # engine's job.
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT_MODIFICATION
      "ASAN_OPTIONS=string_append::log_path=${log}.asan:allocator_may_return_null=1:detect_stack_use_after_return=1:strict_string_checks=1"
      "UBSAN_OPTIONS=string_append::log_path=${log}.ubsan:print_stacktrace=1:halt_on_error=1")
  endif()
  set_property(TEST ${test} APPEND PROPERTY FIXTURES_REQUIRED statgpu_sanitizer)
endforeach()

# Registered after the loop: their reports go to their own output, where they
# are expected, not to the folder that must stay empty.
add_executable(sanitizer_canary sanitizer_canary.c)
target_link_libraries(sanitizer_canary PRIVATE Threads::Threads)
if(statgpu_thread_tier)
  set_tests_properties(sanitizer_reports_clear sanitizer_reports PROPERTIES LABELS thread_sanitizer)
  add_test(NAME sanitizer_catches_race COMMAND sanitizer_canary thread)
  set_tests_properties(sanitizer_catches_race PROPERTIES
    PASS_REGULAR_EXPRESSION "ThreadSanitizer: data race" LABELS thread_sanitizer)
else()
  add_test(NAME sanitizer_catches_address COMMAND sanitizer_canary address)
  set_tests_properties(sanitizer_catches_address PROPERTIES
    PASS_REGULAR_EXPRESSION "AddressSanitizer: heap-buffer-overflow")
  add_test(NAME sanitizer_catches_undefined COMMAND sanitizer_canary undefined)
  set_tests_properties(sanitizer_catches_undefined PROPERTIES
    PASS_REGULAR_EXPRESSION "runtime error: signed integer overflow")
endif()
