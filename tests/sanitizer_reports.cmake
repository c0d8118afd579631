# The sanitizer tier's first and last steps (cmake -P): with -D clear=ON,
# empties the folder the sanitizers write their reports to; without, prints
# every report there and fails if there is one.
if(clear)
  file(REMOVE_RECURSE ${logs})
  file(MAKE_DIRECTORY ${logs})
  return()
endif()
file(GLOB reports ${logs}/*)
if(NOT reports)
  message("no sanitizer reports")
  return()
endif()
# The first few in full (one bug often fails many runs of the tool), then
# every file's name, which begins with its test's name.
list(LENGTH reports count)
set(shown 0)
foreach(report IN LISTS reports)
  get_filename_component(name ${report} NAME)
  if(shown LESS 3)
    file(READ ${report} text)
    message("==== ${name}\n${text}")
    math(EXPR shown "${shown} + 1")
  else()
    message("==== ${name} (not shown)")
  endif()
endforeach()
message(FATAL_ERROR "${count} sanitizer report(s) in ${logs}")
