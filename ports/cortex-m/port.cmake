# SPDX-License-Identifier: MIT
# Build hooks of the Cortex-M port (see ports/template/port.cmake). Needs
# -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-cortex-m.cmake. Images run under
# QEMU (mps2-an385) through tools/motetlib/port_cortex_m.py.

# The kernel's defaults (config.h) fit this board's 4 MB of RAM.
set(MOTET_PORT_KERNEL_DEFS "")

# Thread contexts (context.c): the default kernels have threads, and every
# thread unit test runs on the port.
set(MOTET_PORT_THREADS ON)
# The test-only kernel variants (kernel/CMakeLists.txt: no threads, periodic
# timer, each thread policy) are built here too, with a port library each,
# so the tests that name them run under QEMU as on native.
set(MOTET_PORT_KERNEL_VARIANTS ON)

# The runner: boots QEMU with the deterministic flags, passes the console
# through and exits with the program's status (or 124 after its timeout).
set(MOTET_PORT_RUNNER ${Python3_EXECUTABLE} ${MOTET_ROOT}/tools/motetlib/port_cortex_m.py)

# Every kernel unit test runs on this port.
set(MOTET_PORT_SKIP_TESTS "")

# Link `target` as an image for the board, with the port library (default
# motet_port; pass motet_port_nolog for the kernel without event log), a
# linker map beside the image (the footprint report reads it) and a size
# summary after each link.
function(motet_port_firmware target)
  set(port_library motet_port)
  if(ARGC GREATER 1)
    set(port_library ${ARGV1})
  endif()
  target_link_libraries(${target} PRIVATE ${port_library})
  target_link_options(${target} PRIVATE -Wl,-Map=$<TARGET_FILE:${target}>.map)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_SIZE} $<TARGET_FILE:${target}>
    VERBATIM)
endfunction()

# motet_cortex_m_bench_kernel(PREFIX DEFS...): a kernel library PREFIX_kernel
# and a port library PREFIX_port built with a configuration of their own
# (DEFS, e.g. MOTET_USER_CONFIG for a larger heap), for benchmark images
# that need more than the defaults above. The same sources as motet_port.
function(motet_cortex_m_bench_kernel prefix)
  file(GLOB sources ${MOTET_ROOT}/kernel/src/*.c)
  add_library(${prefix}_kernel STATIC ${sources})
  target_include_directories(${prefix}_kernel PUBLIC ${MOTET_ROOT}/kernel/include
                                                     ${MOTET_ROOT}/ports/cortex-m)
  target_compile_definitions(${prefix}_kernel PUBLIC ${ARGN})
  set(port_sources)
  foreach(s startup.c console.c irq.c clock.c sleep.c guard.c bus.c watchdog.c)
    list(APPEND port_sources ${MOTET_ROOT}/ports/cortex-m/${s})
  endforeach()
  add_library(${prefix}_port STATIC ${port_sources})
  target_include_directories(${prefix}_port PUBLIC ${MOTET_ROOT}/ports/cortex-m)
  target_link_libraries(${prefix}_port PUBLIC ${prefix}_kernel)
  target_link_options(${prefix}_port INTERFACE -T${MOTET_ROOT}/ports/cortex-m/link.ld)
  # The kernel calls the port back (the bus driver from bus.c and
  # module_main()): let the linker see the port after it.
  target_link_libraries(${prefix}_kernel INTERFACE ${prefix}_port)
  # Frame sizes for `motet stack`, as the default kernel's (kernel/CMakeLists.txt).
  target_compile_options(${prefix}_kernel PRIVATE -fstack-usage)
  target_compile_options(${prefix}_port PRIVATE -fstack-usage)
endfunction()
