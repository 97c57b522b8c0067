# SPDX-License-Identifier: MIT
"""Host-side tools for the Motet kernel."""
