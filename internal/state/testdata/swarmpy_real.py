#!/usr/bin/env python3
"""Run swarm.py's own readers on a state root written by Go swarm.

Usage: SWARM_DIR=ROOT swarmpy_real.py PATH/TO/swarm.py WORKER... -- LOOP...

swarm.py computes its paths from SWARM_DIR when it is imported, so the
caller sets SWARM_DIR to the state root. The module is imported (its main()
is not run) and these are called like its command line would: State(),
load_ralph_state(), cmd_ls (table and json), cmd_status and, for each loop,
cmd_ralph_status and cmd_ralph_list. sys.exit from a command is expected
(status exits 1 for a stopped worker); any other exception is a failure.
"""

import argparse
import contextlib
import importlib.util
import io
import sys
import traceback


def load(path):
    spec = importlib.util.spec_from_file_location("swarmpy", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def call(label, fn, *args):
    """Run one swarm.py function, capture its output, report exceptions."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                fn(*args)
            except SystemExit:
                pass
    except Exception:
        print(f"ERROR: {label}:\n{out.getvalue()}{traceback.format_exc()}")
        return False
    text = out.getvalue().rstrip()
    print(f"OK: {label}" + ("\n  " + text.replace("\n", "\n  ") if text else ""))
    return True


def main():
    sw = load(sys.argv[1])
    rest = sys.argv[2:]
    sep = rest.index("--")
    workers, loops = rest[:sep], rest[sep + 1:]
    ok = True
    state = sw.State()
    names = sorted(w.name for w in state.workers)
    if names != sorted(workers):
        print(f"ERROR: State() read workers {names}, want {sorted(workers)}")
        ok = False
    for w in state.workers:
        ok &= call(f"relative_time({w.name}.started)", lambda w=w: print(sw.relative_time(w.started)))
    ns = argparse.Namespace
    for fmt in ("table", "json", "names"):
        ok &= call(f"ls --format {fmt}", sw.cmd_ls, ns(format=fmt, status="all", tag=None))
    for name in workers:
        ok &= call(f"status {name}", sw.cmd_status, ns(name=name))
    for name in loops:
        if sw.load_ralph_state(name) is None:
            print(f"ERROR: load_ralph_state({name}) found nothing")
            ok = False
        ok &= call(f"ralph status {name}", sw.cmd_ralph_status, ns(name=name))
    for fmt in ("table", "json"):
        ok &= call(f"ralph list --format {fmt}", sw.cmd_ralph_list, ns(format=fmt, status="all"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
