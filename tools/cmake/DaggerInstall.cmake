# Installation: headers, libraries, a pkg-config file and a CMake package
# (find_package(dagger) gives dagger::dagger and dagger::dagger_static).
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        PATTERN "*.in" EXCLUDE)
install(DIRECTORY ${DAGGER_GENERATED_INCLUDE}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS dagger dagger_static EXPORT daggerTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The GPU backends' modules, beside libdagger.so where their loaders look
# first (devices/cuda/cuda_lib.c, devices/hip/hip_lib.c); not part of the
# CMake package: nothing links them.
if(TARGET dagger_cuda)
  install(TARGETS dagger_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(DAGGER_HAVE_HIP)
  install(TARGETS dagger_hip LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(EXPORT daggerTargets NAMESPACE dagger:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dagger)

configure_package_config_file(${PROJECT_SOURCE_DIR}/tools/cmake/dagger-config.cmake.in
    ${PROJECT_BINARY_DIR}/dagger-config.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dagger)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dagger-config-version.cmake
    COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dagger-config.cmake ${PROJECT_BINARY_DIR}/dagger-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dagger)

# The .pc files locate the prefix relative to themselves, so an installed
# tree can be moved. dagger.pc is the usual module (the shared library, or
# with --static the dependencies' private libraries too: Debian's hwloc.pc
# then names -ludev, from libudev-dev). dagger-static.pc links libdagger.a
# itself with the shared system libraries, which needs nothing more: the
# linker prefers libdagger.so to libdagger.a for -ldagger, even with --static.
# -ldl: PMIx (transport/pmix_lib.h), OpenBLAS, LAPACKE, cuBLAS and cuSOLVER
# (core/linalg) and the CUDA and HIP runtimes (devices/cuda, devices/hip)
# are loaded at run time.
file(RELATIVE_PATH DAGGER_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
set(DAGGER_PC_NAME dagger)
set(DAGGER_PC_WHAT "")
set(DAGGER_PC_REQUIRES Requires.private)
set(DAGGER_PC_LIBS "-L\${libdir} -ldagger")
set(DAGGER_PC_LIBS_PRIVATE "-lpthread -lm -ldl")
configure_file(${PROJECT_SOURCE_DIR}/tools/cmake/dagger.pc.in ${PROJECT_BINARY_DIR}/dagger.pc @ONLY)
set(DAGGER_PC_NAME dagger-static)
set(DAGGER_PC_WHAT " (static library)")
set(DAGGER_PC_REQUIRES Requires)
set(DAGGER_PC_LIBS "\${libdir}/libdagger.a -lpthread -lm -ldl")
set(DAGGER_PC_LIBS_PRIVATE "")
configure_file(${PROJECT_SOURCE_DIR}/tools/cmake/dagger.pc.in ${PROJECT_BINARY_DIR}/dagger-static.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dagger.pc ${PROJECT_BINARY_DIR}/dagger-static.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
