# collc_add_algorithm(TARGET FILE.coll [RANKS n] [TOPOLOGY t] [NAME name]
#                     [DEFINES name=value...])
#
# Compiles FILE.coll with collc at build time into <stem>.cu (the kernels;
# <stem>.cpp where the project has no CUDA language, for the host emulation)
# and <stem>.h (their entry points, collc_<algorithm>, and descriptors,
# collc_algorithm_<algorithm>), where <stem> is NAME if given, else the
# file's name without its extension; adds both to TARGET and puts <stem>.h on
# its include path. RANKS sets the program's `ranks` parameter (-D ranks=n),
# DEFINES any parameters (-D name=value each), TOPOLOGY the machine the ranks
# are placed on (a preset such as hgx-h100, or a JSON file). NAME renames the
# algorithm (collc --name): collc_<name> and collc_algorithm_<name>, so that
# one file compiled several times links into one program. TARGET links
# collc::collrt or collc::collrt_static itself.
function(collc_add_algorithm target file)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "RANKS;TOPOLOGY;NAME" "DEFINES")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "collc_add_algorithm: unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  get_filename_component(source ${file} ABSOLUTE)
  get_source_file_property(generated ${source} GENERATED)
  if(NOT EXISTS ${source} AND NOT generated)
    message(FATAL_ERROR "collc_add_algorithm: ${target}: ${source} does not exist")
  endif()
  if(DEFINED arg_NAME)
    if(NOT arg_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      message(FATAL_ERROR "collc_add_algorithm: ${target}: NAME ${arg_NAME} is not a C identifier")
    endif()
    set(stem ${arg_NAME})
  else()
    get_filename_component(stem ${file} NAME_WLE)
  endif()
  # Without CUDA the same source is C++ for the host emulation.
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(CUDA IN_LIST languages)
    set(kernels ${stem}.cu)
    target_compile_features(${target} PRIVATE cuda_std_17)
  else()
    set(kernels ${stem}.cpp)
    target_compile_features(${target} PRIVATE cxx_std_17)
  endif()
  # One folder per target, so that two targets may compile the same file
  # with different ranks; within a target, stems must differ.
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/collc/${target})
  get_property(stems TARGET ${target} PROPERTY COLLC_ALGORITHM_STEMS)
  if(stem IN_LIST stems)
    message(FATAL_ERROR "collc_add_algorithm: ${target} already has an algorithm compiled "
      "into ${stem}: give each a different NAME")
  endif()
  set_property(TARGET ${target} APPEND PROPERTY COLLC_ALGORITHM_STEMS ${stem})
  set(flags)
  if(DEFINED arg_RANKS)
    list(APPEND flags -D ranks=${arg_RANKS})
  endif()
  foreach(define IN LISTS arg_DEFINES)
    list(APPEND flags -D ${define})
  endforeach()
  if(DEFINED arg_TOPOLOGY)
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${arg_TOPOLOGY})
      get_filename_component(arg_TOPOLOGY ${arg_TOPOLOGY} ABSOLUTE)
    endif()
    list(APPEND flags --topology=${arg_TOPOLOGY})
  endif()
  if(DEFINED arg_NAME)
    list(APPEND flags --name=${arg_NAME})
  endif()
  add_custom_command(
    OUTPUT ${dir}/${kernels} ${dir}/${stem}.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND collc::collc ${source} ${flags} --emit=cuda -o ${dir}/${kernels}
    COMMAND collc::collc ${source} ${flags} --emit=header -o ${dir}/${stem}.h
    DEPENDS ${source} $<TARGET_FILE:collc::collc>
    COMMENT "collc ${file} -> ${kernels}, ${stem}.h"
    VERBATIM)
  target_sources(${target} PRIVATE ${dir}/${kernels} ${dir}/${stem}.h)
  target_include_directories(${target} PRIVATE ${dir})
  # The generated source includes collrt.h and collc/kernel.h.
  target_include_directories(${target} PRIVATE
    $<TARGET_PROPERTY:collc::collrt,INTERFACE_INCLUDE_DIRECTORIES>)
endfunction()
