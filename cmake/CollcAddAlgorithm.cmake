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

# collc_add_library(TARGET [STATIC]
#                   ALGORITHM name FILE file.coll [RANKS n] [TOPOLOGY t]
#                             [DEFINES name=value...]
#                   [ALGORITHM ...]...)
#
# A plan library: a shared library (STATIC: a static one) with each
# ALGORITHM compiled in by collc_add_algorithm under its name, and
# <TARGET>.h, which includes every algorithm's header, on its public include
# path. Shared plan libraries are what libcollnccl loads from
# COLL_PLAN_PATH; a program may also link one and call its entry points.
function(collc_add_library target)
  set(type SHARED)
  set(args ${ARGN})
  if(args AND "${ARGV1}" STREQUAL "STATIC")
    set(type STATIC)
    list(REMOVE_AT args 0)
  endif()
  # Split the arguments at each ALGORITHM into one group per algorithm.
  set(groups 0)
  foreach(arg IN LISTS args)
    if(arg STREQUAL "ALGORITHM")
      math(EXPR groups "${groups} + 1")
      set(group_${groups})
    elseif(groups EQUAL 0)
      message(FATAL_ERROR "collc_add_library: ${target}: expected ALGORITHM, got ${arg}")
    else()
      list(APPEND group_${groups} ${arg})
    endif()
  endforeach()
  if(groups EQUAL 0)
    message(FATAL_ERROR "collc_add_library: ${target}: no ALGORITHM")
  endif()
  add_library(${target} ${type})
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(${target} PUBLIC collc::collrt)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/collc/${target})
  set(header "/* Generated by collc_add_library: the algorithms of ${target}. */\n")
  foreach(i RANGE 1 ${groups})
    cmake_parse_arguments(alg "" "FILE;RANKS;TOPOLOGY" "DEFINES" ${group_${i}})
    list(GET group_${i} 0 name)
    if(NOT alg_FILE OR NOT "${alg_UNPARSED_ARGUMENTS}" STREQUAL "${name}")
      message(FATAL_ERROR "collc_add_library: ${target}: ALGORITHM takes a name, then FILE, "
        "and optionally RANKS, TOPOLOGY and DEFINES; got ${group_${i}}")
    endif()
    set(options NAME ${name})
    foreach(key RANKS TOPOLOGY)
      if(DEFINED alg_${key})
        list(APPEND options ${key} ${alg_${key}})
      endif()
    endforeach()
    if(alg_DEFINES)
      list(APPEND options DEFINES ${alg_DEFINES})
    endif()
    collc_add_algorithm(${target} ${alg_FILE} ${options})
    string(APPEND header "#include \"${name}.h\"\n")
  endforeach()
  file(CONFIGURE OUTPUT ${dir}/${target}.h CONTENT "${header}")
  target_include_directories(${target} PUBLIC ${dir})
endfunction()
