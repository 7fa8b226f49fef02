"""The column walk's access pattern alone, as a CUDA copy through cupy (the GPU machine): each
thread copies one column (of float, float2 or float4) down a segment of rows, after reading the
segment's halo rows above it, in groups of some width; beside a flat copy, scalar and float4.
What a column pass that walks down the image could reach at each group width, before any work:
    python3 bench/column_walk_copy.py [--size 8192] [--rows 202] [--halo 100]
"""
import argparse

import cupy as cp

SOURCE = r"""
template <typename T>
__device__ void walk(const float* a, float* b, int w, int h, int rows, int halo) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y0 = blockIdx.y * rows;
  const int wt = w * int(sizeof(float)) / int(sizeof(T));
  const T* src = (const T*)a;
  T* dst = (T*)b;
  float seen = 0.f;  // the halo rows' largest value, so that their reads stay
  for (int y = max(0, y0 - halo); y < y0; ++y) {
    const T v = src[y * wt + x];
    const float* f = (const float*)&v;
    for (int i = 0; i < int(sizeof(T) / sizeof(float)); ++i) seen = fmaxf(seen, f[i]);
  }
#pragma unroll 8
  for (int y = y0; y < min(h, y0 + rows); ++y) dst[y * wt + x] = src[y * wt + x];
  if (seen > 1.f) dst[x] = src[x];  // never: the image holds [0, 1)
}
extern "C" __global__ void walk1(const float* a, float* b, int w, int h, int rows, int halo) {
  walk<float>(a, b, w, h, rows, halo);
}
extern "C" __global__ void walk2(const float* a, float* b, int w, int h, int rows, int halo) {
  walk<float2>(a, b, w, h, rows, halo);
}
extern "C" __global__ void walk4(const float* a, float* b, int w, int h, int rows, int halo) {
  walk<float4>(a, b, w, h, rows, halo);
}
extern "C" __global__ void flat1(const float* a, float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}
extern "C" __global__ void flat4(const float4* a, float4* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}
"""


def best_ms(kernel, grid, block, args, reps=5):
    kernel(grid, block, args)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    best = float("inf")
    for _ in range(reps):
        start.record()
        kernel(grid, block, args)
        stop.record()
        stop.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, stop))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--rows", type=int, default=202)
    parser.add_argument("--halo", type=int, default=100)
    args = parser.parse_args()
    n = args.size * args.size
    a = cp.random.random(n, dtype=cp.float32)
    b = cp.empty_like(a)
    module = cp.RawModule(code=SOURCE, options=("-std=c++14",))
    flat = best_ms(module.get_function("flat1"), ((n + 255) // 256,), (256,), (a, b, cp.int32(n)))
    flat4 = best_ms(module.get_function("flat4"), ((n // 4 + 255) // 256,), (256,),
                    (a, b, cp.int32(n // 4)))
    print(f"{args.size}^2 f32; flat copy, float: {flat:.3f} ms, float4: {flat4:.3f} ms")
    for vec in (1, 2, 4):
        for threads in (16, 32, 64):
            cols = threads * vec
            grid = (args.size // cols, (args.size + args.rows - 1) // args.rows)
            ms = best_ms(module.get_function(f"walk{vec}"), grid, (threads,),
                         (a, b, cp.int32(args.size), cp.int32(args.size), cp.int32(args.rows),
                          cp.int32(args.halo)))
            print(f"walk, {cols:3d} columns a group (float{vec} x {threads}), {args.rows} rows "
                  f"a segment, {args.halo} halo rows: {ms:.3f} ms")


if __name__ == "__main__":
    main()
