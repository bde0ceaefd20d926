#!/usr/bin/env python3
"""Read a swarm state root the way swarm.py reads it, and report what breaks.

Usage: swarmpy_load.py STATE_ROOT EXPECT_JSON

swarm.py (the Python tool swarm replaces) loads state.json into dataclasses
whose constructors reject unknown or missing keys, and it does date
arithmetic on the timestamps it finds:

  * worker "started" (ls, status): datetime.now() - datetime.fromisoformat(v),
    so the value must be naive (no zone), or Python raises TypeError;
  * loop "started", "last_iteration_started", "last_iteration_ended"
    (ralph status): fromisoformat(v).strftime(...), shown as local time;
  * loop "last_screen_change" (ralph status): fromisoformat(v), a naive value
    taken as UTC, then datetime.now(timezone.utc) - v.

This script repeats those steps on files written by the Go state package.
Python before 3.11 accepts in fromisoformat only the exact forms isoformat()
writes, so the text of every timestamp is also checked against those forms.

EXPECT_JSON tells the ages (seconds before now) the Go test wrote, so a
value read in the wrong zone is caught, and which keys are known gaps
(reported as warnings instead of errors).

Lines printed: "ERROR: ..." (swarm.py would fail or misread), "WARN: ..."
(a known difference), "OK: ...". Exit status 1 when there is an ERROR.
"""

import json
import os
import re
import sys
from datetime import datetime, timezone

# The text isoformat() writes: microseconds, or no fraction when they are 0.
NAIVE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$")
UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$")

# Keys of swarm.py's dataclasses: TmuxInfo(**d) and WorktreeInfo(**d) raise
# TypeError on any other key.
TMUX_KEYS = {"session", "window", "socket"}
WORKTREE_KEYS = {"path", "branch", "base_repo"}
WORKER_REQUIRED = ("name", "status", "cmd", "started", "cwd")
RALPH_REQUIRED = ("worker_name", "prompt_file", "max_iterations")

# How far an age may be off: the Go test and this script run one after the
# other, on a loaded machine perhaps.
SLACK = 120

problems = {"ERROR": 0, "WARN": 0}


def report(level, msg):
    if level in problems:
        problems[level] += 1
    print(f"{level}: {msg}")


def check_age(where, age, want, level="ERROR"):
    """Report an age far from the one written; True when it is close."""
    if want is None or abs(age - want) <= SLACK:
        return True
    report(level, f"{where}: read as {age:.0f}s old, written {want}s old "
                  "(wrong zone?)")
    return False


def naive_time(where, value, want_age):
    """Parse a zone-less local time as swarm.py does, and check its age."""
    if not isinstance(value, str) or not NAIVE.match(value):
        report("ERROR", f"{where}: {value!r} is not isoformat() of a naive "
                        "local time")
        return
    try:
        t = datetime.fromisoformat(value)
        age = (datetime.now() - t).total_seconds()
        t.strftime("%Y-%m-%d %H:%M:%S")
    except (ValueError, TypeError) as e:
        report("ERROR", f"{where}: {value!r}: {e}")
        return
    if check_age(where, age, want_age):
        report("OK", f"{where} = {value}")


def utc_time(where, value, want_age, level):
    """Parse last_screen_change as swarm.py's ralph status does."""
    good = isinstance(value, str) and UTC.match(value)
    if not good:
        report(level, f"{where}: {value!r} is not isoformat() of a UTC time "
                      "(swarm.py takes a zone-less value as UTC)")
    try:
        t = datetime.fromisoformat(value)
        if t.tzinfo is None:
            t = t.replace(tzinfo=timezone.utc)
        age = (datetime.now(timezone.utc) - t).total_seconds()
    except (ValueError, TypeError) as e:
        report("ERROR", f"{where}: {value!r}: {e}")
        return
    if check_age(where, age, want_age, level) and good:
        report("OK", f"{where} = {value}")


def check_type(where, value, types, allow_none=False):
    if value is None and allow_none:
        return
    # bool is an int in Python; swarm.py's ints are never booleans.
    if isinstance(value, bool) and bool not in types:
        report("ERROR", f"{where}: {value!r} is a boolean")
    elif not isinstance(value, types):
        report("ERROR", f"{where}: {value!r} has type {type(value).__name__}")


