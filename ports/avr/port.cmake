# SPDX-License-Identifier: MIT
# Build hooks of the AVR port (ATmega128 on simavr), included by the
# top-level CMakeLists.txt before the kernel is configured. Configure with
#   cmake -S . -B build-avr -G Ninja -DMOTET_PORT=avr \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-avr.cmake [-DMOTET_AVR_F_CPU=4000000]
if(NOT CMAKE_SYSTEM_PROCESSOR STREQUAL "avr")
  message(FATAL_ERROR "MOTET_PORT=avr needs -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-avr.cmake")
endif()

# ---- clock -------------------------------------------------------------------
set(MOTET_AVR_F_CPU 8000000 CACHE STRING "ATmega128 clock in Hz: 4000000 or 8000000")
set_property(CACHE MOTET_AVR_F_CPU PROPERTY STRINGS 4000000 8000000)
if(NOT MOTET_AVR_F_CPU MATCHES "^[48]000000$")
  message(FATAL_ERROR "MOTET_AVR_F_CPU must be 4000000 or 8000000, not ${MOTET_AVR_F_CPU}")
endif()
add_compile_definitions(F_CPU=${MOTET_AVR_F_CPU}UL)

# ---- threads ------------------------------------------------------------------
# Thread contexts (port_avr_context.c): the default kernels have threads,
# and test_threads / test_thread_idle run on the port.
set(MOTET_PORT_THREADS ON)

# ---- kernel configuration for 4 KB of SRAM -----------------------------------
# About 1.8 KB of static kernel data with the event log (heap 1 KB, 32 log
# records of 8 B, 16 queued messages, 8 tasks, 8 timers), leaving over 2 KB
# for the one shared stack and the application.
set(MOTET_PORT_KERNEL_DEFS
  MOTET_HEAP_SIZE=1024
  MOTET_MAX_TASKS=8
  MOTET_MAX_REMOTE_TASKS=4
  MOTET_MAX_QUEUED_MSGS=16
  MOTET_MAX_TIMERS=8
  MOTET_MAX_GROUP_MEMBERS=8
  MOTET_LOG_ENTRIES=32
  # Earlier load failures followed (config.h): two cover a load superseded
  # twice while its failures wait, 8 B rather than the queue's 32 B.
  MOTET_BUS_FOLLOWED=2
)

# Kernel unit test cases that cannot pass on this port, with the reason.
# Each entry is `program:test_case`; tests/CMakeLists.txt compiles the list
# into that program, whose runner reports the cases as skipped.
set(MOTET_PORT_SKIP_TESTS
  # Boots the counter at 0xFFFFF000 and asserts port_counter_read() ==
  # 0xFFFFF000 and timer_now() == 0xFFFFF000: a 16-bit counter cannot hold
  # that value (inherently 32-bit). The rest of test_timer runs.
  test_timer:test_timers_cross_the_32_bit_counter_wrap
)

# ---- the simavr harness --------------------------------------------------------
# The runner needs tools/simavr-harness (motet-simavr), a host program. Give
# the one a native build made (-DMOTET_SIMAVR_HARNESS=/path/to/motet-simavr),
# or leave this empty and the AVR build compiles its own copy with the host
# compiler (needs libsimavr-dev, libelf-dev and pkg-config).
set(MOTET_SIMAVR_HARNESS "" CACHE FILEPATH
    "motet-simavr from a native build; empty: build one here with the host compiler")
