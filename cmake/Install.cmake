# Installs lazyfuse so that another CMake project can
#   find_package(lazyfuse 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE lazyfuse::lazyfuse)
# The layer libraries are all installed and exported (a static library's private dependencies are part of its link
# interface; shared ones find each other through their install RPATH, $ORIGIN). lazyfuse_warnings is exported too
# because every layer links it PRIVATE: for a static library that leaves $<LINK_ONLY:lazyfuse_warnings> in the
# interface, which links nothing and passes no compile options to consumers.
include(CMakePackageConfigHelpers)

set(LAZYFUSE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/lazyfuse CACHE STRING
    "Where lazyfuseConfig.cmake is installed, relative to the prefix")

set(_lazyfuse_install_targets lazyfuse_warnings lazyfuse_graph lazyfuse_fusion lazyfuse_codegen lazyfuse_runtime lazyfuse)
install(TARGETS ${_lazyfuse_install_targets}
  EXPORT lazyfuseTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lazyfuse_development
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lazyfuse_runtime
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT lazyfuse_runtime)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/lazyfuse
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT lazyfuse_development
  FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.inc" PATTERN "*.def")

if(TARGET lazyfuse-info)
  install(TARGETS lazyfuse-info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT lazyfuse_runtime)
endif()

install(EXPORT lazyfuseTargets
  NAMESPACE lazyfuse::
  FILE lazyfuseTargets.cmake
  DESTINATION ${LAZYFUSE_INSTALL_CMAKEDIR}
  COMPONENT lazyfuse_development)

# The toolkit this build used, as a hint for consumers that set neither CUDAToolkit_ROOT nor CUDA_PATH.
if(DEFINED CUDAToolkit_LIBRARY_ROOT)
  set(LAZYFUSE_CUDA_TOOLKIT_ROOT "${CUDAToolkit_LIBRARY_ROOT}")
elseif(DEFINED CUDAToolkit_BIN_DIR)
  get_filename_component(LAZYFUSE_CUDA_TOOLKIT_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
else()
  set(LAZYFUSE_CUDA_TOOLKIT_ROOT "")
endif()

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/lazyfuseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lazyfuseConfig.cmake
  INSTALL_DESTINATION ${LAZYFUSE_INSTALL_CMAKEDIR})
# 0.x releases are only compatible within the same minor version.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/lazyfuseConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)

install(FILES
  ${PROJECT_BINARY_DIR}/lazyfuseConfig.cmake
  ${PROJECT_BINARY_DIR}/lazyfuseConfigVersion.cmake
  DESTINATION ${LAZYFUSE_INSTALL_CMAKEDIR}
  COMPONENT lazyfuse_development)
