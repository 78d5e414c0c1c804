# cmake -DPROGRAM=... -DKIND=man|bash|zsh|fish -DOUT=FILE -P generate_cli_docs.cmake
# A man page is compressed as Debian policy asks (gzip -9n: no name, no time, so builds are identical).
# A sanitizer build's program must not fail the build on its exit-time leak check.
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
set(ENV{ASAN_OPTIONS} detect_leaks=0)
if(KIND STREQUAL "man")
  set(text ${OUT}.text)
else()
  set(text ${OUT})
endif()
execute_process(COMMAND ${PROGRAM} --generate-docs ${KIND} OUTPUT_FILE ${text} RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  file(REMOVE ${text})
  message(FATAL_ERROR "${PROGRAM} --generate-docs ${KIND} failed: ${result}")
endif()
if(KIND STREQUAL "man")
  execute_process(COMMAND gzip -9nc ${text} OUTPUT_FILE ${OUT} COMMAND_ERROR_IS_FATAL ANY)
endif()
