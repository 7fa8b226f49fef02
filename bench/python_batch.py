"""A batch of 4K photographs from Python, the way a script would process a folder:
cv2.imread -> filter -> cv2.imwrite on a thread pool, with three filters side by side in one run:

  cv2      cv2.GaussianBlur on the CPU (OpenCV's own threads as well as the pool's)
  cupyx    cupyx.scipy.ndimage.gaussian_filter on the GPU (when CuPy is installed)
  clfilter clfilter.Pipeline("gaussian:sigma=S"), one per pool thread, on the default device
  io       imread -> imwrite alone: the floor every method pays
and clfilter.filter_files over the same files with as many job threads (the command line's batch
engine: decoding, device work and encoding in strips on C++ threads), where it is built.

The photographs are scikit-image's (or the same arrays from --photos NPZ), resized to 3840x2160 and
written as JPEG (quality 95) into a temporary folder. The methods run in turn, --rounds times over;
each line gives a method's median wall time and the process's CPU seconds (every thread's) in that
run: where the CPUs are saturated, CPU seconds bound what any overlap can win. Prints the ratios of
the medians, and checks that clfilter's output agrees with OpenCV's (at most 1 level apart on u8).

    python3 bench/python_batch.py [--files 32] [--workers 8] [--sigma 3] [--rounds 3]
                                  [--photos photos.npz]
"""

import argparse
import concurrent.futures as futures
import os
import statistics
import tempfile
import threading
import time

import cv2
import numpy as np

import clfilter


def photographs(path):
    if path:
        arrays = np.load(path)
        return [arrays[k] for k in ("astronaut", "coffee", "chelsea", "rocket") if k in arrays]
    import skimage.data as data
    return [data.astronaut(), data.coffee(), data.chelsea(), data.rocket()]


def make_files(folder, count, sources):
    files = []
    for i in range(count):
        photo = cv2.cvtColor(sources[i % len(sources)], cv2.COLOR_RGB2BGR)
        big = cv2.resize(photo, (3840, 2160), interpolation=cv2.INTER_CUBIC)
        if (i // len(sources)) % 2:
            big = big[:, ::-1]  # files differ even when their source repeats
        path = os.path.join(folder, "photo_%03d.jpg" % i)
        cv2.imwrite(path, np.ascontiguousarray(big), [cv2.IMWRITE_JPEG_QUALITY, 95])
        files.append(path)
    return files


def methods(sigma):
    found = {}
    found["io"] = lambda image: image
    found["cv2"] = lambda image: cv2.GaussianBlur(image, (0, 0), sigma, borderType=cv2.BORDER_REFLECT_101)
    local = threading.local()

    def with_clfilter(image):
        if not hasattr(local, "pipeline"):
            local.pipeline = clfilter.Pipeline("gaussian:sigma=%g" % sigma)
        return local.pipeline(image)
    found["clfilter"] = with_clfilter
    try:
        import cupy
        import cupyx.scipy.ndimage as ndimage

        # truncate: the same kernel extent as OpenCV's and clfilter's (radius round(4 sigma)).
        truncate = round(4 * sigma) / sigma

        def with_cupyx(image):
            out = ndimage.gaussian_filter(cupy.asarray(image), sigma=(sigma, sigma, 0), mode="mirror",
                                          truncate=truncate)
            return cupy.asnumpy(out)
        found["cupyx"] = with_cupyx
    except ImportError:
        pass
    return found


def run(files, filt, workers, out_folder):
    def one(path):
        image = cv2.imread(path, cv2.IMREAD_COLOR)
        if image is None:
            raise RuntimeError("cannot read " + path)
        cv2.imwrite(os.path.join(out_folder, os.path.basename(path)), filt(image),
                    [cv2.IMWRITE_JPEG_QUALITY, 95])

    with futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, files[:workers]))  # warm: programs built, pools started, caches filled
        start, cpu = time.perf_counter(), time.process_time()
        list(pool.map(one, files))
        return time.perf_counter() - start, time.process_time() - cpu


def run_files(files, spec, workers, out_folder):
    clfilter.filter_files(files[:workers], out_folder, spec, jobs=workers)  # warm
    start, cpu = time.perf_counter(), time.process_time()
    results = clfilter.filter_files(files, out_folder, spec, jobs=workers)
    wall = time.perf_counter() - start, time.process_time() - cpu
    if not all(r["written"] for r in results):
        raise SystemExit("filter_files: " + "; ".join(r["error"] for r in results if r["error"]))
    return wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=32)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--sigma", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=1, help="runs of each method, in turn")
    parser.add_argument("--photos", help="an .npz of photographs (when scikit-image is absent)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        files = make_files(folder, args.files, photographs(args.photos))
        found = methods(args.sigma)
        probe = cv2.imread(files[0], cv2.IMREAD_COLOR)
        # The reference in float with clfilter's kernel extent (OpenCV's u8 path is fixed-point and
        # cuts the kernel at 3 sigma); the timed cv2 run is the call users write.
        radius = int(round(4 * args.sigma))
        reference = cv2.GaussianBlur(probe.astype(np.float32), (2 * radius + 1,) * 2, args.sigma,
                                     borderType=cv2.BORDER_REFLECT_101)
        agree = np.abs(found["clfilter"](probe).astype(float) - np.rint(reference)).max()
        print("device: %s; %d files 3840x2160 RGB u8 JPEG, gaussian sigma %g, %d pool threads, %d cores"
              % (clfilter.Pipeline("gaussian:sigma=1").device, args.files, args.sigma, args.workers,
                 os.cpu_count()))
        print("clfilter vs cv2.GaussianBlur on one file: max difference %d level(s)" % agree)
        runs = {name: [] for name in found}
        spec = "gaussian:sigma=%g" % args.sigma
        if hasattr(clfilter._clfilter, "filter_files"):
            runs["filter_files"] = []
        for name in runs:
            os.mkdir(os.path.join(folder, "out_" + name))
        for _ in range(args.rounds):
            for name in runs:
                out = os.path.join(folder, "out_" + name)
                runs[name].append(run_files(files, spec, args.workers, out) if name == "filter_files"
                                  else run(files, found[name], args.workers, out))
        times = {}
        for name, measured in runs.items():
            times[name] = statistics.median(wall for wall, _ in measured)
            cpu = statistics.median(cpu for _, cpu in measured)
            print("%-12s %7.2f s  %6.1f files/s  %7.2f CPU s" % (name, times[name],
                                                              args.files / times[name], cpu))
        if "filter_files" in times:
            print("filter_files is %.2fx the clfilter loop" % (times["clfilter"] / times["filter_files"]))
        for name in ("cv2", "cupyx"):
            if name in times:
                print("clfilter is %.2fx %s" % (times[name] / times["clfilter"], name))
        if agree > 1:
            raise SystemExit("clfilter and OpenCV disagree by %d levels" % agree)


if __name__ == "__main__":
    main()
