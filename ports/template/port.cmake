# SPDX-License-Identifier: MIT
# Build hooks of a port, included by the top-level CMakeLists.txt before the
# kernel is configured. A firmware port (one whose programs run in an
# emulator or on a board) provides three things:
#
#   MOTET_PORT_KERNEL_DEFS  kernel configuration for this processor
#   motet_port_firmware(t)  turn executable t into a firmware image
#   MOTET_PORT_RUNNER       command list that runs an image: the image path
#                           is appended; exit status = the program's status;
#                           empty for a port that runs no image (this one):
#                           its tree then builds no tests
# MOTET_BUS=1 builds the bus manager against this port's bus hooks; a port
# without a bus driver yet leaves MOTET_BUS out (it defaults to 0).
set(MOTET_PORT_KERNEL_DEFS MOTET_HEAP_SIZE=1024 MOTET_BUS=1)
set(MOTET_PORT_RUNNER "")
function(motet_port_firmware target)
  target_link_libraries(${target} PRIVATE motet_port)
endfunction()
