// Two derivative windows in one pass, read from the same pixels, so the image is read once and
// written once: the Sobel gradient magnitude sqrt(gx^2 + gy^2) * scale + delta, or with
// -D SOBEL_SUM the Laplacian (gx + gy) * scale + delta, gx and gy the second derivatives. Built
// with -D RX=R -D RY=R (both kernels zero-padded to (2R+1)^2) and Helpers::correlate: the sums are
// the clf_sums_* bodies of kernels/correlate/ with two weight sets (wx, wy); these kernels add
// the finish.
#if defined(SOBEL_SUM)
#define SOBEL_COMBINE(gx, gy) ((gx) + (gy))
#else
#define SOBEL_COMBINE(gx, gy) sqrt((gx) * (gx) + (gy) * (gy))
#endif
inline float sobel_combine(float gx, float gy, float scale, float delta) {
  return SOBEL_COMBINE(gx, gy) * scale + delta;
}

__kernel void sobel_magnitude_direct(CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows,
                                     __constant float* wx, __constant float* wy, float scale,
                                     float delta) {
  const int x = get_global_id(0), y = get_global_id(1), c = get_global_id(2);
  if (x >= width || y >= rows) return;
  const __global float* s = src + src_origin + c * src_plane + (y - RY) * src_pitch + (x - RX);
  float gx, gy;
  clf_sums_direct(s, src_pitch, wx, wy, 2, &gx, &gy);
  dst[dst_origin + c * dst_plane + y * dst_pitch + x] = sobel_combine(gx, gy, scale, delta);
}

#if defined(VW)
// VW outputs per work-item with vector loads (CPU devices); the row's partial tail one at a time.
__kernel void sobel_magnitude_vector(CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows,
                                     __constant float* wx, __constant float* wy, float scale,
                                     float delta) {
  const int x0 = get_global_id(0) * VW, y = get_global_id(1), c = get_global_id(2);
  if (x0 >= width || y >= rows) return;
  const __global float* s = src + src_origin + c * src_plane + (y - RY) * src_pitch + (x0 - RX);
  __global float* d = dst + dst_origin + c * dst_plane + y * dst_pitch + x0;
  if (x0 + VW <= width) {
    clf_floatv gx, gy;
    clf_sums_vector(s, src_pitch, wx, wy, 2, &gx, &gy);
    CLF_CAT(vstore, VW)(SOBEL_COMBINE(gx, gy) * scale + delta, 0, d);
  } else {
    for (int k = 0; k < width - x0; ++k) {
      float gx, gy;
      clf_sums_direct(s + k, src_pitch, wx, wy, 2, &gx, &gy);
      d[k] = sobel_combine(gx, gy, scale, delta);
    }
  }
}
#endif

#if defined(TH)
// 4 x TH outputs per work-item: from global memory (blocked) or from a window staged with
// clf_stage_window (tiled).
inline void sobel_finish4(float4* gx, const float4* gy, float scale, float delta) {
  for (int t = 0; t < TH; ++t) gx[t] = SOBEL_COMBINE(gx[t], gy[t]) * scale + delta;
}

__kernel void sobel_magnitude_blocked(CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows,
                                      __constant float* wx, __constant float* wy, float scale,
                                      float delta) {
  const int x = get_global_id(0) * 4, y0 = get_global_id(1) * TH, c = get_global_id(2);
  if (x >= width || y0 >= rows) return;
  const __global float4* s = (const __global float4*)(src + src_origin + c * src_plane +
                                                      (y0 - RY) * src_pitch + x - CLF_HX);
  float4 gx[TH], gy[TH];
  clf_sums_blocked(s, src_pitch / 4, min(CLF_LH, rows + 2 * RY - y0), wx, wy, 2, gx, gy);
  sobel_finish4(gx, gy, scale, delta);
  clf_store4(dst + dst_origin + c * dst_plane, dst_pitch, x, y0, width, rows, gx);
}

#if defined(TW) && defined(WG)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void sobel_magnitude_tiled(
    CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows, __constant float* wx,
    __constant float* wy, float scale, float delta) {
  __local float4 win[CLF_LH * CLF_LW4];
  const int tx0 = get_group_id(0) * TW, y0 = get_group_id(1) * TH, c = get_group_id(2);
  const event_t staged = clf_stage_window(win, CLF_LW4, CLF_LH, src + src_origin + c * src_plane,
                                          src_pitch, tx0 - CLF_HX, y0 - RY,
                                          width + RX + CLF_HX - tx0, rows + 2 * RY - y0);
  __global float* d = dst + dst_origin + c * dst_plane;
  clf_stage_wait(staged);
  for (int l = get_local_id(0); l < TW / 4 && tx0 + 4 * l < width; l += WG) {
    float4 gx[TH], gy[TH];
    clf_sums_staged(win, CLF_LW4, l, wx, wy, 2, gx, gy);
    sobel_finish4(gx, gy, scale, delta);
    clf_store4(d, dst_pitch, tx0 + 4 * l, y0, width, rows, gx);
  }
}
#endif
#endif
