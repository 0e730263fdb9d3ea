"""Which recorded ABI changes break a binary: every change layouts.py finds
between consecutive releases gets a label and the reason for it.

  breaking              a binary built against the older headers misbehaves
                        on the newer runtime: a size or offset changed, an
                        enumerator value now means something else, a
                        declared function changed or went away
  source-breaking only  rebuilding needs an edit, binaries are unaffected: a
                        rename with the same value, offset and size
  compatible            an addition binaries built before never meet

`between(rec, a, b)` answers one pair: the changes that break a binary built
against release `a` and run on release `b` (either order: a binary built
against a newer release and run on an older one meets the additions it may
use as "breaking if used").
"""

import re

BREAKING, SOURCE, COMPATIBLE, IF_USED = ("breaking", "source-breaking only", "compatible",
                                          "breaking if used")

# Enumerator values that moved to a name with a different meaning (not a
# rename): what the new name means, from the comments of the release's own
# header beside the old name's.
MEANINGS = {
    "kTVMFFIFieldFlagBitMaskSEqHashDefRecursive":
        "bit 1 << 4 meant 'the field enters a def region' up to 0.1.11; from 0.1.12 it means "
        "'enters a recursive def region' (co-introduced vars), and non-recursive regions take "
        "bit 1 << 12: a binary built before marks every def region recursive",
    "kTVMFFIFieldFlagBitMaskSEqHashDefPattern":
        "bit 1 << 4 meant 'enters a recursive def region' in 0.1.12 to 0.1.13.post3; from "
        "0.1.14.post0 it means 'enters a pattern def region' (every free var in the type binds on "
        "first occurrence, and the pattern propagates into nested regions)",
    "kTVMFFIFieldFlagBitMaskSEqHashDefSimple":
        "bit 1 << 12 meant 'enters a non-recursive def region' in 0.1.12 to 0.1.13.post3; from "
        "0.1.14.post0 it means 'enters a simple def region', which has no effect inside a "
        "pattern region",
    "kTVMFFIDefRegionKindPattern":
        "def region kind 1 meant Recursive in 0.1.12 to 0.1.13.post3; from 0.1.14.post0 it is "
        "Pattern, whose binding rule differs and which propagates",
    "kTVMFFIDefRegionKindSimple":
        "def region kind 2 meant NonRecursive in 0.1.12 to 0.1.13.post3; from 0.1.14.post0 it is "
        "Simple, which has no effect inside a pattern region",
}

# Macros whose value is informative only.
VERSION_MACROS = ("TVM_FFI_VERSION_MAJOR", "TVM_FFI_VERSION_MINOR", "TVM_FFI_VERSION_PATCH")


def _value_at(rec, label, release):
    """The fact's value in `release` (None when absent or unknown)."""
    for name, runs in rec["facts"]:
        if name == label:
            val = None
            for first, v in runs:
                if rec["releases"].index(first) <= rec["releases"].index(release):
                    val = v
            return val
    return None


def _previous(rec, release):
    order = rec["releases"]
    i = order.index(release)
    return order[i - 1] if i > 0 else None


def _struct_field(label):
    """('S', 'f') of offsetof(S, f), sizeof(((S*)0)->f) and 'type of S.f'."""
    m = (re.match(r"offsetof\((\w[\w ]*), (\w+)\)$", label)
         or re.match(r"sizeof\(\(\((\w[\w ]*)\*\)0\)->(\w+)\)$", label)
         or re.match(r"type of (\w+)\.(\w+)$", label))
    return (m.group(1), m.group(2)) if m else (None, None)


