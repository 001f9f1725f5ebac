# Man pages from scdoc sources: pk_add_man_page(NAME SOURCE) turns SOURCE (NAME.<section>.scd)
# into NAME.<section> in the build tree when scdoc is installed, and installs it under
# share/man/man<section>. Without scdoc the pages are skipped, with one message saying so.
#
# The same file is the build step: `cmake -DSCDOC=... -DIN=... -DOUT=... -P man.cmake` runs scdoc
# (it reads stdin and writes stdout) and leaves no half-written page when it fails.
if(CMAKE_SCRIPT_MODE_FILE)
    execute_process(COMMAND ${SCDOC} INPUT_FILE ${IN} OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        file(REMOVE ${OUT}.tmp)
        message(FATAL_ERROR "scdoc failed on ${IN} (${rc})")
    endif()
    file(RENAME ${OUT}.tmp ${OUT})
    return()
endif()

include(GNUInstallDirs)
find_program(PK_SCDOC scdoc)
if(NOT PK_SCDOC)
    message(STATUS "scdoc not found: the man pages are not built (Debian package scdoc)")
endif()

function(pk_add_man_page name source)
    if(NOT PK_SCDOC)
        return()
    endif()
    get_filename_component(src ${source} ABSOLUTE)
    string(REGEX REPLACE "^.*\\.([0-9])\\.scd$" "\\1" section "${src}")
    set(out ${CMAKE_CURRENT_BINARY_DIR}/${name}.${section})
    add_custom_command(OUTPUT ${out}
        COMMAND ${CMAKE_COMMAND} -DSCDOC=${PK_SCDOC} -DIN=${src} -DOUT=${out}
            -P ${CMAKE_CURRENT_FUNCTION_LIST_FILE}
        DEPENDS ${src} ${CMAKE_CURRENT_FUNCTION_LIST_FILE}
        COMMENT "Generating the man page ${name}.${section}" VERBATIM)
    add_custom_target(${name}_man ALL DEPENDS ${out})
    install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endfunction()
