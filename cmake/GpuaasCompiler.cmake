# Warnings and build speed, applied through gpuaas_target_defaults(); one place for every target.
find_program(GPUAAS_CCACHE ccache)
if(GPUAAS_CCACHE)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${GPUAAS_CCACHE})
endif()

function(gpuaas_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wno-missing-field-initializers)
  if(GPUAAS_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