set(MOTET_SIMAVR_INCLUDE "")
find_program(MOTET_PKG_CONFIG pkg-config)
if(MOTET_PKG_CONFIG)
  execute_process(COMMAND ${MOTET_PKG_CONFIG} --cflags-only-I simavr
                  OUTPUT_VARIABLE simavr_cflags RESULT_VARIABLE simavr_rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(simavr_rc EQUAL 0)
    string(REGEX REPLACE "^-I" "" MOTET_SIMAVR_INCLUDE "${simavr_cflags}")
  endif()
endif()

set(motet_harness "${MOTET_SIMAVR_HARNESS}")
if(NOT motet_harness)
  include(${MOTET_ROOT}/tools/simavr-harness/host-build.cmake)
  motet_simavr_host_build(motet_harness)
endif()

# ---- images and the runner ------------------------------------------------------
# ctest runs each image through tools/motetlib/port_avr.py, which starts the
# harness, passes the console through and exits with the firmware's status
# (or fails on a timeout); the image path is appended.
set(MOTET_PORT_RUNNER
  ${Python3_EXECUTABLE} ${MOTET_ROOT}/tools/motetlib/port_avr.py run
  --freq ${MOTET_AVR_F_CPU} --harness ${motet_harness} --timeout 100)

# motet_port_firmware(target [port_library]): turn executable `target` into
# an ATmega128 image (NAME.elf, with its linker map NAME.elf.map). Kernel
# unit tests (sources under tests/) link the test variant of the port;
# everything else links motet_port (or the library given, e.g.
# motet_port_nolog) and must fit the 4 KB of internal SRAM.
function(motet_port_firmware target)
  set(port_library motet_port)
  if(ARGC GREATER 1)
    set(port_library ${ARGV1})
  endif()
  get_target_property(dir ${target} SOURCE_DIR)
  string(FIND "${dir}/" "${MOTET_ROOT}/tests/" at)
  if(at EQUAL 0)
    set_target_properties(${target} PROPERTIES SUFFIX ".elf")
    target_link_options(${target} PRIVATE LINKER:-Map=$<TARGET_FILE:${target}>.map)
    target_link_libraries(${target} PRIVATE motet_port_test)
  else()
    target_link_libraries(${target} PRIVATE ${port_library})
    motet_avr_image(${target})
  endif()
endfunction()

# motet_avr_image(target): executable `target` as an ATmega128 image,
# NAME.elf with its linker map NAME.elf.map, checked after the link to fit
# the 4 KB of internal SRAM (tools/motetlib/port_avr.py check-ram).
function(motet_avr_image target)
  set_target_properties(${target} PROPERTIES SUFFIX ".elf")
  target_link_options(${target} PRIVATE LINKER:-Map=$<TARGET_FILE:${target}>.map)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${Python3_EXECUTABLE} ${MOTET_ROOT}/tools/motetlib/port_avr.py check-ram
            $<TARGET_FILE:${target}>
    VERBATIM)
endfunction()

# motet_avr_xmem_section(TARGET): link image TARGET with section .xmem in
# the external SRAM (ports/avr/xmem.ld; port_config.h,
# PORT_AVR_XMEM_SECTION). Its kernel needs PORT_AVR_XMEM=1.
function(motet_avr_xmem_section target)
  target_link_options(${target} PRIVATE LINKER:-T,${MOTET_ROOT}/ports/avr/xmem.ld)
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${MOTET_ROOT}/ports/avr/xmem.ld)
endfunction()

# motet_avr_xmem_stack(TARGET): image TARGET runs with 8 KB of external
# SRAM behind the chip's memory interface (the harness models 60 KB at
# 0x1100), its data and heap free to run on past 4 KB and its stack from
# 0x2FFF. Its kernel needs PORT_AVR_XMEM=1, which turns the interface on
# before .data and .bss are set up.
function(motet_avr_xmem_stack target)
  target_link_options(${target} PRIVATE LINKER:--defsym=__stack=0x2FFF
                      LINKER:--defsym=__DATA_REGION_LENGTH__=0x2F00)
endfunction()

# The benchmark images with and without the event log, with the frames of
# their links' objects (their kernels are bench/avr's own); deferred, and a
# function for the same reason as the next.
function(motet_avr_stack_bench_tests)
  foreach(log "" _nolog)
    add_test(NAME stack_bench_avr${log} COMMAND
      ${Python3_EXECUTABLE} ${MOTET_ROOT}/tools/motetlib/stack_paint.py
      ${CMAKE_BINARY_DIR}/bench/avr/bench_avr${log}.elf
      --annotations ${MOTET_ROOT}/bench/avr/bench_avr.stack
      --measured-from ${MOTET_ROOT}/docs/benchmarks.md)
  endforeach()
endfunction()