def _renamed_field(rec, release, struct, field, appeared):
    """The field of `struct` that took (appeared) or gave up (not appeared)
    `field`'s offset and size at `release`, or None."""
    prev = _previous(rec, release)
    off = "offsetof(%s, %s)" % (struct, field)
    width = "sizeof(((%s*)0)->%s)" % (struct, field)
    here, there = (release, prev) if appeared else (prev, release)
    want = (_value_at(rec, off, here), _value_at(rec, width, here))
    for label, _ in rec["facts"]:
        m = re.match(r"offsetof\(%s, (\w+)\)$" % re.escape(struct), label)
        if not m or m.group(1) == field:
            continue
        other = m.group(1)
        other_width = "sizeof(((%s*)0)->%s)" % (struct, other)
        if (_value_at(rec, label, there), _value_at(rec, other_width, there)) == want and \
                _value_at(rec, label, here) is None:
            return other
    return None


def _enum_partner(rec, release, name, value, appeared):
    """The enumerator that gave up `value` at `release` (when `name`
    appeared with it) or took it there (when `name` went away), or None."""
    prev = _previous(rec, release)
    for label, _ in rec["facts"]:
        if label == name or not label.startswith("k"):
            continue
        before, after = _value_at(rec, label, prev), _value_at(rec, label, release)
        if appeared and before == value and after is None:
            return label
        if not appeared and after == value and before is None:
            return label
    return None


def _field_label(rec, release, struct, field, appeared, old_size):
    """The label of a field that appeared or went away inside a struct."""
    if _value_at(rec, "sizeof(%s)" % struct, _previous(rec, release)) is None:
        return COMPATIBLE, "part of %s, new in this release" % struct
    other = _renamed_field(rec, release, struct, field, appeared)
    if other:
        return SOURCE, ("renamed from %s: same offset and size" % other if appeared
                        else "renamed to %s: same offset and size" % other)
    if not appeared:
        return BREAKING, "field %s removed from %s" % (field, struct)
    off = _value_at(rec, "offsetof(%s, %s)" % (struct, field), release)
    if old_size is not None and off is not None and off >= old_size:
        return BREAKING, ("%s appended at offset %d: a %s made by a binary built before ends at byte "
                          "%d, so reading %s reads past it" % (field, off, struct, old_size, field))
    return BREAKING, "%s placed at offset %s inside bytes older %s used otherwise" % (field, off, struct)


def _layout(rec, release, name, old, new):
    struct, field = _struct_field(name)
    if field is None:
        m = re.match(r"(sizeof|_Alignof)\((\w[\w ]*)\)$", name)
        struct = m.group(2) if m else name
        if old is None:
            return COMPATIBLE, "new struct %s" % struct
        if new is None:
            return BREAKING, "struct %s removed" % struct
        what = "size" if name.startswith("sizeof") else "alignment"
        return BREAKING, ("%s of %s %s -> %s: one made by a binary built before is %s bytes where this "
                          "release reads %s" % (what, struct, old, new, old, new) if what == "size"
                          else "alignment of %s %s -> %s" % (struct, old, new))
    old_size = _value_at(rec, "sizeof(%s)" % struct, _previous(rec, release))
    if old is None or new is None:
        return _field_label(rec, release, struct, field, old is None, old_size)
    if name.startswith("offsetof"):
        return BREAKING, "%s.%s moved from offset %s to %s" % (struct, field, old, new)
    return BREAKING, "%s.%s resized from %s to %s bytes" % (struct, field, old, new)


def _type(rec, release, name, old, new):
    struct, field = _struct_field(name)
    if field is None:
        return (COMPATIBLE, "new typedef") if old is None else (BREAKING, "typedef changed")
    old_size = _value_at(rec, "sizeof(%s)" % struct, _previous(rec, release))
    if old is None or new is None:
        return _field_label(rec, release, struct, field, old is None, old_size)
    width = "sizeof(((%s*)0)->%s)" % (struct, field)
    before, after = _value_at(rec, width, _previous(rec, release)), _value_at(rec, width, release)
    if before == after:
        return SOURCE, "declared type changed, its size (%s) and offset did not" % after
    return BREAKING, "declared type changed and its size went from %s to %s bytes" % (before, after)


