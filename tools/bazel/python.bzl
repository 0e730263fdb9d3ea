"""The one place Bazel finds the project's Python.

That is the project venv, <workspace>/.venv/bin/python3, which
tools/bootstrap.sh creates and fills from tools/requirements.txt. Repository
rules (tvm_ffi_upstream, pypi_wheel) call find_python(ctx); py_test targets
run under the toolchain that project_python registers (see WORKSPACE), whose
interpreter is the same file, and other rules get it as $(PYTHON3) from
@project_python//:python3_variable. Without a venv (bootstrap not run yet), the
python3 on PATH is used and a warning says so.
"""

def venv_python(ctx):
    """Returns the path the project venv's interpreter has (it may not exist)."""
    return str(ctx.path(Label("//:WORKSPACE")).dirname) + "/.venv/bin/python3"

def find_python(ctx):
    """Returns the path of the python3 the project's tools and tests use."""
    venv = venv_python(ctx)
    if ctx.path(venv).exists:
        return venv
    python = ctx.which("python3")
    if python == None:
        fail("no project venv (%s) and no python3 on PATH; run tools/bootstrap.sh" % venv)
    print("WARNING: no project venv (%s); using %s instead. Run tools/bootstrap.sh." % (venv, python))
    return str(python)

def _python3_variable_impl(ctx):
    return [platform_common.TemplateVariableInfo({"PYTHON3": ctx.attr.path})]

# $(PYTHON3) for rules other than py_* (sh_test args, genrules): name
# "@project_python//:python3_variable" in their `toolchains`.
python3_variable = rule(
    implementation = _python3_variable_impl,
    attrs = {"path": attr.string(mandatory = True)},
)

_BUILD = """
load("@bazel_tools//tools/python:toolchain.bzl", "py_runtime_pair")
load("@//tools/bazel:python.bzl", "python3_variable")

package(default_visibility = ["//visibility:public"])

# The stub that starts a py_binary/py_test and the test itself both run
# under the project's Python.
py_runtime(
    name = "python3",
    interpreter_path = "{python}",
    python_version = "PY3",
    stub_shebang = "{shebang}",
)

py_runtime_pair(
    name = "runtime_pair",
    py3_runtime = ":python3",
)

python3_variable(
    name = "python3_variable",
    path = "{python}",
)

toolchain(
    name = "toolchain",
    toolchain = ":runtime_pair",
    toolchain_type = "@bazel_tools//tools/python:toolchain_type",
)
"""

def _project_python_impl(ctx):
    ctx.file("WORKSPACE", "")
    python = find_python(ctx)
    # The kernel reads at most 255 bytes of a #! line and splits at blanks.
    shebang = "#!" + python
    if " " in python or len(shebang) > 200:
        shebang = "#!/usr/bin/env python3"
    ctx.file("BUILD", _BUILD.format(python = python, shebang = shebang))

# A Python toolchain for py_test/py_binary whose interpreter is find_python's.
project_python = repository_rule(
    implementation = _project_python_impl,
    local = True,
    environ = ["PATH"],
)