# Deferred like the tests above; a function, so that the loop variable is
# expanded when the tests are added.
function(motet_avr_thread_allowance_tests)
  foreach(policy prio fifo mantis rr retos vop)
    set(allowance PORT_AVR_THREAD_EXTRA)
    if(policy IN_LIST MOTET_THREAD_TIMED_POLICIES)
      set(allowance PORT_AVR_THREAD_EXTRA_TIMED)
    endif()
    add_test(NAME stack_thread_${policy}_avr COMMAND
      ${Python3_EXECUTABLE} ${MOTET_ROOT}/tools/motetlib/stack_paint.py --thread-only
      ${CMAKE_BINARY_DIR}/bench/avr-energy/energy_${policy}_ls4000.elf
      --annotations ${MOTET_ROOT}/kernel/stack/kernel.annot
      --annotations ${MOTET_ROOT}/ports/avr/stack.annot
      --su ${CMAKE_BINARY_DIR}/bench/avr-energy/CMakeFiles/energy_kernel_${policy}.dir
      --su ${CMAKE_BINARY_DIR}/bench/avr-energy/CMakeFiles/energy_port_${policy}.dir
      --port-config ${MOTET_ROOT}/ports/avr/port_config.h --extra-name ${allowance})
  endforeach()
  # Fixed priority with the event log on (the images above have it off),
  # on the kernel benchmark's image of the default kernel (threads, the
  # log), which has the firmware's interrupt entry (avr.h), not the test
  # clock's that the unit-test images have.
  if(TARGET core_avr_full)
    add_test(NAME stack_thread_prio_log_avr COMMAND
      ${Python3_EXECUTABLE} ${MOTET_ROOT}/tools/motetlib/stack_paint.py --thread-only
      $<TARGET_FILE:core_avr_full>
      --annotations ${MOTET_ROOT}/kernel/stack/kernel.annot
      --annotations ${MOTET_ROOT}/ports/avr/stack.annot
      --port-config ${MOTET_ROOT}/ports/avr/port_config.h --extra-name PORT_AVR_THREAD_EXTRA)
  endif()
endfunction()

# The hello application runs from the test command too: it halts with status
# 0 after its eighth greeting. (Deferred: the top level enables testing after
# this file.)
if(MOTET_BUILD_TESTS)
  cmake_language(DEFER CALL add_test NAME hello_avr COMMAND ${MOTET_PORT_RUNNER}
                 $<TARGET_FILE:hello>)
  # And it keeps time: the eighth greeting comes one second after boot (plus
  # the few milliseconds of boot), as hello.toml's period asks.
  cmake_language(DEFER CALL add_test NAME hello_avr_period COMMAND ${MOTET_PORT_RUNNER}
                 $<TARGET_FILE:hello>)
  cmake_language(DEFER CALL set_tests_properties hello_avr_period PROPERTIES
                 PASS_REGULAR_EXPRESSION [=[\[ +100[0-9]\.[0-9]+ ms\] radio: Hello World]=])
endif()

# The stack analyser on the hello image: its kernel-stack bound must cover
# the painted high-water mark (tools/motetlib/stack_paint.py). Its frames are
# those of the objects its link used (hello builds a kernel of its own,
# without threads: apps/hello/CMakeLists.txt), its annotation file names the
# port's.
if(MOTET_BUILD_TESTS)
  cmake_language(DEFER CALL add_test NAME stack_hello_avr COMMAND
    ${Python3_EXECUTABLE} ${MOTET_ROOT}/tools/motetlib/stack_paint.py $<TARGET_FILE:hello>
    --annotations ${MOTET_ROOT}/apps/hello/hello.stack
    --harness ${motet_harness})
  # The thread allowance for every policy, on the energy benchmark's image
  # of it (bench/avr-energy, event log off): RR, RETOS and VOP re-arm kernel
  # timers at the interrupt exit and get PORT_AVR_THREAD_EXTRA_TIMED.
  cmake_language(DEFER CALL motet_avr_thread_allowance_tests)
  # The benchmark images wait for injected interrupts: their bound is
  # compared with the mark their benchmark run recorded.
  cmake_language(DEFER CALL motet_avr_stack_bench_tests)
endif()

# The files of the AVR port whose functions get the compiler's frames for
# `motet stack` (-fstack-usage): all but port_avr_startup.c, whose naked
# start-up functions avr-gcc 5.4 cannot size: it says so, an error under
# -Werror. They are never called (they run inline in avr-libc's start-up
# sequence), and the file's other two functions are leaves, whose prologue
# is their whole frame. The interrupt entries are assembly at file scope
# (PORT_AVR_ISR, avr.h), their frame their pushes (ports/avr/stack.annot).
set(MOTET_AVR_SIZED_PORT_FILES port_avr_boot.c port_avr_bus.c port_avr_console.c
    port_avr_context.c port_avr_irq.c port_avr_timer.c port_avr_watchdog.c)

# motet_avr_port_frames(PORT): -fstack-usage on the sized files of AVR port
# library PORT. Set on the sources as the directory that made PORT sees
# them: every port library of that directory takes them alike.
function(motet_avr_port_frames port)
  foreach(file ${MOTET_AVR_SIZED_PORT_FILES})
    set_source_files_properties(${MOTET_ROOT}/ports/avr/${file} TARGET_DIRECTORY ${port}
                                PROPERTIES COMPILE_OPTIONS -fstack-usage)
  endforeach()
