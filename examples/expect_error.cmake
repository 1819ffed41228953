# cmake -DPROGRAM=<exe> [-DARGS=<a;b>] -DEXPECT=<regex> -DSKIP_IF=<regex> -P expect_error.cmake
# Runs PROGRAM and passes when it exits with status 1 and its stderr matches EXPECT: the error a user meets is one
# readable line, not std::terminate's abort (status 134 and a core dump). When it exits 0 and its stdout matches
# SKIP_IF, the error could not be provoked on this machine: prints "SKIPPED: ..." (the test's
# SKIP_REGULAR_EXPRESSION) instead of passing or failing.
foreach(var PROGRAM EXPECT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "expect_error.cmake: ${var} is not set")
  endif()
endforeach()
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 AND DEFINED SKIP_IF AND out MATCHES "${SKIP_IF}")
  message("SKIPPED: ${PROGRAM} ran without the error on this machine:\n${out}")
  return()
endif()
set(report "exit status ${rc}\n--- stdout\n${out}--- stderr\n${err}")
if(NOT rc STREQUAL "1")
  message(FATAL_ERROR "${PROGRAM}: expected exit status 1; ${report}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "${PROGRAM}: stderr does not match '${EXPECT}'; ${report}")
endif()
if(err MATCHES "terminate called")
  message(FATAL_ERROR "${PROGRAM}: ended in std::terminate; ${report}")
endif()
message(STATUS "${PROGRAM}: exit status 1 with the expected message:\n${err}")
