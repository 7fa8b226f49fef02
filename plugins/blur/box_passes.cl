// One box pass of the Gaussian's method=fast: dst = the mean of the 2r + 1 samples of src
// centred on each output down its column, over the rectangle [x0, x0 + w) x [y0, y0 + h), which may
// reach into the halo (src holds r more rows above and below it). Each work-item computes `seg`
// consecutive outputs of a column with a running sum: the sample entering the window
// is added, the one leaving subtracted, so an output costs two reads whatever r is (plus the
// first window, (2r + 1) / seg reads per output). r is an argument: one program for every sigma.
//
// The sums are kept in double where the device has it: a double holds the sum of a window of
// floats exactly when their exponents lie within 29 binary orders of each other (every u8, u16
// and half image, and float images in [0, 1] down to 1e-7), and an exact sum does not depend on
// where a work-item's run began. So the strip layout, which moves where runs begin, changes no
// bit of the result.
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define BOX_SUM double
#else
#define BOX_SUM float  // a strip layout may change the last bits
#endif
// VW columns per work-item (-D VW=n, the device's vector width): vector loads on CPUs.
#define BOX_CAT2(a, b) a##b
#define BOX_CAT(a, b) BOX_CAT2(a, b)
#define box_load1(p) ((BOX_SUM)(*(p)))
#define box_store1(v, p) (*(p) = (float)(v))
#if VW > 1
#define box_sumv BOX_CAT(BOX_SUM, VW)
#define box_load(p) BOX_CAT(BOX_CAT(convert_, BOX_SUM), VW)(BOX_CAT(vload, VW)(0, p))
#define box_store(v, p) BOX_CAT(vstore, VW)(BOX_CAT(convert_float, VW)(v), 0, p)
#else
#define box_sumv BOX_SUM
#define box_load box_load1
#define box_store box_store1
#endif

// The running sum down one column (SUM: BOX_SUM, or box_sumv for VW columns at once).
#define BOX_RUN(SUM, LOAD, STORE)                                            \
  {                                                                          \
    SUM sum = 0;                                                             \
    for (int i = -r; i <= r; ++i) sum += LOAD(s + (y_begin + i) * src_pitch); \
    STORE(sum * scale, d + y_begin * dst_pitch);                             \
    for (int y = y_begin + 1; y < y_end; ++y) {                              \
      sum += LOAD(s + (y + r) * src_pitch) - LOAD(s + (y - r - 1) * src_pitch); \
      STORE(sum * scale, d + y * dst_pitch);                                 \
    }                                                                        \
  }
__kernel void box_pass(CLF_PLANE_IN(src), CLF_PLANE(dst), int x0, int y0, int w, int h, int r,
                       int seg) {
  const BOX_SUM scale = (BOX_SUM)1 / (BOX_SUM)(2 * r + 1);
  const int x = x0 + (int)get_global_id(0) * VW, y_begin = y0 + (int)get_global_id(1) * seg;
  const int c = get_global_id(2);
  if (x >= x0 + w || y_begin >= y0 + h) return;
  const int y_end = min(y_begin + seg, y0 + h);
  if (x + VW <= x0 + w) {
    const __global float* s = src + src_origin + c * src_plane + x;
    __global float* d = dst + dst_origin + c * dst_plane + x;
    BOX_RUN(box_sumv, box_load, box_store)
  } else {  // the last columns, one at a time
    for (int k = 0; k < x0 + w - x; ++k) {
      const __global float* s = src + src_origin + c * src_plane + x + k;
      __global float* d = dst + dst_origin + c * dst_plane + x + k;
      BOX_RUN(BOX_SUM, box_load1, box_store1)
    }
  }
}

// dst(row x, column y) = src(row y, column x) over x in [x0, x0 + w), y in [y0, y0 + h): the row
// passes run as column passes over the transposed plane, so every pass reads and writes whole
// cache lines. 32 x 32 blocks through local memory (one column of padding against bank
// conflicts), on groups of 32 x 8 work-items.
__kernel void box_transpose(CLF_PLANE_IN(src), CLF_PLANE(dst), int x0, int y0, int w, int h) {
  __local float block[32][33];
  const int lx = get_local_id(0), ly = get_local_id(1), c = get_global_id(2);
  const int bx = get_group_id(0) * 32, by = get_group_id(1) * 32;
  const __global float* s = src + src_origin + c * src_plane;
  __global float* d = dst + dst_origin + c * dst_plane;
  for (int j = ly; j < 32; j += 8)
    if (bx + lx < w && by + j < h) block[j][lx] = s[(y0 + by + j) * src_pitch + x0 + bx + lx];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = ly; j < 32; j += 8)
    if (bx + j < w && by + lx < h) d[(x0 + bx + j) * dst_pitch + y0 + by + lx] = block[lx][j];
}

// The same without local memory, a sample per work-item along dst's rows (CPUs: the caches do
// what the local block does on GPUs, and a barrier costs a loop split).
__kernel void box_transpose_plain(CLF_PLANE_IN(src), CLF_PLANE(dst), int x0, int y0, int w,
                                  int h) {
  const int y = get_global_id(0), x = get_global_id(1), c = get_global_id(2);
  if (x >= w || y >= h) return;
  dst[dst_origin + c * dst_plane + (x0 + x) * dst_pitch + y0 + y] =
      src[src_origin + c * src_plane + (y0 + y) * src_pitch + x0 + x];
}
