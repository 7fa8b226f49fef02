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

// All box passes of one axis in one launch: the same sums as box_pass run once per radius, with
// each box's output fed straight into the next box's running sum, so the plane is read and written
// once, not once per box. radii.s0 .. s3: the boxes in order (box_pass's order). Each work-item
// runs `seg` outputs of one column [y_begin, y_end) from the 2R input rows around them (R the
// radii's sum): at step i it reads input row y_begin - R + i; box k adds its input, takes off the
// value that left its window 2 r_k + 1 steps earlier, and from step 2 (r_1 + .. + r_k) on passes
// its mean, rounded to float as box_pass stores it, to box k + 1. Box 1 reads its leaving value
// from src again; boxes 2 .. 4 keep their last 2 r_k + 1 inputs in rings in __local (`rings`,
// one column per work-item: get_local_size(0) x (2 r_2 + 2 r_3 + 2 r_4 + 3) floats). Where the
// sums are exact (see above), the bits are box_pass's.
#define BOX_STAGE(K, RK, RING, SLOT)                                   \
  {                                                                    \
    const int j = i - first_##K;                                       \
    const float leaving = j > 2 * RK ? RING[SLOT * gw] : 0.f;          \
    RING[SLOT * gw] = f;                                               \
    SLOT = SLOT == 2 * RK ? 0 : SLOT + 1;                              \
    sum##K += j > 2 * RK ? (BOX_SUM)f - (BOX_SUM)leaving : (BOX_SUM)f; \
    if (j < 2 * RK) continue;                                          \
    f = (float)(sum##K * scale##K);                                    \
  }
#define BOX_FULL(K, RK, RING, SLOT)          \
  {                                          \
    const float leaving = RING[SLOT * gw];   \
    RING[SLOT * gw] = f;                     \
    SLOT = SLOT == 2 * RK ? 0 : SLOT + 1;    \
    sum##K += (BOX_SUM)f - (BOX_SUM)leaving; \
    f = (float)(sum##K * scale##K);          \
  }
__kernel void box_stack(CLF_PLANE_IN(src), CLF_PLANE(dst), int x0, int y0, int w, int h, int4 radii,
                        int seg, __local float* rings) {
  const int gw = get_local_size(0);
  const int x = x0 + (int)get_global_id(0), y_begin = y0 + (int)get_global_id(1) * seg;
  const int c = get_global_id(2);
  if (x >= x0 + w || y_begin >= y0 + h) return;  // no barrier below
  const int y_end = min(y_begin + seg, y0 + h);
  const int r1 = radii.s0, r2 = radii.s1, r3 = radii.s2, r4 = radii.s3;
  const int big_r = r1 + r2 + r3 + r4;
  const BOX_SUM scale1 = (BOX_SUM)1 / (BOX_SUM)(2 * r1 + 1);
  const BOX_SUM scale2 = (BOX_SUM)1 / (BOX_SUM)(2 * r2 + 1);
  const BOX_SUM scale3 = (BOX_SUM)1 / (BOX_SUM)(2 * r3 + 1);
  const BOX_SUM scale4 = (BOX_SUM)1 / (BOX_SUM)(2 * r4 + 1);
  // Box k's first input comes at step first_k.
  const int first_2 = 2 * r1, first_3 = first_2 + 2 * r2, first_4 = first_3 + 2 * r3;
  __local float* ring2 = rings + get_local_id(0);
  __local float* ring3 = ring2 + (2 * r2 + 1) * gw;
  __local float* ring4 = ring3 + (2 * r3 + 1) * gw;
  int slot2 = 0, slot3 = 0, slot4 = 0;
  BOX_SUM sum1 = 0, sum2 = 0, sum3 = 0, sum4 = 0;
  const __global float* s = src + src_origin + c * src_plane + x + (y_begin - big_r) * src_pitch;
  __global float* d = dst + dst_origin + c * dst_plane + x + y_begin * dst_pitch;
  const int steps = y_end - y_begin + 2 * big_r;
  int i = 0;
  for (; i < min(steps, 2 * big_r + 1); ++i) {  // the boxes' windows filling: the first output
    if (i > 2 * r1)
      sum1 += box_load1(s + i * src_pitch) - box_load1(s + (i - 2 * r1 - 1) * src_pitch);
    else
      sum1 += box_load1(s + i * src_pitch);
    if (i < 2 * r1) continue;
    float f = (float)(sum1 * scale1);
    BOX_STAGE(2, r2, ring2, slot2)
    BOX_STAGE(3, r3, ring3, slot3)
    BOX_STAGE(4, r4, ring4, slot4)
    d[(i - 2 * big_r) * dst_pitch] = f;
  }
  // Every window full: the same steps without tests, unrolled so that the device can overlap
  // the next steps' loads and first boxes with this step's last ones.
#pragma unroll 4
  for (; i < steps; ++i) {
    sum1 += box_load1(s + i * src_pitch) - box_load1(s + (i - 2 * r1 - 1) * src_pitch);
    float f = (float)(sum1 * scale1);
    BOX_FULL(2, r2, ring2, slot2)
    BOX_FULL(3, r3, ring3, slot3)
    BOX_FULL(4, r4, ring4, slot4)
    d[(i - 2 * big_r) * dst_pitch] = f;
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
__kernel void box_transpose_plain(CLF_PLANE_IN(src), CLF_PLANE(dst), int x0, int y0, int w, int h) {
  const int y = get_global_id(0), x = get_global_id(1), c = get_global_id(2);
  if (x >= w || y >= h) return;
  dst[dst_origin + c * dst_plane + (x0 + x) * dst_pitch + y0 + y] =
      src[src_origin + c * src_plane + (y0 + y) * src_pitch + x0 + x];
}
