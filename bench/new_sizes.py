"""What an image of a size not seen before costs: a Dask array's edge chunks, a folder of photographs
of mixed sizes. For each filter, the first call at each size in turn (the first size builds the
programs; the later ones should cost what a warm call costs), then a warm call at the last size.

    PYTHONPATH=build/python python3 bench/new_sizes.py [--device cpu] [--filter SPEC ...]

Run it with an empty cache (XDG_CACHE_HOME=$(mktemp -d)) to see the first size's build as well.
"""

import argparse
import time

import numpy as np

import clfilter

SIZES = [(100, 120), (101, 121), (137, 90), (60, 77), (1000, 1200)]
FILTERS = ["median:ksize=5", "rank:ksize=7,percentile=30", "morphology:op=dilate,ksize=9",
           "morphology:op=open,ksize=31", "bilateral:d=9,sigma_color=0.3,sigma_space=5"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--filter", action="append", dest="filters")
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    print("first call at each size, ms:", "  ".join(f"{h}x{w}" for h, w in SIZES), " warm")
    for spec in args.filters or FILTERS:
        times = []
        for h, w in SIZES:
            a = rng.random((h, w), dtype=np.float32)
            start = time.perf_counter()
            clfilter.filter(a, spec, device=args.device)
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        clfilter.filter(a, spec, device=args.device)
        times.append(time.perf_counter() - start)
        print(f"{spec:45s}", "  ".join(f"{t * 1000:8.1f}" for t in times))


if __name__ == "__main__":
    main()
