"""Property tests of TVMFFIAnyViewToOwnedAny on the reference, through ctypes.

Argument views drawn by ``strategies.any_views()`` go to the reference's
libtvm_ffi.so one at a time:

- inline values are copied bit for bit;
- a raw C string becomes a string and a byte array becomes bytes, inline
  (SmallStr / SmallBytes) up to 7 bytes and on the heap beyond, with the
  same content, embedded NULs included;
- an object view gives the same object with one more strong reference;
- an rvalue reference moves its object out and clears the caller's slot.

Run by `bazel test //fuzz:any_property_test`.
"""

from __future__ import annotations

import ctypes
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings

from fuzz.gen import strategies as gs
from fuzz.gen.ctypes_util import reexec_with_sanitizers, runfile

settings.register_profile(
    "ci", database=None, derandomize=True, deadline=None, max_examples=400,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SMALL_STR, SMALL_BYTES, STR, BYTES = 11, 12, 65, 66
RAW_STR, BYTE_ARRAY_PTR, RVALUE = 8, 9, 10


class Any(ctypes.Structure):
    _fields_ = [("type_index", ctypes.c_int32), ("small_len", ctypes.c_uint32),
                ("payload", ctypes.c_uint64)]


class ByteArray(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t)]


def _library() -> str:
    return runfile("reference", "libtvm_ffi.so")


@pytest.fixture(scope="module")
def lib():
    lib = ctypes.CDLL(_library())
    lib.TVMFFIAnyViewToOwnedAny.argtypes = [ctypes.POINTER(Any), ctypes.POINTER(Any)]
    lib.TVMFFIStringFromByteArray.argtypes = [ctypes.POINTER(ByteArray), ctypes.POINTER(Any)]
    lib.TVMFFIBytesFromByteArray.argtypes = [ctypes.POINTER(ByteArray), ctypes.POINTER(Any)]
    lib.TVMFFIObjectDecRef.argtypes = [ctypes.c_void_p]
    lib.TVMFFIErrorMoveFromRaised.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    return lib


def raised(lib) -> str:
    err = ctypes.c_void_p()
    lib.TVMFFIErrorMoveFromRaised(ctypes.byref(err))
    if not err.value:
        return "(nothing raised)"
    kind = ByteArray.from_address(err.value + 24)
    msg = ByteArray.from_address(err.value + 24 + ctypes.sizeof(ByteArray))
    text = ctypes.string_at(kind.data, kind.size) + b": " + ctypes.string_at(msg.data, msg.size)
    lib.TVMFFIObjectDecRef(err)
    return text.decode("latin-1")


def content(v: Any) -> bytes:
    """The bytes of a string or bytes value of any of the four kinds."""
    if v.type_index in (SMALL_STR, SMALL_BYTES):
        return ctypes.string_at(ctypes.addressof(v) + 8, v.small_len)
    ba = ByteArray.from_address(v.payload + 24)
    return ctypes.string_at(ba.data, ba.size)


def strong(obj: int) -> int:
    return ctypes.c_uint64.from_address(obj).value & 0xFFFFFFFF


def release(lib, v: Any) -> None:
    if v.type_index >= 64 and v.payload:
        lib.TVMFFIObjectDecRef(ctypes.c_void_p(v.payload))


def heap_object(lib, kind: int, data: bytes) -> int:
    buf = ctypes.create_string_buffer(data, len(data))
    ba = ByteArray(ctypes.cast(buf, ctypes.c_void_p), len(data))
    out = Any()
    make = lib.TVMFFIStringFromByteArray if kind == STR else lib.TVMFFIBytesFromByteArray
    assert make(ctypes.byref(ba), ctypes.byref(out)) == 0, raised(lib)
    assert out.type_index == kind, out.type_index  # long enough to be on the heap
    return out.payload


def owned(lib, view: Any) -> Any:
    out = Any(-7, 7, 7)
    rc = lib.TVMFFIAnyViewToOwnedAny(ctypes.byref(view), ctypes.byref(out))
    assert rc == 0, raised(lib)
    return out


@given(gs.any_views())
def test_view_to_owned_keeps_the_value(lib, case):
    what = case[0]
    if what == "inline":
        _, type_index, payload = case
        view = Any(type_index, 0, payload)
        out = owned(lib, view)
        assert bytes(out) == bytes(view)
    elif what in ("raw_str", "byte_array"):
        data = case[1]
        buf = ctypes.create_string_buffer(data, len(data) + 1)  # NUL after the data
        if what == "raw_str":
            view = Any(RAW_STR, 0, ctypes.addressof(buf))
            kinds = (SMALL_STR, STR)
        else:
            ba = ByteArray(ctypes.addressof(buf), len(data))
            view = Any(BYTE_ARRAY_PTR, 0, ctypes.addressof(ba))
            kinds = (SMALL_BYTES, BYTES)
        out = owned(lib, view)
        try:
            assert out.type_index == (kinds[0] if len(data) <= 7 else kinds[1]), out.type_index
            assert content(out) == data
            if out.type_index == kinds[0]:
                assert out.small_len == len(data)
        finally:
            release(lib, out)
    elif what == "object":
        _, kind, data = case
        obj = heap_object(lib, kind, data)
        before = strong(obj)
        out = owned(lib, Any(kind, 0, obj))
        try:
            assert (out.type_index, out.payload) == (kind, obj)
            assert strong(obj) == before + 1
            assert content(out) == data
        finally:
            release(lib, out)
            lib.TVMFFIObjectDecRef(ctypes.c_void_p(obj))
    else:  # rvalue
        _, kind, data = case
        obj = heap_object(lib, kind, data)
        slot = ctypes.c_void_p(obj)
        out = owned(lib, Any(RVALUE, 0, ctypes.addressof(slot)))
        try:
            assert slot.value is None, "the slot still holds the moved object"
            assert (out.type_index, out.payload) == (kind, obj)
            assert strong(obj) == 1
        finally:
            release(lib, out)


if __name__ == "__main__":
    reexec_with_sanitizers(_library())
    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
