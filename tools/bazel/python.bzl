"""The one place Bazel repository rules find the project's Python."""

def find_python(ctx):
    """Returns the path of the python3 the project's tools and tests use."""
    python = ctx.which("python3")
    if python == None:
        fail("python3 is not on PATH; run tools/bootstrap.sh")
    return python
