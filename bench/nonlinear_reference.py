"""The non-linear filters' references on the GPU machine, device-resident kernel time: cupyx.scipy
.ndimage (median, grey_dilation) and OpenCV's OpenCL path (cv2.UMat: medianBlur, dilate,
bilateralFilter; cv2.ocl.finish() before each clock read). Run beside clfilter-bench's rows for the
same filters (scripts/device-run.sh): ratios are read from one run.

    python3 bench/nonlinear_reference.py --size 8192x8192 [--reps 5] [--only TEXT]
"""

import argparse
import time

import cupy as cp
import cupyx.scipy.ndimage as ndi
import cv2
import numpy as np


def best_ms(fn, reps, sync):
    fn()
    sync()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync()
        best = min(best, (time.perf_counter() - t) * 1e3)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="8192x8192")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default="", help="only the workloads whose name contains TEXT")
    a = ap.parse_args()
    w, h = map(int, a.size.split("x"))
    mpix = w * h / 1e6
    rng = np.random.default_rng(7)
    f32 = rng.random((h, w), dtype=np.float32)
    u8 = rng.integers(0, 256, (h, w), dtype=np.uint8)
    u8c3 = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    xf, xu = cp.asarray(f32), cp.asarray(u8)
    cuda_sync = cp.cuda.Device().synchronize
    ellipse = cp.asarray(cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (15, 15)).astype(bool))
    cupyx = {
        "median 3x3 f32": lambda: ndi.median_filter(xf, size=3, mode="nearest"),
        "median 5x5 f32": lambda: ndi.median_filter(xf, size=5, mode="nearest"),
        "median 31x31 u8": lambda: ndi.median_filter(xu, size=31, mode="nearest"),
        "dilate rect 3x3 f32": lambda: ndi.grey_dilation(xf, size=(3, 3)),
        "dilate rect 31x31 f32": lambda: ndi.grey_dilation(xf, size=(31, 31)),
        "dilate ellipse 15x15 f32": lambda: ndi.grey_dilation(xf, footprint=ellipse),
    }
    print(f"{w}x{h}, device-resident, best of {a.reps}")
    print(f"{'workload':34s} {'ms':>9s} {'GPix/s':>8s}")
    for name, fn in cupyx.items():
        if a.only not in name:
            continue
        reps = 1 if "31x31 u8" in name else a.reps  # cupyx's 31x31 median takes seconds
        ms = best_ms(fn, reps, cuda_sync)
        print(f"{'cupyx ' + name:34s} {ms:9.3f} {mpix / ms:8.2f}")
    cv2.ocl.setUseOpenCL(True)
    if not cv2.ocl.useOpenCL():
        print("OpenCV's OpenCL path: not available")
        return
    print("OpenCV OpenCL device:", cv2.ocl.Device.getDefault().name())
    mu8, mu8c3, mf32 = cv2.UMat(u8), cv2.UMat(u8c3), cv2.UMat(f32)
    ones3 = np.ones((3, 3), np.uint8)
    opencv = {
        "median 3x3 u8": lambda: cv2.medianBlur(mu8, 3),
        "median 5x5 u8": lambda: cv2.medianBlur(mu8, 5),
        "median 3x3 f32": lambda: cv2.medianBlur(mf32, 3),
        "median 5x5 f32": lambda: cv2.medianBlur(mf32, 5),
        "dilate rect 3x3 u8": lambda: cv2.dilate(mu8, ones3),
        "dilate rect 3x3 f32": lambda: cv2.dilate(mf32, ones3),
        "bilateral d=9 u8 1 channel": lambda: cv2.bilateralFilter(mu8, 9, 75, 75),
        "bilateral d=9 u8 3 channels": lambda: cv2.bilateralFilter(mu8c3, 9, 75, 75),
    }
    for name, fn in opencv.items():
        if a.only not in name:
            continue
        ms = best_ms(fn, a.reps, cv2.ocl.finish)
        print(f"{'cv2.UMat ' + name:34s} {ms:9.3f} {mpix / ms:8.2f}")


if __name__ == "__main__":
    main()
