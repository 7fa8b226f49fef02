// Sobel gradient magnitude in one pass: both derivative windows read from the same pixels, so the
// image is read once and written once. Built with -D RX=R -D RY=R (both kernels zero-padded to
// (2R+1)^2); the blocked and tiled variants (-D TH, tiled also TW/WG) use the shared helpers.
inline float sobel_combine(float gx, float gy, float scale, float delta) {
  return sqrt(gx * gx + gy * gy) * scale + delta;
}

__kernel void sobel_magnitude_direct(__global const float* src, int src_origin, int src_pitch,
                                     int src_plane, __global float* dst, int dst_origin,
                                     int dst_pitch, int dst_plane, int width, int rows,
                                     __constant float* wx, __constant float* wy, float scale,
                                     float delta) {
  const int x = get_global_id(0), y = get_global_id(1), c = get_global_id(2);
  if (x >= width || y >= rows) return;
  const __global float* s = src + src_origin + c * src_plane + (y - RY) * src_pitch + (x - RX);
  float gx = 0.f, gy = 0.f;
  for (int j = 0; j < KH; ++j)
    for (int i = 0; i < KW; ++i) {
      const float v = s[j * src_pitch + i];
      gx += wx[j * KW + i] * v;
      gy += wy[j * KW + i] * v;
    }
  dst[dst_origin + c * dst_plane + y * dst_pitch + x] = sobel_combine(gx, gy, scale, delta);
}

#if defined(VW)
// VW outputs per work-item with vector loads (CPU devices); the row's partial tail one at a time.
__kernel void sobel_magnitude_vector(__global const float* src, int src_origin, int src_pitch,
                                     int src_plane, __global float* dst, int dst_origin,
                                     int dst_pitch, int dst_plane, int width, int rows,
                                     __constant float* wx, __constant float* wy, float scale,
                                     float delta) {
  const int x0 = get_global_id(0) * VW, y = get_global_id(1), c = get_global_id(2);
  if (x0 >= width || y >= rows) return;
  const __global float* s = src + src_origin + c * src_plane + (y - RY) * src_pitch + (x0 - RX);
  __global float* d = dst + dst_origin + c * dst_plane + y * dst_pitch + x0;
  if (x0 + VW <= width) {
    clf_floatv gx = 0.f, gy = 0.f;
    for (int j = 0; j < KH; ++j)
      for (int i = 0; i < KW; ++i) {
        const clf_floatv v = CLF_CAT(vload, VW)(0, s + j * src_pitch + i);
        gx += wx[j * KW + i] * v;
        gy += wy[j * KW + i] * v;
      }
    CLF_CAT(vstore, VW)(sqrt(gx * gx + gy * gy) * scale + delta, 0, d);
  } else {
    for (int k = 0; k < width - x0; ++k) {
      float gx = 0.f, gy = 0.f;
      for (int j = 0; j < KH; ++j)
        for (int i = 0; i < KW; ++i) {
          const float v = s[j * src_pitch + i + k];
          gx += wx[j * KW + i] * v;
          gy += wy[j * KW + i] * v;
        }
      d[k] = sobel_combine(gx, gy, scale, delta);
    }
  }
}
#endif

#if defined(TH)
// 4 x TH outputs per work-item on the shared blocked helpers (kernels/correlate.clh): from global
// memory (blocked) or from a window staged with clf_stage_window (tiled).
inline void sobel_finish4(float4* gx, const float4* gy, float scale, float delta) {
  for (int t = 0; t < TH; ++t) gx[t] = sqrt(gx[t] * gx[t] + gy[t] * gy[t]) * scale + delta;
}

__kernel void sobel_magnitude_blocked(__global const float* src, int src_origin, int src_pitch,
                                      int src_plane, __global float* dst, int dst_origin,
                                      int dst_pitch, int dst_plane, int width, int rows,
                                      __constant float* wx, __constant float* wy, float scale,
                                      float delta) {
  const int x = get_global_id(0) * 4, y0 = get_global_id(1) * TH, c = get_global_id(2);
  if (x >= width || y0 >= rows) return;
  const __global float4* s = (const __global float4*)(src + src_origin + c * src_plane +
                                                      (y0 - RY) * src_pitch + x - CLF_HX);
  const int in_rows = min(CLF_LH, rows + 2 * RY - y0);
  float4 gx[TH], gy[TH];
  for (int t = 0; t < TH; ++t) gx[t] = gy[t] = 0.f;
#pragma unroll
  for (int r = 0; r < CLF_LH; ++r) {
    float f[4 * CLF_NQ] = {0};
    if (r < in_rows) clf_row4_global(s + r * (src_pitch / 4), f);
    clf_accumulate4(gx, f, r, wx);
    clf_accumulate4(gy, f, r, wy);
  }
  sobel_finish4(gx, gy, scale, delta);
  clf_store4(dst + dst_origin + c * dst_plane, dst_pitch, x, y0, width, rows, gx);
}

#if defined(TW) && defined(WG)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void sobel_magnitude_tiled(
    __global const float* src, int src_origin, int src_pitch, int src_plane, __global float* dst,
    int dst_origin, int dst_pitch, int dst_plane, int width, int rows, __constant float* wx,
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
    for (int t = 0; t < TH; ++t) gx[t] = gy[t] = 0.f;
#pragma unroll
    for (int r = 0; r < CLF_LH; ++r) {
      float f[4 * CLF_NQ];
      clf_row4_local(win + r * CLF_LW4 + l, f);
      clf_accumulate4(gx, f, r, wx);
      clf_accumulate4(gy, f, r, wy);
    }
    sobel_finish4(gx, gy, scale, delta);
    clf_store4(d, dst_pitch, tx0 + 4 * l, y0, width, rows, gx);
  }
}
#endif
#endif
