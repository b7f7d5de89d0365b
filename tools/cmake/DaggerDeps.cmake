# Required and optional dependencies (ENVIRONMENT.md explains the quirks).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(ucx CONFIG REQUIRED)
pkg_check_modules(PMIX REQUIRED IMPORTED_TARGET pmix>=4)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc>=2)
# Tiled linear algebra (core/linalg) calls OpenBLAS (cblas, its thread
# count) and LAPACKE on every tile. They are not linked: the first CPU tile
# task loads them (core/linalg/la_blas_lib.h) by the sonames of the ones
# found here, read from the libraries themselves (DAGGER_<LIB>_SONAME).
# PMIx likewise (transport/pmix_lib.h): a process that a launcher started
# loads it before PMIx_Init; a singleton never does.
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
pkg_check_modules(LAPACKE REQUIRED IMPORTED_TARGET lapacke)
foreach(lib PMIX OPENBLAS LAPACKE)
  string(TOLOWER ${lib} low)
  set(file ${pkgcfg_lib_${lib}_${low}})
  set(so "")
  if(file AND CMAKE_OBJDUMP)
    execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${file} OUTPUT_VARIABLE dump ERROR_QUIET)
    string(REGEX MATCH "SONAME +([^ \n]+)" m "${dump}")
    set(so ${CMAKE_MATCH_1})
  endif()
  if(file AND NOT so)
    # No objdump (a machine with a compiler but not binutils' tools): the
    # soname is also a string of the library's own, lib<name>.so.<N>.
    get_filename_component(base ${file} NAME_WE)
    file(STRINGS ${file} so REGEX "^${base}\\.so\\.[0-9]+$" LIMIT_COUNT 1)
  endif()
  if(NOT so)
    message(FATAL_ERROR "cannot read the soname of ${low} ('${file}'): the runtime loads "
                        "it at run time by that name")
  endif()
  set(DAGGER_${lib}_SONAME ${so})
  get_filename_component(DAGGER_${lib}_LIBDIR ${file} DIRECTORY)
endforeach()

set(DAGGER_EXTRA_LINK_DEPS "")

include(${CMAKE_CURRENT_LIST_DIR}/DaggerGpu.cmake)

# Test-only and benchmark-only dependencies. StarPU is a benchmark peer
# (tools/bench): no test uses it, and DAGGER_STARPU=OFF builds without it
# even where it is installed (CI builds both ways).
pkg_check_modules(CRITERION IMPORTED_TARGET criterion)
set(DAGGER_HAVE_STARPU OFF)
if(NOT DAGGER_STARPU STREQUAL "OFF")
  pkg_check_modules(STARPU QUIET IMPORTED_TARGET starpu-1.3)
  if(STARPU_FOUND)
    set(DAGGER_HAVE_STARPU ON)
  elseif(DAGGER_STARPU STREQUAL "ON")
    message(FATAL_ERROR "DAGGER_STARPU=ON but starpu-1.3 was not found (apt-get install libstarpu-dev)")
  endif()
endif()

# dg_layer(<name> <glob>...): an object library from the C files matching the
# globs. Layers register themselves so the top level can link what exists.
function(dg_layer name)
  file(GLOB srcs CONFIGURE_DEPENDS ${ARGN})
  if(NOT srcs)
    return()
  endif()
  add_library(${name} OBJECT ${srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/core/include ${DAGGER_GENERATED_INCLUDE}
                             ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC PkgConfig::PMIX PkgConfig::HWLOC ucx::ucp ucx::uct ucx::ucs Threads::Threads)
  if(DAGGER_TRACE)
    target_compile_definitions(${name} PUBLIC DG_TRACE_ENABLED=1)
  endif()
  # Only what the public headers mark DAGGER_API leaves libdagger.so
  # (core/include/dagger/export.h).
  set_target_properties(${name} PROPERTIES C_VISIBILITY_PRESET hidden)
  set_property(GLOBAL APPEND PROPERTY DAGGER_LAYERS ${name})
endfunction()

message(STATUS "Dagger-C: CUDA ${DAGGER_HAVE_CUDA} (${DAGGER_CUDA_ARCHS_SHOWN}; linalg ${DAGGER_HAVE_CUDA_LINALG}), HIP ${DAGGER_HAVE_HIP} (${DAGGER_HIP_ARCHS_SHOWN}), "
               "StarPU ${DAGGER_HAVE_STARPU} (benchmarks only), tracing ${DAGGER_TRACE}, "
               "link-time optimisation ${DAGGER_LTO_USED}")
