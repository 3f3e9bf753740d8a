# collc's manual page, made by help2man from `collc --help` so that the two
# never disagree; without help2man the install has none.
find_program(COLLC_HELP2MAN help2man)
if(NOT COLLC_HELP2MAN)
  message(STATUS "help2man not found: no manual page (scripts/install-deps.sh installs it)")
  return()
endif()
set(COLLC_MAN_PAGE ${PROJECT_BINARY_DIR}/man/collc.1)
# --version-string: collc --version also names the trees it was built in,
# which an installed page must not.
add_custom_command(OUTPUT ${COLLC_MAN_PAGE}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
  COMMAND ${COLLC_HELP2MAN} --no-info --no-discard-stderr --section=1
    --name "a compiler for collective-communication schedules"
    --version-string=${PROJECT_VERSION} --output=${COLLC_MAN_PAGE} $<TARGET_FILE:collc>
  DEPENDS collc
  COMMENT "Writing the manual page collc.1"
  VERBATIM)
add_custom_target(collc-man ALL DEPENDS ${COLLC_MAN_PAGE})
install(FILES ${COLLC_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
