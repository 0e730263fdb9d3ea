"""pytest plugin loaded into every child run by upstream_pytests.py.

It writes one JSON line per event to the file named by $UPSTREAM_PYTESTS_LOG,
flushed as it goes, so the record survives a crash of the interpreter: which
test started, each test's outcome, collection errors, and at the end of the
session the libtvm_ffi.so files mapped into the process (/proc/self/maps),
which is the proof of what runtime the tests ran on.
"""
import json
import os

_LOG = None


def _write(record):
    global _LOG
    path = os.environ.get("UPSTREAM_PYTESTS_LOG")
    if not path:
        return
    if _LOG is None:
        _LOG = open(path, "a", encoding="utf-8")
    _LOG.write(json.dumps(record) + "\n")
    _LOG.flush()


from swap import mapped_runtimes  # noqa: E402


def pytest_collectreport(report):
    if report.failed:
        _write({"event": "collect_error", "nodeid": report.nodeid,
                "message": str(report.longrepr)[-2000:]})


def pytest_runtest_logstart(nodeid, location):
    _write({"event": "start", "nodeid": nodeid})


def pytest_runtest_logreport(report):
    record = {"event": "report", "nodeid": report.nodeid, "when": report.when,
              "outcome": report.outcome}
    if hasattr(report, "wasxfail"):
        record["xfail"] = True
    if report.failed:
        record["message"] = str(report.longrepr)[-2000:]
    elif report.skipped and isinstance(report.longrepr, tuple):
        record["message"] = str(report.longrepr[2])
    _write(record)


def pytest_sessionfinish(session, exitstatus):
    _write({"event": "maps", "runtimes": mapped_runtimes(), "exitstatus": int(exitstatus)})
