"""A large median on a photograph of each pixel type, by each way that applies: the histogram on u8,
two levels of them on u16 and half, and the bisection on every type (f32 has only it). The
photograph is scikit-image's astronaut (red; or the same array from --photos NPZ), tiled to the
size.

    PYTHONPATH=build/python python3 bench/large_median.py [--device cpu] [--ksize 31] [--size WxH]
                                                          [--photos photos.npz]

Prints the best of --reps warm calls of clfilter.filter, in ms.
"""

import argparse
import time

import numpy as np

import clfilter


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--ksize", type=int, default=31)
    parser.add_argument("--size", default="1920x1080")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--photos", help="an .npz holding 'astronaut' (when scikit-image is absent)")
    args = parser.parse_args()
    w, h = (int(v) for v in args.size.split("x"))
    if args.photos:
        red = np.load(args.photos)["astronaut"][..., 0]
    else:
        from skimage import data
        red = data.astronaut()[..., 0]
    u8 = np.tile(red, (h // red.shape[0] + 1, w // red.shape[1] + 1))[:h, :w].copy()
    images = {"u8": u8, "u16": u8.astype(np.uint16) * 257, "f16": (u8 / 255).astype(np.float16),
              "f32": (u8 / 255).astype(np.float32)}
    for name, image in images.items():
        for method in ("histogram", "bisect") if name != "f32" else ("bisect",):
            spec = "median:ksize=%d,method=%s" % (args.ksize, method)
            clfilter.filter(image[:64, :64], spec, device=args.device)  # builds the program
            best = float("inf")
            for _ in range(args.reps):
                start = time.perf_counter()
                clfilter.filter(image, spec, device=args.device)
                best = min(best, time.perf_counter() - start)
            print("%-4s %-36s %9.1f ms" % (name, spec, best * 1e3), flush=True)


if __name__ == "__main__":
    main()
