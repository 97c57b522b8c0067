# SPDX-License-Identifier: MIT
# Build hooks of the native port (see ports/template/port.cmake): native
# modules have a bus driver (bus_native.c), so the bus manager is built in.
set(MOTET_PORT_KERNEL_DEFS MOTET_BUS=1)
# Native modules have thread contexts (context_native.c): the kernels are
# built with threads (kernel/CMakeLists.txt).
set(MOTET_PORT_THREADS ON)
