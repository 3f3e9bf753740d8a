# What `cmake --install` puts under the prefix: collc and its tools, which
# find the rest through paths relative to bin/ (cmake/InstallLayout.cmake),
# and what applications that build collc's kernels into themselves need:
#   bin/collc, bin/collc-launch (collc run's ranks), bin/collc-perf
#   share/collc/plot.py (collc's pictures)
#   share/man/man1/collc.1 (where help2man is installed: cmake/ManPages.cmake)
#   share/bash-completion/completions/collc
#   lib/libcollrt.so, lib/libcollrt.a
#   include/collrt.h, include/collrt_mpi.h, include/collc/*.h (device primitives)
#   lib/pkgconfig/collrt.pc
#   lib/cmake/collc/ (find_package(collc): collc::collc, collc::collrt,
#                     collc::collrt_static, collc_add_algorithm)
# Every path in the package is relative to the prefix, so the tree may move;
# cmake/Package.cmake makes a Debian package of the same files.
include(CMakePackageConfigHelpers)
set(COLLC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/collc)

install(TARGETS collc EXPORT collcTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Without their build-tree RUNPATH, the launcher and collc-perf find
# libcollrt.so in the prefix they lie in.
set_target_properties(collc-launch collc-perf PROPERTIES
  INSTALL_RPATH "$ORIGIN/${COLLC_BIN_TO_LIB}")
install(TARGETS collc-launch collc-perf RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS collrt collrt_static EXPORT collcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET collnccl)
  # Found through libcollrt.so's directory wherever the prefix moves.
  set_target_properties(collnccl PROPERTIES INSTALL_RPATH "$ORIGIN")
  install(TARGETS collnccl LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(FILES runtime/include/collrt.h runtime/include/collrt_mpi.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY runtime/device/collc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

install(EXPORT collcTargets NAMESPACE collc:: DESTINATION ${COLLC_CMAKE_DIR})
configure_package_config_file(cmake/collcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/collcConfig.cmake INSTALL_DESTINATION ${COLLC_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/collcConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/collcConfig.cmake
  ${PROJECT_BINARY_DIR}/collcConfigVersion.cmake cmake/CollcAddAlgorithm.cmake
  DESTINATION ${COLLC_CMAKE_DIR})

# pkg-config finds the prefix from where the .pc file lies.
file(RELATIVE_PATH COLLC_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" COLLC_PC_TO_PREFIX ${COLLC_PC_TO_PREFIX})
configure_file(cmake/collrt.pc.in ${PROJECT_BINARY_DIR}/collrt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/collrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES tools/collc/plot.py DESTINATION ${CMAKE_INSTALL_DATADIR}/collc)
install(FILES tools/collc/collc.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  RENAME collc)
