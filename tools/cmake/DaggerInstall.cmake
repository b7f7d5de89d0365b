# Installation: headers, libraries, a pkg-config file and a CMake package
# (find_package(dagger) gives dagger::dagger and dagger::dagger_static).
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS dagger dagger_static EXPORT daggerTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT daggerTargets NAMESPACE dagger:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dagger)

configure_package_config_file(${PROJECT_SOURCE_DIR}/tools/cmake/dagger-config.cmake.in
    ${PROJECT_BINARY_DIR}/dagger-config.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dagger)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dagger-config-version.cmake
    COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dagger-config.cmake ${PROJECT_BINARY_DIR}/dagger-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dagger)

# The .pc file locates the prefix relative to itself, so an installed tree can be moved.
file(RELATIVE_PATH DAGGER_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
configure_file(${PROJECT_SOURCE_DIR}/tools/cmake/dagger.pc.in ${PROJECT_BINARY_DIR}/dagger.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dagger.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