endfunction()

# motet_avr_ram_test(TARGET ANNOTATIONS): the test TARGET_avr_ram, that
# image TARGET's static RAM and the kernel stack `motet stack` bounds for it
# (annotation file ANNOTATIONS, the frames of its link's objects) fit the RAM
# it runs with, and that the port's sized files have the compiler's frames
# in it (tools/motetlib/avr_ram.py). Every example image the README and the
# guide name has one. Deferred to the top level, which enables testing
# after the applications.
function(motet_avr_ram_test target annotations)
  if(NOT MOTET_BUILD_TESTS)
    return()
  endif()
  set(sized)
  foreach(file ${MOTET_AVR_SIZED_PORT_FILES})
    string(APPEND sized " --sized ${MOTET_ROOT}/ports/avr/${file}")
  endforeach()
  cmake_language(EVAL CODE "
    cmake_language(DEFER DIRECTORY \"${CMAKE_SOURCE_DIR}\" CALL add_test
      NAME ${target}_avr_ram
      COMMAND ${Python3_EXECUTABLE} ${MOTET_ROOT}/tools/motetlib/avr_ram.py
              $<TARGET_FILE:${target}> --annotations ${annotations} ${sized})")
endfunction()

# motet_avr_bench_kernel(PREFIX NAME THREADS DEFS...): a kernel library
# PREFIX_kernel_NAME and an AVR port library PREFIX_port_NAME built with their
# own configuration (DEFS, plus MOTET_THREADS=THREADS), for benchmark images
# whose policy or pool sizes are compile-time choices.
function(motet_avr_bench_kernel prefix name threads)
  file(GLOB sources ${MOTET_ROOT}/kernel/src/*.c)
  set(kernel ${prefix}_kernel_${name})
  add_library(${kernel} STATIC ${sources})
  target_include_directories(${kernel} PUBLIC ${MOTET_ROOT}/kernel/include
                                              ${MOTET_ROOT}/ports/avr)
  target_compile_definitions(${kernel} PUBLIC MOTET_THREADS=${threads} ${ARGN})
  set(port ${prefix}_port_${name})
  add_library(${port} STATIC
    ${MOTET_ROOT}/ports/avr/port_avr_boot.c ${MOTET_ROOT}/ports/avr/port_avr_bus.c
    ${MOTET_ROOT}/ports/avr/port_avr_console.c
    ${MOTET_ROOT}/ports/avr/port_avr_context.c ${MOTET_ROOT}/ports/avr/port_avr_irq.c
    ${MOTET_ROOT}/ports/avr/port_avr_startup.c ${MOTET_ROOT}/ports/avr/port_avr_timer.c
    ${MOTET_ROOT}/ports/avr/port_avr_watchdog.c)
  target_include_directories(${port} PUBLIC ${MOTET_ROOT}/ports/avr)
  target_link_libraries(${port} PUBLIC ${kernel})
  motet_avr_port_frames(${port})
  # The kernel calls the port back (the bus driver from bus.c and
  # module_main()): let the linker see the port after it.
  target_link_libraries(${kernel} INTERFACE ${port})
  # Frame sizes for `motet stack`, as the default kernel's (kernel/CMakeLists.txt).
  target_compile_options(${kernel} PRIVATE -fstack-usage)
  if(MOTET_SIMAVR_INCLUDE)
    target_include_directories(${port} PRIVATE ${MOTET_SIMAVR_INCLUDE})
  endif()
endfunction()

# The kernel benchmark images (cycle counts by GPIO edges, bench/avr).
add_subdirectory(${MOTET_ROOT}/bench/avr ${CMAKE_BINARY_DIR}/bench/avr)
# The tree-position energy benchmark (bench/avr-energy, bench_energy.py).
add_subdirectory(${MOTET_ROOT}/bench/avr-energy ${CMAKE_BINARY_DIR}/bench/avr-energy)
# The high-load benchmarks: preemption and timer overhead (bench/avr-energy-load,
# bench_energy_load.py).
add_subdirectory(${MOTET_ROOT}/bench/avr-energy-load ${CMAKE_BINARY_DIR}/bench/avr-energy-load)
# A sensing module's share of the SSL chain, Motet vs standalone (bench/avr-ssl,
# bench_ssl_avr.py).
add_subdirectory(${MOTET_ROOT}/bench/avr-ssl ${CMAKE_BINARY_DIR}/bench/avr-ssl)
