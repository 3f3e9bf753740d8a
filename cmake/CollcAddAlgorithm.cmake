# collc_add_algorithm(TARGET FILE.coll [RANKS n] [TOPOLOGY t])
#
# Compiles FILE.coll with collc at build time into <stem>.cu (the kernels)
# and <stem>.h (their entry points, collc_<algorithm>), where <stem> is the
# file's name without its extension; adds <stem>.cu to TARGET and puts
# <stem>.h on its include path. RANKS sets the program's `ranks` parameter
# (-D ranks=n) and TOPOLOGY the machine the ranks are placed on (a preset
# such as hgx-h100, or a JSON file). TARGET needs the CUDA language enabled
# and links collc::collrt or collc::collrt_static itself.
function(collc_add_algorithm target file)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "RANKS;TOPOLOGY" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "collc_add_algorithm: unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT CUDA IN_LIST languages)
    message(FATAL_ERROR "collc_add_algorithm: ${target} needs the CUDA language: "
      "project(... LANGUAGES CXX CUDA) or enable_language(CUDA)")
  endif()
  get_filename_component(source ${file} ABSOLUTE)
  get_filename_component(stem ${file} NAME_WLE)
  # One folder per target, so that two targets may compile the same file
  # with different ranks.
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/collc/${target})
  set(flags)
  if(DEFINED arg_RANKS)
    list(APPEND flags -D ranks=${arg_RANKS})
  endif()
  if(DEFINED arg_TOPOLOGY)
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${arg_TOPOLOGY})
      get_filename_component(arg_TOPOLOGY ${arg_TOPOLOGY} ABSOLUTE)
    endif()
    list(APPEND flags --topology=${arg_TOPOLOGY})
  endif()
  add_custom_command(
    OUTPUT ${dir}/${stem}.cu ${dir}/${stem}.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND collc::collc ${source} ${flags} --emit=cuda -o ${dir}/${stem}.cu
    COMMAND collc::collc ${source} ${flags} --emit=header -o ${dir}/${stem}.h
    DEPENDS ${source} $<TARGET_FILE:collc::collc>
    COMMENT "collc ${file} -> ${stem}.cu, ${stem}.h"
    VERBATIM)
  target_sources(${target} PRIVATE ${dir}/${stem}.cu ${dir}/${stem}.h)
  target_include_directories(${target} PRIVATE ${dir})
  # The generated source includes collrt.h and collc/kernel.h.
  target_include_directories(${target} PRIVATE
    $<TARGET_PROPERTY:collc::collrt,INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_features(${target} PRIVATE cuda_std_17)
endfunction()
