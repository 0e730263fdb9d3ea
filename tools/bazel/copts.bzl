"""The warnings every C target of the project compiles with.

Errors, not warnings: a shadowed name, a function defined with no prototype
in scope (an export no header declares must be declared in its file), or an
old-style `()` declaration does not land. C only: C++ and CUDA targets take
their own flags.
"""

C_WARNINGS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wshadow",
    "-Wmissing-prototypes",
    "-Wstrict-prototypes",
]
