# The optional LLVM CPU code generator (runtime/LlvmCodegen.h). LAZYFUSE_LLVM:
#   AUTO (default): on when LLVM 19 (its CMake package) and clang-19 are both found, else off with a status line
#   ON: both are required (configuring fails without them)
#   OFF: not searched; the CPU backend interprets every kernel (the GPU machine builds this way: it has no LLVM)
# Version 19.1 (LLVM's package accepts a request only with its major and minor version): Debian 12's machine
# image also carries LLVM 14, which an unversioned search would pick.
# Sets LAZYFUSE_LLVM_ENABLED, LAZYFUSE_LLVM_REASON (a sentence for lazyfuse-info), LAZYFUSE_CLANG (the compiler of
# the op library's bitcode) and LAZYFUSE_LLVM_LIBRARY (libLLVM-19.so, linked by path: an installed lazyfuse's
# consumers need no find_package(LLVM)).
set(LAZYFUSE_LLVM AUTO CACHE STRING "LLVM CPU code generator: AUTO (when LLVM 19 and clang-19 are found), ON, OFF")
set_property(CACHE LAZYFUSE_LLVM PROPERTY STRINGS AUTO ON OFF)

set(LAZYFUSE_LLVM_ENABLED OFF)
if(LAZYFUSE_LLVM STREQUAL "OFF")
  set(LAZYFUSE_LLVM_REASON "built with LAZYFUSE_LLVM=OFF")
else()
  find_package(LLVM 19.1 CONFIG QUIET PATHS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
  if(NOT LLVM_FOUND)
    find_package(LLVM 19.1 CONFIG QUIET)
  endif()
  if(LLVM_FOUND)
    find_program(LAZYFUSE_CLANG NAMES clang-19 clang HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
    find_program(LAZYFUSE_CLANG NAMES clang-19)
    find_library(LAZYFUSE_LLVM_LIBRARY NAMES LLVM-19 LLVM HINTS ${LLVM_LIBRARY_DIR} NO_DEFAULT_PATH)
  endif()
  if(LLVM_FOUND AND LAZYFUSE_CLANG AND LAZYFUSE_LLVM_LIBRARY)
    set(LAZYFUSE_LLVM_ENABLED ON)
    set(LAZYFUSE_LLVM_REASON "built with LLVM ${LLVM_PACKAGE_VERSION}")
    message(STATUS "lazyfuse: LLVM CPU code generator on (LLVM ${LLVM_PACKAGE_VERSION}, ${LAZYFUSE_CLANG})")
  else()
    set(LAZYFUSE_LLVM_REASON "built without LLVM: LLVM 19 (llvm-19-dev) and clang-19 were not both found")
    if(LAZYFUSE_LLVM STREQUAL "ON")
      message(FATAL_ERROR "LAZYFUSE_LLVM=ON needs LLVM 19 (apt-get install llvm-19-dev) and clang-19")
    endif()
    message(STATUS "lazyfuse: LLVM CPU code generator off (${LAZYFUSE_LLVM_REASON})")
  endif()
endif()
