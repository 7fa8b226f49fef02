#!/usr/bin/env python3
"""Same workloads as clfilter-bench, through cupyx.scipy.ndimage and torch, data resident on the GPU.

Run on the GPU machine (both are installed there):  python3 bench/gpu_reference.py [--size 8192x8192]
Timed with CUDA events, best of N after a warm-up; prints a table (GPix/s) and, with --json, a file.
"""
import argparse
import json

import cupy as cp
import cupyx.scipy.ndimage as ndi
import cupyx.scipy.signal as cpsignal
import numpy as np
import torch
import torch.nn.functional as F

CONV5 = np.array([[1, 2, 3, 2, 1], [2, 1, 0, 1, 2], [3, 0, -9, 0, 3], [2, 1, 0, 1, 2], [1, 2, 3, 2, -1]], np.float32)
CONV9 = np.array([[1, 2, 3, 4, 5, 4, 3, 2, 1], [2, 1, 0, 1, 2, 1, 0, 1, 2], [3, 0, -9, 0, 3, 0, -9, 0, 3],
                  [4, 1, 0, 1, 4, 1, 0, 1, 4], [5, 2, 3, 2, -5, 2, 3, 2, 5], [4, 1, 0, 1, 4, 1, 0, 1, 4],
                  [3, 0, -9, 0, 3, 0, -9, 0, 3], [2, 1, 0, 1, 2, 1, 0, 1, 2], [1, 2, 3, 4, 5, 4, 3, 2, -1]], np.float32)

def random_kernel(n):  # n x n uniform in [-1, 1), seeded with n: full rank, one per size
    return np.random.default_rng(n).uniform(-1, 1, (n, n)).astype(np.float32)


RANDOM31 = random_kernel(31)
RANDOM63 = random_kernel(63)


def best_ms(fn, reps):
    start, end = cp.cuda.Event(), cp.cuda.Event()
    fn()
    cp.cuda.Device().synchronize()
    best = float("inf")
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        end.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, end))
    return best


def gaussian_taps(sigma, radius):
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    k = np.exp(-0.5 * x * x / (sigma * sigma))
    return (k / k.sum()).astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="8192x8192")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--json")
    ap.add_argument("--print-random31", action="store_true", help="print the 31x31 kernel as clfilter's kernel=")
    ap.add_argument("--print-random", type=int, metavar="N", help="print the random NxN kernel as clfilter's kernel=")
    a = ap.parse_args()
    if a.print_random31 or a.print_random:
        k = random_kernel(a.print_random or 31)
        print(";".join(",".join(f"{v:.9g}" for v in row) for row in k))
        return
    w, h = map(int, a.size.split("x"))
    rng = np.random.default_rng(5)
    host = rng.random((h, w), dtype=np.float32)
    x = cp.asarray(host)
    t = torch.from_numpy(host).cuda()[None, None]
    mpix = w * h / 1e6

    def torch_conv(k):  # correlation with reflect101 borders ('reflect' in torch)
        kk = torch.from_numpy(np.ascontiguousarray(k)).cuda()[None, None]
        pad = (k.shape[1] // 2, k.shape[1] // 2, k.shape[0] // 2, k.shape[0] // 2)
        return lambda: F.conv2d(F.pad(t, pad, mode="reflect"), kk)

    def torch_separable(kx, ky):
        rx = torch.from_numpy(kx).cuda().view(1, 1, 1, -1)
        ry = torch.from_numpy(ky).cuda().view(1, 1, -1, 1)
        px, py = len(kx) // 2, len(ky) // 2
        return lambda: F.conv2d(F.pad(F.conv2d(F.pad(t, (px, px, 0, 0), mode="reflect"), rx), (0, 0, py, py), mode="reflect"), ry)

    g = gaussian_taps(3, 12)
    work = {
        "sobel dx 3x3": (lambda: ndi.sobel(x, axis=1, mode="mirror"),
                         torch_conv(np.outer([1, 2, 1], [-1, 0, 1]).astype(np.float32))),
        "gaussian sigma 3": (lambda: ndi.gaussian_filter(x, 3, mode="mirror", truncate=4.0),
                             torch_separable(g, g)),
        "box radius 2": (lambda: ndi.uniform_filter(x, 5, mode="mirror"),
                         torch_conv(np.full((5, 5), 1 / 25, np.float32))),
        "convolve 5x5": (lambda: ndi.correlate(x, cp.asarray(CONV5), mode="mirror"), torch_conv(CONV5)),
        "convolve 9x9": (lambda: ndi.correlate(x, cp.asarray(CONV9), mode="mirror"), torch_conv(CONV9)),
        # clfilter-bench --filter "convolve:kernel=$(python3 bench/gpu_reference.py --print-random31)"
        "convolve random 31x31": (lambda: ndi.correlate(x, cp.asarray(RANDOM31), mode="mirror"),
                                  torch_conv(RANDOM31)),
        "convolve random 63x63": (lambda: ndi.correlate(x, cp.asarray(RANDOM63), mode="mirror"),
                                  torch_conv(RANDOM63)),
        "gaussian sigma 20": (lambda: ndi.gaussian_filter(x, 20, mode="mirror", truncate=4.0),
                              torch_separable(gaussian_taps(20, 80), gaussian_taps(20, 80))),
    }
    rows = []
    print(f"{w}x{h} f32 1 channel, device-resident, best of {a.reps}")
    print(f"{'filter':20s} {'cupyx ms':>9s} {'GPix/s':>8s} {'torch ms':>9s} {'GPix/s':>8s}")
    for name, (cupy_fn, torch_fn) in work.items():
        cms = best_ms(cupy_fn, a.reps)
        tms = best_ms(torch_fn, a.reps)
        rows.append({"filter": name, "cupyx_ms": cms, "torch_ms": tms})
        print(f"{name:20s} {cms:9.3f} {mpix / cms:8.1f} {tms:9.3f} {mpix / tms:8.1f}")
    # cuFFT's overlap-free FFT correlation (zero borders) for the FFT path's rows.
    for n, k in ((31, RANDOM31), (63, RANDOM63)):
        flipped = cp.asarray(np.ascontiguousarray(k[::-1, ::-1]))
        fms = best_ms(lambda: cpsignal.fftconvolve(x, flipped, mode="same"), a.reps)
        rows.append({"filter": f"fftconvolve random {n}x{n}", "cupyx_ms": fms})
        print(f"{'fftconvolve ' + str(n) + 'x' + str(n):20s} {fms:9.3f} {mpix / fms:8.1f}  (cupyx.scipy.signal, cuFFT)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"width": w, "height": h, "rows": rows}, f)


if __name__ == "__main__":
    main()