def check_worker(w, expect):
    name = w.get("name", "?")
    where = f"state.json worker {name}"
    for key in WORKER_REQUIRED:
        if key not in w:
            report("ERROR", f"{where}: no key {key!r} (Worker.from_dict needs it)")
            return
    for key, sub in (("tmux", TMUX_KEYS), ("worktree", WORKTREE_KEYS)):
        v = w.get(key)
        if v is None:
            continue
        if not isinstance(v, dict) or set(v) - sub:
            report("ERROR", f"{where}: {key} {v!r} has keys swarm.py rejects")
            continue
        required = sub - {"socket"}
        if not required <= set(v):
            report("ERROR", f"{where}: {key} {v!r} misses keys")
    if w.get("tmux") is not None:
        check_type(f"{where}.tmux.socket", w["tmux"].get("socket"), (str,), True)
    check_type(f"{where}.cmd", w["cmd"], (list,))
    check_type(f"{where}.env", w.get("env", {}), (dict,))
    check_type(f"{where}.tags", w.get("tags", []), (list,))
    check_type(f"{where}.pid", w.get("pid"), (int,), True)
    check_type(f"{where}.metadata", w.get("metadata", {}), (dict,))
    naive_time(f"{where}.started", w["started"], expect.get("started"))


def check_ralph(path, d, expect, strict_utc):
    where = path
    for key in RALPH_REQUIRED:
        if key not in d:
            report("ERROR", f"{where}: no key {key!r} (RalphState.from_dict needs it)")
            return
    for key in ("max_iterations", "current_iteration", "consecutive_failures",
                "total_failures", "inactivity_timeout"):
        check_type(f"{where}.{key}", d.get(key, 0), (int,))
    check_type(f"{where}.status", d.get("status", "running"), (str,))
    durations = d.get("iteration_durations", [])
    check_type(f"{where}.iteration_durations", durations, (list,))
    for v in durations:
        check_type(f"{where}.iteration_durations[]", v, (int, float))
    for key in ("done_pattern", "exit_reason"):
        check_type(f"{where}.{key}", d.get(key), (str,), True)
    check_type(f"{where}.check_done_continuous", d.get("check_done_continuous", False), (bool,))
    check_type(f"{where}.monitor_pid", d.get("monitor_pid"), (int,), True)
    check_type(f"{where}.max_context", d.get("max_context"), (int,), True)
    if d.get("max_context") == 0:
        # swarm.py's monitor tests "max_context is not None": 0 would mean
        # a threshold of 0%, a nudge on the first poll.
        report("WARN", f"{where}.max_context is 0, swarm.py reads that as a "
                       "0% threshold (write null when unset)")
    # ralph status reads each of these only when it is set (truthy).
    for key in ("started", "last_iteration_started", "last_iteration_ended"):
        if d.get(key):
            naive_time(f"{where}.{key}", d[key], expect.get(key))
    if d.get("last_screen_change"):
        utc_time(f"{where}.last_screen_change", d["last_screen_change"],
                 expect.get("last_screen_change"),
                 "ERROR" if strict_utc else "WARN")


def main():
    root, expect_path = sys.argv[1], sys.argv[2]
    with open(expect_path) as f:
        expect = json.load(f)
    with open(os.path.join(root, "state.json")) as f:
        data = json.load(f)
    workers = data.get("workers", [])
    seen = set()
    for w in workers:
        check_worker(w, expect["workers"].get(w.get("name"), {}))
        seen.add(w.get("name"))
    for name in expect["workers"]:
        if name not in seen:
            report("ERROR", f"state.json: worker {name} missing")
    for name, want in expect["ralph"].items():
        path = os.path.join(root, "ralph", name, "state.json")
        with open(path) as f:
            check_ralph(f"ralph/{name}/state.json", json.load(f), want,
                        expect.get("strict_utc", False))
    print(f"{problems['ERROR']} error(s), {problems['WARN']} warning(s)")
    return 1 if problems["ERROR"] else 0


if __name__ == "__main__":
    sys.exit(main())
