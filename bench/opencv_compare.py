"""clfilter against OpenCV's CPU functions in one process, on one image (the PoCL targets).

Pipeline time (host array in, host array out, best of N) of clfilter on the default device against
OpenCV on the same float32 array, with the largest difference. --set linear: cv2.GaussianBlur and
cv2.filter2D; --set nonlinear: cv2.medianBlur, cv2.dilate, cv2.bilateralFilter (also on the
image as u8 levels, gray and RGB):
    PYTHONPATH=build/python python3 bench/opencv_compare.py [--set nonlinear] [--size 3840x2160]
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


def nonlinear_cases(image):
    """The non-linear filters, each with OpenCV's default border and its own; a case's fourth
    item, where there is one, is its input in place of the float32 image."""
    ellipse = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (15, 15))
    gray = np.round(image * 255).astype(np.uint8)
    rgb = np.ascontiguousarray(np.dstack([gray, gray[::-1], gray[:, ::-1]]))
    u8 = [("bilateral:d=9,sigma_color=40,sigma_space=3",
           lambda a=a: cv2.bilateralFilter(a, 9, 40, 3), "cv2.bilateralFilter", a)
          for a in (gray, rgb)]
    return [("median:ksize=3", lambda: cv2.medianBlur(image, 3), "cv2.medianBlur"),
            ("median:ksize=5", lambda: cv2.medianBlur(image, 5), "cv2.medianBlur"),
            ("morphology:op=dilate,ksize=3", lambda: cv2.dilate(image, np.ones((3, 3), np.uint8)),
             "cv2.dilate"),
            ("morphology:op=dilate,ksize=31",
             lambda: cv2.dilate(image, np.ones((31, 31), np.uint8)), "cv2.dilate"),
            ("morphology:op=dilate,shape=ellipse,ksize=15", lambda: cv2.dilate(image, ellipse),
             "cv2.dilate"),
            ("bilateral:d=9,sigma_color=0.1,sigma_space=3",
             lambda: cv2.bilateralFilter(image, 9, 0.1, 3), "cv2.bilateralFilter")] + u8


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="3840x2160")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--set", choices=("linear", "nonlinear"), default="linear")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    rng = np.random.default_rng(1)
    image = cv2.GaussianBlur(rng.random((height, width), dtype=np.float32), (0, 0), 2)
    kernels = {n: rng.random((n, n), dtype=np.float32) - 0.5 for n in (31, 63)}
    reflect = cv2.BORDER_REFLECT_101
    cases = nonlinear_cases(image) if args.set == "nonlinear" else []
    for sigma in () if args.set == "nonlinear" else (20, 60):
        opencv = lambda s=sigma: cv2.GaussianBlur(image, (0, 0), s, borderType=reflect)
        for method in ("exact", "fast"):
            cases.append(("gaussian:sigma=%d,method=%s" % (sigma, method), opencv,
                          "cv2.GaussianBlur"))
    # The random windows as auto picks their path (FFT on CPUs from 31x31), and 31x31 direct.
    for n, method in () if args.set == "nonlinear" else ((31, "auto"), (31, "direct"), (63, "auto")):
        matrix = ";".join(",".join("%.9g" % v for v in row) for row in kernels[n])
        cases.append(("convolve:kernel=%s,method=%s" % (matrix, method),
                      lambda k=kernels[n]: cv2.filter2D(image, -1, k, borderType=reflect),
                      "cv2.filter2D"))
    device = clfilter.devices()[0]["label"]
    print("device: %s; %s float32, best of %d" % (device, args.size, args.reps))
    print("%-44s %12s %24s %8s %10s" % ("filter", "clfilter ms", "OpenCV ms", "ratio", "max diff"))
    for spec, opencv, name, *given in cases:
        source = given[0] if given else image
        pipeline = clfilter.Pipeline([spec])
        ours, theirs = best_ms(lambda: pipeline(source), args.reps), best_ms(opencv, args.reps)
        diff = float(np.abs(pipeline(source).astype(np.float64) - opencv()).max())
        label = spec if source is image else "%s u8 x%d" % (spec, source.shape[2] if
                                                           source.ndim == 3 else 1)
        if spec.startswith("convolve"):
            label = "convolve random %dx%d, %s" % (spec.count(";") + 1, spec.count(";") + 1,
                                                    pipeline.describe()[0].split(", ")[2])
        print("%-44s %12.1f %10.1f %-13s %7.2fx %10.2g" % (label, ours, theirs, name, theirs / ours,
                                                          diff))
    print("(ratio = OpenCV time / clfilter time: above 1 clfilter is faster)")


if __name__ == "__main__":
    main()
