# SPDX-License-Identifier: MIT
# The kernel core's configuration: what an application using only tasks,
# messages and timers needs, every optional subsystem compiled out
# (kernel/include/motet/config.h). The footprint check (`motet size`)
# compares a kernel built so with the full one, and the AVR port links an
# application against it (bench/avr/core_avr.c).
set(MOTET_CORE_OPTIONS MOTET_EVENT_LOG=0 MOTET_THREADS=0 MOTET_BUS=0 MOTET_MULTICAST=0
                       MOTET_APPMGR=0 MOTET_STATS=0 MOTET_MAX_REMOTE_TASKS=0)

# motet_core_kernel_defs(out): the port's kernel settings
# (MOTET_PORT_KERNEL_DEFS) with the core's options in place of its own for
# the same macros.
function(motet_core_kernel_defs out)
  set(defs ${MOTET_PORT_KERNEL_DEFS})
  foreach(def ${MOTET_CORE_OPTIONS})
    string(REGEX REPLACE "=.*" "" option ${def})
    list(FILTER defs EXCLUDE REGEX "^${option}(=|$)")
  endforeach()
  set(${out} ${defs} ${MOTET_CORE_OPTIONS} PARENT_SCOPE)
endfunction()
