// Bilateral filter (cv2.bilateralFilter): out = sum w v / sum w over a disc of taps around each
// pixel, w = space weight (the host's table, exp(-r^2 / 2 sigma_space^2)) times
// exp(-dist^2 / 2 sigma_color^2), dist the sum over channels of |v - centre|. Every channel of a
// pixel in one work-item: the colour distance needs them all (-D CH channels, planes
// src_plane floats apart). Taps: (dx, dy) and their space weights in __constant tables.
// With -D TW, TH: a TW x TH tile a group, each channel's window staged in __local; with -D VW: VW
// outputs of a row a work-item, in SIMD vectors (CPU devices).

// The colour weight of a distance: exp, or where the device's native exp is within the float
// promise (GPUs), -D BILATERAL_EXP=native_exp.
#if !defined(BILATERAL_EXP)
#define BILATERAL_EXP exp
#endif
#define COLOR(dist) BILATERAL_EXP((dist) * (dist)*color_coeff)


// One output pixel from window rows `s` (channel c at s + c * plane), `pitch` apart.
#define BILATERAL_PIXEL(T, LOAD, s, pitch, plane, out_store)                        \
  {                                                                                 \
    T centre[CH], sum[CH], wsum = (T)(0.f);                                         \
    for (int c = 0; c < CH; ++c) {                                                  \
      centre[c] = LOAD((s) + c * (plane));                                          \
      sum[c] = (T)(0.f);                                                            \
    }                                                                               \
    for (int k = 0; k < taps; ++k) {                                                \
      const int at = offsets[k].y * (pitch) + offsets[k].x;                         \
      T v[CH], dist = (T)(0.f);                                                     \
      for (int c = 0; c < CH; ++c) {                                                \
        v[c] = LOAD((s) + c * (plane) + at);                                        \
        dist += fabs(v[c] - centre[c]);                                             \
      }                                                                             \
      const T w = space[k] * COLOR(dist);                                           \
      wsum += w;                                                                    \
      for (int c = 0; c < CH; ++c) sum[c] += w * v[c];                              \
    }                                                                               \
    for (int c = 0; c < CH; ++c) out_store(c, sum[c] / wsum);                       \
  }

#define BILATERAL_ARGS                                                                     \
  CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows, __constant int2 *offsets,       \
      __constant float *space, int taps, float color_coeff

#define LOAD1(p) (*(p))
__kernel void bilateral_direct(BILATERAL_ARGS) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= rows) return;
  const __global float* s = src + src_origin + y * src_pitch + x;
  __global float* d = dst + dst_origin + y * dst_pitch + x;
#define STORE1(c, v) d[(c)*dst_plane] = (v)
  BILATERAL_PIXEL(float, LOAD1, s, src_pitch, src_plane, STORE1)
}

#if defined(VW)
typedef CLF_CAT(float, VW) bilateral_floatv;
#define LOADV(p) CLF_CAT(vload, VW)(0, p)
__kernel void bilateral_vector(BILATERAL_ARGS) {
  const int x0 = get_global_id(0) * VW, y = get_global_id(1);
  if (x0 >= width || y >= rows) return;
  const __global float* s = src + src_origin + y * src_pitch + x0;
  __global float* d = dst + dst_origin + y * dst_pitch + x0;
  if (x0 + VW <= width) {
#define STOREV(c, v) CLF_CAT(vstore, VW)(v, 0, d + (c)*dst_plane)
    BILATERAL_PIXEL(bilateral_floatv, LOADV, s, src_pitch, src_plane, STOREV)
    return;
  }
  for (int t = 0; t < width - x0; ++t) {
    const __global float* st = s + t;
    __global float* dt = d + t;
#define STORET(c, v) dt[(c)*dst_plane] = (v)
    BILATERAL_PIXEL(float, LOAD1, st, src_pitch, src_plane, STORET)
  }
}
#endif

#if defined(TW)
// Each channel's (TW + 2R) x (TH + 2R) window staged, WW4 float4s a row from CLF_HALO4(R) columns
// left of the tile.
#define CLF_HX CLF_HALO4(R)
#define WW4 ((CLF_HX + TW + R + 3) / 4)
#define WPLANE ((TH + 2 * R) * WW4 * 4)
#define LOADL(p) (*(p))
__kernel __attribute__((reqd_work_group_size(TW, TH, 1))) void bilateral_tiled(BILATERAL_ARGS) {
  __local float4 win[CH * (TH + 2 * R) * WW4];
  const int tx0 = get_group_id(0) * TW, y0 = get_group_id(1) * TH;
  event_t staged[CH];
  for (int c = 0; c < CH; ++c)
    staged[c] = clf_stage_window(win + c * (TH + 2 * R) * WW4, WW4, TH + 2 * R,
                                 src + src_origin + c * src_plane, src_pitch, tx0 - CLF_HX, y0 - R,
                                 width + R + CLF_HX - tx0, rows + 2 * R - y0);
  const int lx = get_local_id(0), ly = get_local_id(1), x = tx0 + lx, y = y0 + ly;
  for (int c = 0; c < CH; ++c) clf_stage_wait(staged[c]);
  if (x >= width || y >= rows) return;  // after the last work-group function
  const __local float* s = (const __local float*)win + (ly + R) * 4 * WW4 + (CLF_HX + lx);
  __global float* d = dst + dst_origin + y * dst_pitch + x;
  BILATERAL_PIXEL(float, LOADL, s, 4 * WW4, WPLANE, STORE1)
}
#endif
