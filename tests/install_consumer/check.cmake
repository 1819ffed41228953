# cmake -DLAZYFUSE_BINARY_DIR=... -DCONSUMER_SOURCE_DIR=... -DWORK_DIR=... [-DCONFIG=...] [-DGENERATOR=...]
#       [-DCXX_COMPILER=...] -P check.cmake
# Installs the lazyfuse build into WORK_DIR/prefix, then configures, builds and runs the consumer against it.
foreach(var LAZYFUSE_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check.cmake: ${var} is not set")
  endif()
endforeach()
# CONFIG is the build's configuration ($<CONFIG>); empty for a single-config build without CMAKE_BUILD_TYPE.
set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()

set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

execute_process(COMMAND ${CMAKE_COMMAND} --install ${LAZYFUSE_BINARY_DIR} --prefix ${prefix} ${config_args}
  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
foreach(header runtime.hpp elementwise.hpp detail/weak_scalar.hpp)
  if(NOT EXISTS ${prefix}/include/lazyfuse/${header})
    message(FATAL_ERROR "install_consumer: ${prefix}/include/lazyfuse/${header} was not installed")
  endif()
endforeach()

set(configure_args -S ${CONSUMER_SOURCE_DIR} -B ${build} -DCMAKE_PREFIX_PATH=${prefix})
if(CONFIG)
  list(APPEND configure_args -DCMAKE_BUILD_TYPE=${CONFIG})
endif()
if(GENERATOR)
  list(APPEND configure_args -G ${GENERATOR})
endif()
if(CXX_COMPILER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} ${configure_args} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${build} ${config_args} COMMAND_ERROR_IS_FATAL ANY)

find_program(consumer NAMES consumer PATHS ${build} ${build}/${CONFIG} NO_DEFAULT_PATH REQUIRED)
execute_process(COMMAND ${consumer} RESULT_VARIABLE rc COMMAND_ERROR_IS_FATAL ANY)
message(STATUS "install_consumer: installed, configured, built and ran ${consumer}")
