# The sanitizer tier (STATGPU_SANITIZE=ON): every test registered above runs
# against the instrumented engine and tool. Sanitizer reports go to files in one
# folder, and a last test fails on any of them: the CLI tests run the
# tool on bad input and expect it to fail, so a report from a process that was
# meant to fail would otherwise pass unseen. A report's file name begins with
# its test's name.
set(statgpu_sanitizer_logs ${CMAKE_CURRENT_BINARY_DIR}/sanitizer-reports)

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
  # options (detect_leaks=0 where LeakSanitizer cannot run). An allocation
  # too large returns NULL, as from the C library, instead of stopping the
  # test: refusing an impossible size with OUT_OF_MEMORY is the engine's job.
  set(log ${statgpu_sanitizer_logs}/${test})
  set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT_MODIFICATION
    "ASAN_OPTIONS=string_append::log_path=${log}.asan:allocator_may_return_null=1:detect_stack_use_after_return=1:strict_string_checks=1"
    "UBSAN_OPTIONS=string_append::log_path=${log}.ubsan:print_stacktrace=1:halt_on_error=1")
  set_property(TEST ${test} APPEND PROPERTY FIXTURES_REQUIRED statgpu_sanitizer)
endforeach()

# Registered after the loop: its reports go to its own output, where they are
# expected, not to the folder that must stay empty.
add_executable(sanitizer_canary sanitizer_canary.c)
target_link_libraries(sanitizer_canary PRIVATE Threads::Threads)
add_test(NAME sanitizer_catches_address COMMAND sanitizer_canary address)
set_tests_properties(sanitizer_catches_address PROPERTIES
  PASS_REGULAR_EXPRESSION "AddressSanitizer: heap-buffer-overflow")
add_test(NAME sanitizer_catches_undefined COMMAND sanitizer_canary undefined)
set_tests_properties(sanitizer_catches_undefined PROPERTIES
  PASS_REGULAR_EXPRESSION "runtime error: signed integer overflow")
