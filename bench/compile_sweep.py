"""How many programs a sweep over sigmas builds, and how long it takes with empty program caches.

    cache=$(mktemp -d); XDG_CACHE_HOME=$cache POCL_CACHE_DIR=$cache/pocl \\
      PYTHONPATH=build/python python3 bench/compile_sweep.py exact|fast
    ls $cache/clfilter | wc -l     # programs built

Fresh pipelines for gaussian sigma 5..54 (one each) on a 256x256 float32 image, default device.
"""
import sys
import time

import numpy as np

import clfilter


def main():
    method = sys.argv[1] if len(sys.argv) > 1 else "exact"
    image = np.random.default_rng(1).random((256, 256), dtype=np.float32)
    start = time.perf_counter()
    for sigma in range(5, 55):
        clfilter.Pipeline(["gaussian:sigma=%d,method=%s" % (sigma, method)])(image)
    print("method=%s: 50 sigmas (5..54) in %.1f s" % (method, time.perf_counter() - start))


if __name__ == "__main__":
    main()
