/* SPDX-License-Identifier: MIT */
/*
 * The hello application: its programs. Its description, hello.toml, is
 * compiled by the build into hello_apps.h (motet_app(), apps/CMakeLists.txt).
 */
#ifndef APPS_HELLO_H
#define APPS_HELLO_H

/* Register the programs hello.toml names; module_main() calls it. */
void hello_register(void);

#endif /* APPS_HELLO_H */
