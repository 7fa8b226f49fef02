"""clfilter against OpenCV's CPU functions in one process, on one image (issue 13's PoCL targets).

Pipeline time (host array in, host array out, best of N) of clfilter on the default device against
cv2.GaussianBlur and cv2.filter2D on the same float32 array, with the largest difference:
    PYTHONPATH=build/python python3 bench/opencv_compare.py [--size 3840x2160] [--reps 5]
"""
import argparse
import time

import cv2
import numpy as np

import clfilter


def best_ms(run, reps):
    run()  # programs built, caches warm
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="3840x2160")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    rng = np.random.default_rng(1)
    image = cv2.GaussianBlur(rng.random((height, width), dtype=np.float32), (0, 0), 2)
    kernels = {n: rng.random((n, n), dtype=np.float32) - 0.5 for n in (31, 63)}
    reflect = cv2.BORDER_REFLECT_101
    cases = []
    for sigma in (20, 60):
        opencv = lambda s=sigma: cv2.GaussianBlur(image, (0, 0), s, borderType=reflect)
        for method in ("exact", "fast"):
            cases.append(("gaussian:sigma=%d,method=%s" % (sigma, method), opencv,
                          "cv2.GaussianBlur"))
    # The random windows as auto picks their path (FFT on CPUs from 31x31), and 31x31 direct.
    for n, method in ((31, "auto"), (31, "direct"), (63, "auto")):
        matrix = ";".join(",".join("%.9g" % v for v in row) for row in kernels[n])
        cases.append(("convolve:kernel=%s,method=%s" % (matrix, method),
                      lambda k=kernels[n]: cv2.filter2D(image, -1, k, borderType=reflect),
                      "cv2.filter2D"))
    device = clfilter.devices()[0]["label"]
    print("device: %s; %s float32, best of %d" % (device, args.size, args.reps))
    print("%-32s %12s %24s %8s %10s" % ("filter", "clfilter ms", "OpenCV ms", "ratio", "max diff"))
    for spec, opencv, name in cases:
        pipeline = clfilter.Pipeline([spec])
        ours, theirs = best_ms(lambda: pipeline(image), args.reps), best_ms(opencv, args.reps)
        diff = float(np.abs(pipeline(image) - opencv()).max())
        label = spec
        if spec.startswith("convolve"):
            label = "convolve random %dx%d, %s" % (spec.count(";") + 1, spec.count(";") + 1,
                                                    pipeline.describe()[0].split(", ")[2])
        print("%-32s %12.1f %10.1f %-13s %7.2fx %10.2g" % (label, ours, theirs, name, theirs / ours,
                                                          diff))
    print("(ratio = OpenCV time / clfilter time: above 1 clfilter is faster)")


if __name__ == "__main__":
    main()
