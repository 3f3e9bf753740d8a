# `cpack -G DEB` in the build tree: collc_<version>_<arch>.deb, holding what
# `cmake --install` installs (cmake/Install.cmake), under /usr. dpkg-shlibdeps
# reads the libraries the programs link (libc, libstdc++, libLLVM); `collc run`
# also needs a C++ compiler, and its pictures matplotlib.
set(CPACK_PACKAGE_NAME collc)
set(CPACK_PACKAGE_VENDOR "collc developers")
set(CPACK_PACKAGE_CONTACT "collc developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "compiler for collective-communication schedules")
set(CPACK_PACKAGE_DESCRIPTION "collc compiles collective algorithms written in Coll, \
proves that each implements its collective, and emits CUDA kernels with collrt, \
the host runtime that runs them.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libcollrt.so is the package's own: dpkg-shlibdeps finds it here.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/lib)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "g++ | c++-compiler")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-matplotlib")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nvidia-cuda-toolkit, openmpi-bin")
include(CPack)
