# SPDX-License-Identifier: MIT
# motet_simavr_host_build(out_var): from a cross build (the AVR port), add a
# target that compiles motet-simavr with the host C compiler into
# ${CMAKE_BINARY_DIR}/tools/motet-simavr and set out_var to its path. Needs
# pkg-config and libsimavr; without them out_var names a missing file and
# the runner says how to get one.
function(motet_simavr_host_build out_var)
  set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  set(exe ${CMAKE_BINARY_DIR}/tools/motet-simavr)
  set(${out_var} ${exe} PARENT_SCOPE)
  find_program(MOTET_HOST_CC NAMES cc gcc clang)
  if(NOT MOTET_HOST_CC OR NOT MOTET_PKG_CONFIG)
    message(WARNING "motet-simavr: no host C compiler or pkg-config; the AVR tests cannot run")
    return()
  endif()
  execute_process(COMMAND ${MOTET_PKG_CONFIG} --cflags --libs simavr
                  OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(WARNING "motet-simavr: libsimavr not found (pkg-config simavr); "
                    "install libsimavr-dev libelf-dev, or set MOTET_SIMAVR_HARNESS")
    return()
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  include(${dir}/sources.cmake)
  list(TRANSFORM MOTET_SIMAVR_SOURCES PREPEND ${dir}/ OUTPUT_VARIABLE sources)
  list(TRANSFORM MOTET_SIMAVR_HEADERS PREPEND ${dir}/ OUTPUT_VARIABLE headers)
  list(APPEND sources ${dir}/../../ports/native/hub_link.c)
  add_custom_command(
    OUTPUT ${exe}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/tools
    COMMAND ${MOTET_HOST_CC} -std=c11 -D_DEFAULT_SOURCE -O2 -Wall -Wextra -Werror
            -I${dir}/../../ports/avr -I${dir}/../../ports/native
            ${sources} -o ${exe} ${flags}
    DEPENDS ${sources} ${headers} ${dir}/../../ports/avr/avr_bus_if.h ${dir}/../../ports/native/hub_link.h
    COMMENT "Building motet-simavr with the host compiler"
    VERBATIM)
  add_custom_target(motet_simavr_host ALL DEPENDS ${exe})
endfunction()
