# Compiler flags shared by every target of the project. They are C flags:
# CUDA sources (nvcc) get their own below, and the HIP kernel file is
# compiled by hipcc with the same warnings (devices/hip/CMakeLists.txt).
set(DAGGER_C_WARNINGS -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wno-unused-parameter -Wformat=2 -Wvla)
add_compile_options("$<$<COMPILE_LANGUAGE:C>:${DAGGER_C_WARNINGS}>")
# nvcc: its own warnings, and the host compiler's through -Xcompiler.
set(DAGGER_CUDA_WARNINGS -Xcompiler=-Wall,-Wextra,-Wshadow,-Wno-unused-parameter)
if(DAGGER_WERROR)
  add_compile_options($<$<COMPILE_LANGUAGE:C>:-Werror>)
  list(APPEND DAGGER_CUDA_WARNINGS -Werror=all-warnings -Xcompiler=-Werror)
endif()
add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:${DAGGER_CUDA_WARNINGS}>")
add_compile_definitions(_GNU_SOURCE)
# Debug builds keep the internal invariant checks (DG_ASSERT) on.
add_compile_definitions($<$<CONFIG:Debug>:DG_DEBUG=1>)
if(DAGGER_SANITIZE)
  # Not for nvcc, which does not take -fsanitize: the kernel launchers are
  # a few lines, and their callers (C) are instrumented.
  add_compile_options("$<$<COMPILE_LANGUAGE:C>:-fsanitize=${DAGGER_SANITIZE};-fno-omit-frame-pointer;-fno-sanitize-recover=all>")
  add_link_options(-fsanitize=${DAGGER_SANITIZE})
  add_compile_definitions(DG_DEBUG=1)
endif()
