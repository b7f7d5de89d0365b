# Optional GPU backends (devices/cuda, devices/hip). AUTO builds a backend
# when its toolkit is found and never fails when it is not; ON requires it.
# A found backend defines DAGGER_HAVE_CUDA / DAGGER_HAVE_HIP for every
# target (devices/common/device.h declares the backend objects under them).
# Neither links its runtime into libdagger: each is loaded on first use,
# through a module of the backend's that holds the kernels of ours and links
# the runtime (devices/cuda/cuda_lib.h, devices/hip/hip_lib.h).
set(DAGGER_CUDA_ARCHS "90" CACHE STRING
    "CUDA architectures the CUDA backend's kernels are built for (90: H100/H200)")
set(DAGGER_HIP_ARCHS "gfx90a" CACHE STRING
    "AMD GPU targets (hipcc --offload-arch) the HIP backend's kernels are built for (gfx90a: MI200)")

set(DAGGER_HAVE_CUDA OFF)
set(DAGGER_HAVE_CUDA_LINALG OFF)
set(DAGGER_CUDA_ARCHS_SHOWN "off")
if(NOT DAGGER_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  endif()
  if(CUDAToolkit_FOUND AND TARGET CUDA::cudart)
    # Explicit architectures: without a GPU CMake would pick the toolkit's
    # default, which is not what the machines that run this have.
    set(CMAKE_CUDA_ARCHITECTURES ${DAGGER_CUDA_ARCHS})
    # No implicit cudart_static/cudadevrt on link lines: CUDA::cudart (the
    # shared runtime) is named explicitly, once, for every consumer.
    set(CMAKE_CUDA_RUNTIME_LIBRARY None)
    enable_language(CUDA)
    # Everything links with the C compiler, CUDA objects or not: the link
    # then takes the C compiler's sanitizer runtimes (clang's under clang),
    # and the kernel file needs no C++ runtime (devices/cuda/CMakeLists.txt).
    set(CMAKE_CUDA_LINKER_PREFERENCE 0)
    set(CMAKE_CUDA_LINKER_PREFERENCE_PROPAGATES 0)
    set(DAGGER_HAVE_CUDA ON)
    set(DAGGER_CUDA_ARCHS_SHOWN "sm ${DAGGER_CUDA_ARCHS}, CUDA ${CUDAToolkit_VERSION}")
    add_compile_definitions(DAGGER_HAVE_CUDA=1)
    # The runtime API only (libcuda, the driver, is never linked), and not
    # linked either: the first discovery loads it through the module
    # libdagger-cuda.so (devices/cuda/cuda_lib.h), which holds every CUDA
    # kernel of ours (dg_cuda_kernels below) and links CUDA::cudart.
    # The linear algebra tiles' CUDA implementations (core/linalg/cuda) need
    # cuBLAS and cuSOLVER; without them the tiles run on CPUs only. They are
    # loaded at run time by soname (core/linalg/cuda/la_cuda_lib.h), not
    # linked: the soname is what the unversioned library file points to.
    if(TARGET CUDA::cublas AND TARGET CUDA::cusolver)
      set(DAGGER_HAVE_CUDA_LINALG ON)
      add_compile_definitions(DAGGER_HAVE_CUDA_LINALG=1)
      foreach(lib cublas cusolver)
        string(TOUPPER ${lib} up)
        get_target_property(loc CUDA::${lib} IMPORTED_LOCATION)
        set(so ${loc})
        if(IS_SYMLINK ${loc})
          file(READ_SYMLINK ${loc} so)
        endif()
        get_filename_component(so ${so} NAME)
        set(DAGGER_${up}_SONAME ${so})
      endforeach()
    endif()
  elseif(DAGGER_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DAGGER_CUDA=ON but no CUDA toolkit (nvcc, cudart) was found")
  endif()
endif()

# HIP: Debian's hipcc and libamdhip64-dev. The host code is C against
# hip_runtime_api.h; the kernel file is compiled by hipcc itself
# (devices/hip/CMakeLists.txt), which avoids CMake's HIP language and its
# ROCm layout assumptions that Debian does not meet (docs: ENVIRONMENT.md).
set(DAGGER_HAVE_HIP OFF)
set(DAGGER_HIP_ARCHS_SHOWN "off")
if(NOT DAGGER_HIP STREQUAL "OFF")
  find_program(DAGGER_HIPCC hipcc)
  find_library(DAGGER_AMDHIP64 amdhip64)
  find_path(DAGGER_HIP_INCLUDE hip/hip_runtime_api.h)
  if(DAGGER_HIPCC AND DAGGER_AMDHIP64 AND DAGGER_HIP_INCLUDE)
    set(DAGGER_HAVE_HIP ON)
    set(DAGGER_HIP_ARCHS_SHOWN "${DAGGER_HIP_ARCHS}")
    add_compile_definitions(DAGGER_HAVE_HIP=1)
    # libamdhip64 is not linked: the first discovery loads it, through the
    # backend's module libdagger-hip.so (devices/hip/hip_lib.h), with the
    # dynamic loader libdagger links for core/linalg already (CMAKE_DL_LIBS).
  elseif(DAGGER_HIP STREQUAL "ON")
    message(FATAL_ERROR "DAGGER_HIP=ON but hipcc or libamdhip64 was not found "
                        "(apt-get install hipcc libamdhip64-dev)")
  endif()
endif()

# dg_cuda_kernels(name sources...): an object library of CUDA kernels of
# ours for the module libdagger-cuda.so (the top-level CMakeLists.txt builds
# it from every such library; devices/cuda/cuda_lib.h says why they are not
# in libdagger): explicit architectures, hidden symbols but for the
# launchers that the kernel files declare with default visibility, and no
# C++ runtime (no exceptions, no guarded statics: a kernel file's only
# initialiser is the runtime's registration), so the C compiler links it.
function(dg_cuda_kernels name)
  add_library(${name} OBJECT ${ARGN})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/core/include
                             ${DAGGER_GENERATED_INCLUDE} ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC CUDA::cudart)
  target_compile_options(${name} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fno-exceptions,-fno-threadsafe-statics>)
  set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES "${DAGGER_CUDA_ARCHS}"
                        CUDA_VISIBILITY_PRESET hidden)
  set_property(GLOBAL APPEND PROPERTY DAGGER_CUDA_KERNELS ${name})
endfunction()
