"""What one Python call costs against what its bytes cost, side by side in one process:

  transfers  clfilter.to_device(a).get(): the array's bytes up and back, nothing else (the floor)
  call       Pipeline("gaussian:sigma=S")(a) on a numpy array, the Pipeline kept between calls
  cupyx      cupy.asarray -> cupyx.scipy.ndimage.gaussian_filter -> cupy.asnumpy (when CuPy is here)
  chain      5 Pipelines one after another on a DeviceImage, 10 times, against the same runs'
             device time (profiled: unpack, filter and pack kernels), with one get() at the end
  threads    4K u8 calls from 1 and from 4 threads, a Pipeline each, calls per second

Medians of --reps runs after a warm-up. The array is a 3840x2160 RGB u8 photograph (scikit-image's
astronaut resized, or --photos NPZ). Prints one line per measurement and the ratios the issue names.

    python3 bench/python_call.py [--reps 20] [--sigma 3] [--photos photos.npz]
"""

import argparse
import concurrent.futures as futures
import statistics
import time

import numpy as np

import clfilter


def photograph(path):
    if path:
        arrays = np.load(path)
        source = arrays["astronaut"]
    else:
        import skimage.data as data
        source = data.astronaut()
    rows = np.linspace(0, source.shape[0] - 1, 2160).astype(int)
    cols = np.linspace(0, source.shape[1] - 1, 3840).astype(int)
    return np.ascontiguousarray(source[rows][:, cols])


def median_ms(call, reps):
    call()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


CHAIN = ["gaussian:sigma=2", "sobel", "box:radius=2", "laplacian", "gaussian:sigma=1"]


def chain_figures(image, reps):
    pipelines = [clfilter.Pipeline(spec) for spec in CHAIN]
    on_device = clfilter.to_device(image)

    def ten_passes():
        current = on_device
        for _ in range(10):
            for p in pipelines:
                current = p(current)
        return current.get()

    wall = median_ms(ten_passes, max(3, reps // 4))
    for p in pipelines:
        p._pipeline.profile = True
    kernels = 0.0
    current = on_device
    for _ in range(10):
        for p in pipelines:
            current = p(current)
            kernels += p.stats()["compute_busy_ms"]
    for p in pipelines:
        p._pipeline.profile = False
    transfer = median_ms(lambda: on_device.get(), reps)
    return wall, kernels, transfer


def throughput(image, threads, calls):
    local = [clfilter.Pipeline("gaussian:sigma=3") for _ in range(threads)]
    with futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda p: p(image), local))  # warm
        start = time.perf_counter()
        list(pool.map(lambda i: local[i % threads](image), range(calls)))
        return calls / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--sigma", type=float, default=3.0)
    parser.add_argument("--photos", help="an .npz of photographs (when scikit-image is absent)")
    args = parser.parse_args()
    image = photograph(args.photos)
    spec = "gaussian:sigma=%g" % args.sigma
    pipeline = clfilter.Pipeline(spec)
    print("device: %s; %s %s, %s" % (pipeline.device, "x".join(map(str, image.shape)), image.dtype,
                                      spec))
    figures = {}
    figures["transfers"] = median_ms(lambda: clfilter.to_device(image).get(), args.reps)
    figures["call"] = median_ms(lambda: pipeline(image), args.reps)
    out = np.empty_like(image)
    figures["call out="] = median_ms(lambda: pipeline(image, out=out), args.reps)
    try:
        import cupy
        import cupyx.scipy.ndimage as ndimage
        truncate = round(4 * args.sigma) / args.sigma  # clfilter's and OpenCV's kernel extent
        figures["cupy transfers"] = median_ms(lambda: cupy.asnumpy(cupy.asarray(image)), args.reps)

        def with_cupyx():
            return cupy.asnumpy(ndimage.gaussian_filter(cupy.asarray(image), (args.sigma,) * 2 + (0,),
                                                        mode="mirror", truncate=truncate))
        figures["cupyx"] = median_ms(with_cupyx, args.reps)
        agree = np.abs(with_cupyx().astype(int) - pipeline(image).astype(int)).max()
        print("clfilter and cupyx differ by at most %d level(s)" % agree)
    except ImportError:
        pass
    for name, ms in figures.items():
        print("%-15s %8.3f ms" % (name, ms))
    print("call / transfers: %.2f (target <= 1.3)" % (figures["call"] / figures["transfers"]))
    if "cupyx" in figures:
        print("clfilter is %.2fx cupyx (target >= 1.0)" % (figures["cupyx"] / figures["call"]))
    wall, kernels, transfer = chain_figures(image, args.reps)
    print("chain of %d pipelines on a DeviceImage, 10 times: %.3f ms, of which get() %.3f ms; "
          "kernels %.3f ms: %.2fx the kernels (target <= 1.1)"
          % (len(CHAIN), wall, transfer, kernels, (wall - transfer) / kernels))
    one = throughput(image, 1, 4 * args.reps)
    four = throughput(image, 4, 4 * args.reps)
    print("threads: 1 -> %.1f calls/s, 4 -> %.1f calls/s: %.2fx (target >= 1.5)"
          % (one, four, four / one))


if __name__ == "__main__":
    main()
