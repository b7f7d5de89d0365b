# How the optimised build types compile (RelWithDebInfo, the default, and
# Release); Debug stays as CMake makes it.
#
# -O3 instead of CMake's -O2 for RelWithDebInfo (Release is -O3 already):
# the runtime's per-task path is many small functions over several files
# (the submission, the planner's replay, the executor's ops, the actor
# calls), and -O3 inlines more of them. RelWithDebInfo keeps -g.
#
# DAGGER_LTO (AUTO, ON or OFF): link-time optimisation of libdagger.so with
# GCC, so that those calls are inlined across files too. The library's
# objects then carry GCC's intermediate code beside their machine code
# (-ffat-lto-objects), and only the link of libdagger.so optimises the whole
# library: every other link of the project passes -fno-lto (GCC's linker
# plugin would otherwise optimise any link that meets such an object, 15-25
# s a test program), and libdagger.a holds the machine code alone (the
# intermediate code is removed from it once it is archived), so that a
# program linking it links as fast as before. AUTO turns it on with GCC in an
# optimised build without sanitizers; ON insists (an error elsewhere).
# docs/benchmarks.md ("-O3 and link-time optimisation") has what they gain.
set(DAGGER_LTO "AUTO" CACHE STRING "Link-time optimisation of libdagger.so (GCC): AUTO, ON or OFF")
set_property(CACHE DAGGER_LTO PROPERTY STRINGS AUTO ON OFF)

set(dg_opt_config "$<CONFIG:RelWithDebInfo,Release>")
add_compile_options("$<$<AND:$<COMPILE_LANGUAGE:C>,${dg_opt_config}>:-O3>")

set(DAGGER_LTO_USED OFF)
if(NOT DAGGER_LTO MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "DAGGER_LTO is AUTO, ON or OFF, not '${DAGGER_LTO}'")
endif()
set(dg_lto_why "")
if(NOT CMAKE_C_COMPILER_ID STREQUAL "GNU")
  set(dg_lto_why "it needs GCC, and the C compiler is ${CMAKE_C_COMPILER_ID}")
elseif(DAGGER_SANITIZE)
  set(dg_lto_why "not with sanitizers (DAGGER_SANITIZE=${DAGGER_SANITIZE})")
elseif(NOT CMAKE_BUILD_TYPE MATCHES "^(RelWithDebInfo|Release)$")
  set(dg_lto_why "only in the optimised build types, not '${CMAKE_BUILD_TYPE}'")
elseif(NOT CMAKE_OBJCOPY)
  set(dg_lto_why "objcopy (binutils) was not found")
endif()
if(DAGGER_LTO STREQUAL "ON" AND dg_lto_why)
  message(FATAL_ERROR "DAGGER_LTO=ON, but ${dg_lto_why}: configure with -DDAGGER_LTO=AUTO or OFF")
endif()
if(NOT DAGGER_LTO STREQUAL "OFF" AND NOT dg_lto_why)
  set(DAGGER_LTO_USED ON)
  add_link_options(-fno-lto)
endif()

# dagger_lto_objects(target): target's C objects carry the intermediate code
# too (the library's object libraries); dagger_lto_link(target): target's
# link optimises across them (libdagger.so; its -flto comes after the
# -fno-lto of every link, and the later one counts); dagger_lto_strip(target):
# the static library target holds machine code only. No-ops when
# DAGGER_LTO_USED is off.
function(dagger_lto_objects target)
  if(DAGGER_LTO_USED)
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:C>:-flto=auto;-ffat-lto-objects>")
  endif()
endfunction()
function(dagger_lto_link target)
  if(DAGGER_LTO_USED)
    target_link_options(${target} PRIVATE -flto=auto -O3)
  endif()
endfunction()
function(dagger_lto_strip target)
  if(DAGGER_LTO_USED)
    add_custom_command(TARGET ${target} POST_BUILD
                       COMMAND ${CMAKE_OBJCOPY} -R .gnu.lto_* -R .gnu.debuglto_* $<TARGET_FILE:${target}>
                       VERBATIM)
  endif()
endfunction()
