"""What a release's C headers declare, found by the compiler rather than by a
hand list: every struct (its size, alignment, and the offset, size and type of each
field, members of anonymous unions included), every enumerator, every integer
macro of the ABI's prefixes, every function's signature and every other
typedef. The headers are c_api.h, extra/c_env_api.h and the dlpack.h they
include, read as C (the C ABI; declarations only C++ sees are not part of it).

    discover(include_dirs) -> (numeric, typed)

numeric: {expression: kind}, in header order, the C expressions whose values
layouts.evaluate() compiles (kind: "layout", "enum" or "macro"); typed:
{label: type spelling} (labels "type of S.f", "typedef T", "signature of F").
"""

import json
import os
import re
import subprocess
import tempfile

CLANG = os.environ.get("TVMFFI_LAYOUTS_CLANG", "clang-14")
HEADERS = ("tvm/ffi/c_api.h", "tvm/ffi/extra/c_env_api.h")
MACRO_PREFIXES = ("TVM_FFI_", "DLPACK_", "kTVMFFI", "kDL")
# An integer constant expression: digits, suffixes, shifts, parentheses.
INTEGER_BODY = re.compile(r"^[\s()0-9xXa-fA-FuUlL<>|&+\-~*]+$")


def _translation_unit(include_dirs):
    names = [h for h in HEADERS if any(os.path.exists(os.path.join(d, h)) for d in include_dirs)]
    return "".join("#include <%s>\n" % h for h in names)


def _clang(args, text, include_dirs):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "discover.c")
        with open(src, "w") as f:
            f.write(text)
        cmd = [CLANG, "-std=c17", "-w"] + args + ["-I" + d for d in include_dirs] + [src]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError("%s failed on %s:\n%s" % (CLANG, include_dirs, res.stderr[-2000:]))
        return res.stdout


def _ours(path, include_dirs):
    """True for a declaration in the release's own headers (not libc's)."""
    # Compared as spelled and resolved: Bazel's runfiles link each file,
    # not the folder, so only one of the two may agree.
    for norm in (os.path.abspath, os.path.realpath):
        if any(norm(path or "").startswith(norm(d) + os.sep) for d in include_dirs):
            return True
    return False


def _top_level_decls(ast, include_dirs):
    """(node, in our headers) for each top-level declaration. Clang's JSON
    names a location's file only when it changes, so the file is tracked
    across nodes in the order clang prints their locations."""
    current = None

    def see(loc):
        nonlocal current
        for part in (loc.get("spellingLoc"), loc.get("expansionLoc"), loc):
            if part and "file" in part:
                current = part["file"]

    for node in ast.get("inner", []):
        see(node.get("loc", {}))
        here = current
        rng = node.get("range", {})
        see(rng.get("begin", {}))
        see(rng.get("end", {}))
        yield node, _ours(here, include_dirs)


def _unnamed(type_spelling):
    return "(unnamed" in type_spelling or "(anonymous" in type_spelling


def _fields(record, prefix=""):
    """[(path, type spelling or None)] of a record's fields; the members of
    an anonymous struct or union are the record's own (C11), those of a
    named field of unnamed type are reached as field.member."""
    out = []
    pending = None
    for child in record.get("inner", []):
        if child["kind"] == "RecordDecl":
            pending = child
        elif child["kind"] == "FieldDecl":
            name = child.get("name")
            spelling = child.get("type", {}).get("qualType", "")
            if not name:
                if pending is not None:
                    out += _fields(pending, prefix)
            elif _unnamed(spelling):
                out.append((prefix + name, None))
                if pending is not None:
                    out += _fields(pending, prefix + name + ".")
            else:
                out.append((prefix + name, spelling))
            pending = None
    return out


def _record_ids(node, found):
    """Ids of the records a typedef's type refers to."""
    if isinstance(node, dict):
        decl = node.get("decl")
        if node.get("kind") in ("RecordType", "EnumType") and decl:
            found.append(decl.get("id"))
        for v in node.values():
            _record_ids(v, found)
    elif isinstance(node, list):
        for v in node:
            _record_ids(v, found)
    return found


def _macros(include_dirs, text):
    out = []
    for line in _clang(["-E", "-dM"], text, include_dirs).splitlines():
        m = re.match(r"#define (\w+) (.+)$", line)
        if m and m.group(1).startswith(MACRO_PREFIXES) and INTEGER_BODY.match(m.group(2)) \
                and re.search(r"\d", m.group(2)):
            out.append(m.group(1))
    return sorted(out)


def _emit_record(node, name, numeric, typed):
    numeric["sizeof(%s)" % name] = "layout"
    numeric["_Alignof(%s)" % name] = "layout"
    for path, spelling in _fields(node):
        numeric["offsetof(%s, %s)" % (name, path)] = "layout"
        numeric["sizeof(((%s*)0)->%s)" % (name, path)] = "layout"
        if spelling is not None:
            typed["type of %s.%s" % (name, path)] = spelling


def discover(include_dirs):
    text = _translation_unit(include_dirs)
    if not text:
        raise RuntimeError("no tvm/ffi/c_api.h under %s" % include_dirs)
    ast = json.loads(_clang(["-fsyntax-only", "-Xclang", "-ast-dump=json"], text, include_dirs))
    numeric, typed = {}, {}
    # A struct is named by the typedef that follows its definition when
    # there is one, else by its tag; an untagged one nothing names is skipped.
    pending = None
    for node, ours in _top_level_decls(ast, include_dirs):
        kind = node["kind"]
        if pending is not None:
            refs = _record_ids(node.get("inner", []), []) if kind == "TypedefDecl" else []
            if refs == [pending["id"]]:
                _emit_record(pending, node["name"], numeric, typed)
                pending = None
                continue
            if pending.get("name"):
                _emit_record(pending, "%s %s" % (pending.get("tagUsed", "struct"), pending["name"]),
                             numeric, typed)
            pending = None
        if not ours:
            continue
        if kind == "RecordDecl" and node.get("completeDefinition"):
            pending = node
        elif kind == "TypedefDecl":
            spelling = node["type"]["qualType"]
            if not re.match(r"(struct|union|enum) ", spelling):
                typed["typedef " + node["name"]] = spelling
        elif kind == "EnumDecl":
            for c in node.get("inner", []):
                if c["kind"] == "EnumConstantDecl":
                    numeric[c["name"]] = "enum"
        elif kind == "FunctionDecl":
            typed["signature of " + node["name"]] = node["type"]["qualType"]
    for m in _macros(include_dirs, text):
        numeric[m] = "macro"
    return numeric, typed
