# Compiler flags shared by every target of the project.
add_compile_options(-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
                    -Wno-unused-parameter -Wformat=2 -Wvla)
if(DAGGER_WERROR)
  add_compile_options(-Werror)
endif()
add_compile_definitions(_GNU_SOURCE)
# Debug builds keep the internal invariant checks (DG_ASSERT) on.
add_compile_definitions($<$<CONFIG:Debug>:DG_DEBUG=1>)
if(DAGGER_SANITIZE)
  add_compile_options(-fsanitize=${DAGGER_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${DAGGER_SANITIZE})
  add_compile_definitions(DG_DEBUG=1)
endif()
