# SPDX-License-Identifier: MIT
"""The --port and --build-dir options of the `motet` commands that build:
the tree they name, and the refusal of another port by a command that has
only the native one."""

import sys

from . import build


def add_build_args(p, port_tree=False, port_help=None):
    """Give the parser `p` --port and --build-dir; `port_tree`: the help
    says another port's tree is beside the native one (port_tree())."""
    p.add_argument("--port", default=build.DEFAULT_PORT, choices=build.known_ports(),
                   help=port_help or "port to build for, a directory under ports/ "
                                     "(default: %(default)s)")
    p.add_argument("--build-dir", default=None,
                   help="build directory, relative to the repository root "
                        "(default: $MOTET_BUILD_DIR or build" +
                        ("; for another --port, build-PORT beside it)" if port_tree else ")"))


def port_tree(args):
    """The tree of --port: --build-dir as given, else the port's own tree
    (build for the native port, build-<port> beside it for another, where
    `motet run` and `motet test` build that port), so that a port given
    alone does not reconfigure the native tree for itself."""
    return args.build_dir if args.build_dir else build.port_build_dir(None, args.port)


def native_port_only(command, args, why):
    """0 if --port is the native port, else 2 after saying why `command`
    has no other (the option is there for every command that builds)."""
    if args.port == build.DEFAULT_PORT:
        return 0
    print(f"{command}: error: --port {args.port}: {why}", file=sys.stderr)
    return 2
