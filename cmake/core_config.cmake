# SPDX-License-Identifier: MIT
# Kernel configurations: the port's settings under a kernel's own, and the
# kernel core's options: what an application using only tasks, messages
# (borrowed payloads) and timers needs, every optional subsystem compiled out
# (kernel/include/motet/config.h). The footprint check (`motet size`)
# compares a kernel built so with the full one, and the AVR port links an
# application against it (bench/avr/core_avr.c).
set(MOTET_CORE_OPTIONS MOTET_EVENT_LOG=0 MOTET_THREADS=0 MOTET_BUS=0 MOTET_MULTICAST=0
                       MOTET_APPMGR=0 MOTET_STATS=0 MOTET_MAX_REMOTE_TASKS=0 MOTET_HEAP_PAYLOADS=0)

# motet_kernel_defs(out DEFS...): the port's kernel settings
# (MOTET_PORT_KERNEL_DEFS) with DEFS in place of its own for the same
# macros (a macro defined twice would not compile), then DEFS.
function(motet_kernel_defs out)
  set(defs ${MOTET_PORT_KERNEL_DEFS})
  foreach(def ${ARGN})
    string(REGEX REPLACE "=.*" "" option ${def})
    list(FILTER defs EXCLUDE REGEX "^${option}(=|$)")
  endforeach()
  set(${out} ${defs} ${ARGN} PARENT_SCOPE)
endfunction()

# motet_core_kernel_defs(out): the kernel core's settings on this port.
function(motet_core_kernel_defs out)
  motet_kernel_defs(defs ${MOTET_CORE_OPTIONS})
  set(${out} ${defs} PARENT_SCOPE)
endfunction()
