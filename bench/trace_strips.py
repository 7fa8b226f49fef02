#!/usr/bin/env python3
"""Per strip, when each queue worked on it, from a trace that `clfilter-bench --trace FILE` or
`clfilter --trace FILE` wrote (Chrome trace format):

    python3 bench/trace_strips.py FILE [--kernels]

Each row: a strip, then for each queue (host read, upload, compute, download, host write) its
first start and last end in microseconds from the trace's first command, and its busy time.
--kernels lists each compute command of every strip too. The gaps between one strip's upload
and the next, and between a strip's compute and its download, are where a streamed run loses
time against the bare transfer."""
import argparse
import collections
import json
import re

QUEUES = ("host read", "upload", "compute", "download", "host write")


def spans(events):
    """(strip, queue) -> [(begin, end, command)] from the trace's B/E pairs."""
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    begun, found = {}, collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "B":
            begun[(e["tid"], e["name"])] = e["ts"]
        elif e.get("ph") == "E":
            m = re.match(r"strip (\d+) (.*)", e["name"])
            if not m:
                continue
            begin = begun.pop((e["tid"], e["name"]))
            found[(int(m.group(1)), names[e["tid"]])].append((begin, e["ts"], m.group(2)))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--kernels", action="store_true", help="list every strip's compute commands")
    a = ap.parse_args()
    with open(a.trace) as f:
        found = spans(json.load(f)["traceEvents"])
    if not found:
        raise SystemExit(f"{a.trace}: no strip commands in this trace")
    t0 = min(b for v in found.values() for b, _, _ in v)
    print("strip | queue first start - last end (busy), us from the first command")
    for strip in sorted({s for s, _ in found}):
        row = f"{strip:5d}"
        for queue in QUEUES:
            v = found.get((strip, queue))
            if v:
                busy = sum(e - b for b, e, _ in v)
                row += f" | {queue} {min(b for b, _, _ in v) - t0:8.1f} -"
                row += f" {max(e for _, e, _ in v) - t0:8.1f} ({busy:6.1f})"
        print(row)
        if a.kernels:
            for b, e, name in found.get((strip, "compute"), []):
                print(f"        {name} {b - t0:8.1f} ({e - b:6.1f})")


if __name__ == "__main__":
    main()
