# SPDX-License-Identifier: MIT
# Cross toolchain for the Cortex-M port: arm-none-eabi-gcc (Debian package
# gcc-arm-none-eabi, 12.x) for a Cortex-M3 in Thumb-2, with newlib-nano
# (libnewlib-arm-none-eabi) for the C library functions the kernel and the
# tests use (memset, memcpy, strlen, setjmp, snprintf, ...). The port brings
# its own start-up code (ports/cortex-m/startup.c), hence -nostartfiles.
#
#   cmake -S . -B build-arm -G Ninja -DMOTET_PORT=cortex-m \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-cortex-m.cmake
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
find_program(CMAKE_SIZE arm-none-eabi-size REQUIRED)
find_program(CMAKE_OBJDUMP arm-none-eabi-objdump)

# Cross compilers cannot link a test program without a linker script.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m3 -mthumb -ffunction-sections -fdata-sections")
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "-mcpu=cortex-m3 -mthumb --specs=nano.specs -nostartfiles -Wl,--gc-sections")

# Look for libraries and headers in the cross environment only, programs on
# the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