def _enum(rec, release, name, old, new):
    if old is not None and new is not None:
        holder = _enum_partner(rec, release, name, old, appeared=False)
        now = "now %s" % holder if holder else "no longer defined"
        return BREAKING, "value %s -> %s: a binary built before carries %s, %s" % (old, new, old, now)
    if old is None:
        partner = _enum_partner(rec, release, name, new, appeared=True)
        if partner is None:
            return COMPATIBLE, "new value %s, which binaries built before never send" % new
        if name in MEANINGS:
            return BREAKING, MEANINGS[name]
        return SOURCE, "renamed from %s: the same value %s" % (partner, new)
    partner = _enum_partner(rec, release, name, old, appeared=False)
    if partner is None:
        return BREAKING, "removed: a binary built before still sends %s, which this release does not define" % old
    if partner in MEANINGS:
        return BREAKING, "its value %s now means something else (%s)" % (old, partner)
    return SOURCE, "renamed to %s: the same value %s" % (partner, old)


def _macro(name, old, new):
    if name in VERSION_MACROS:
        return COMPATIBLE, "version number"
    if name == "DLPACK_MINOR_VERSION":
        return COMPATIBLE, "DLPack minor version: the structs kept their layout"
    if old is None:
        return COMPATIBLE, "new constant"
    return BREAKING, "constant %s -> %s: binaries built before carry %s" % (old, new, old)


def label(rec, change):
    """(label, reason) of one change tuple of layouts.changes()."""
    release, kind, name, old, new = change
    if kind == "symbol":
        return ((COMPATIBLE, "new function") if new == "exported" else
                (BREAKING, "no longer exported: a binary built before that imports it does not load"))
    if kind == "signature":
        if old is None:
            return COMPATIBLE, "new function"
        if new is None:
            return BREAKING, "function no longer declared"
        return BREAKING, "signature changed"
    if kind == "layout":
        return _layout(rec, release, name, old, new)
    if kind == "type":
        return _type(rec, release, name, old, new)
    if kind == "macro":
        return _macro(name, old, new)
    return _enum(rec, release, name, old, new)


def labelled(rec, changes):
    """[(release, kind, name, old, new, label, reason)]."""
    return [tuple(c) + label(rec, c) for c in changes]


def _backward(rec, lab, reason, change):
    """The label of a change for a binary built after it and run before it."""
    release, kind, name, old, new = change
    struct, field = _struct_field(name)
    grew = kind == "layout" and name.startswith("sizeof(") and field is None and \
        old is not None and new is not None and new > old
    if kind in ("layout", "type") and (grew or (field and old is None and lab == BREAKING)):
        struct = struct or name[len("sizeof("):-1]
        size = _value_at(rec, "sizeof(%s)" % struct, _previous(rec, release))
        what = "lays it out in %s bytes" % new if grew else "reading %s of one reads past it" % field
        return IF_USED, "a %s the older runtime makes is %s bytes; the binary %s" % (struct, size, what)
    if lab != COMPATIBLE:
        return lab, reason
    if kind in ("symbol", "signature"):
        return IF_USED, "the older runtime lacks %s" % name.replace("signature of ", "")
    if kind == "enum":
        return IF_USED, "the older runtime does not know %s (%s)" % (name, new)
    if kind == "layout" and field is None and old is None:
        return IF_USED, "the older runtime has no %s" % name[name.index("(") + 1:-1]
    return lab, reason


def between(rec, built, run, changes):
    """[(release, kind, name, old, new, label, reason)] of the changes that
    matter to a binary built against `built` and run on `run`: for a newer
    runtime, those labelled breaking or source-breaking; for an older one,
    every change in between as that binary meets it."""
    order = rec["releases"]
    a, b = order.index(built), order.index(run)
    lo, hi = min(a, b), max(a, b)
    out = []
    for c in changes:
        i = order.index(c[0])
        if not lo < i <= hi:
            continue
        lab, reason = label(rec, c)
        if b < a:
            lab, reason = _backward(rec, lab, reason, c)
        if lab != COMPATIBLE:
            out.append(tuple(c) + (lab, reason))
    return out
