# Where the install puts things (GNUInstallDirs), and the paths from bin/ to
# the rest of the prefix: installed collc finds its runtime through these
# (tools/collc/Paths.cpp) and collc-launch and collc-perf their libcollrt.so,
# so the prefix works wherever it is moved or packaged.
include(GNUInstallDirs)
file(RELATIVE_PATH COLLC_BIN_TO_PREFIX ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_PREFIX})
file(RELATIVE_PATH COLLC_BIN_TO_INCLUDE ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_INCLUDEDIR})
file(RELATIVE_PATH COLLC_BIN_TO_LIB ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
file(RELATIVE_PATH COLLC_BIN_TO_DATA ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_DATADIR})
