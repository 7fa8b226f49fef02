// Sobel gradient magnitude in one pass: both derivative windows read from the same pixels, so the
// image is read once and written once. Built with -D RX=R -D RY=R (both kernels zero-padded to
// (2R+1)^2); the tiled variant adds -D TW/TH/WG and stages its window with clf_stage_window.
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

#if defined(TW) && defined(TH) && defined(WG)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void sobel_magnitude_tiled(
    __global const float* src, int src_origin, int src_pitch, int src_plane, __global float* dst,
    int dst_origin, int dst_pitch, int dst_plane, int width, int rows, __constant float* wx,
    __constant float* wy, float scale, float delta) {
  __local float win[LH * LW];
  const int tx0 = get_group_id(0) * TW, ty0 = get_group_id(1) * TH, c = get_group_id(2);
  const event_t staged = clf_stage_window(win, LW, LH, src + src_origin + c * src_plane, src_pitch,
                                          tx0 - RX, ty0 - RY, width + 2 * RX - tx0,
                                          rows + 2 * RY - ty0);
  __global float* d = dst + dst_origin + c * dst_plane;
  const int out_rows = min(TH, rows - ty0);
  clf_stage_wait(staged);
  for (int xo = get_local_id(0); xo < TW && tx0 + xo < width; xo += WG)
    for (int t = 0; t < out_rows; ++t) {
      float gx = 0.f, gy = 0.f;
      for (int j = 0; j < KH; ++j)
        for (int i = 0; i < KW; ++i) {
          const float v = win[(t + j) * LW + xo + i];
          gx += wx[j * KW + i] * v;
          gy += wy[j * KW + i] * v;
        }
      d[(ty0 + t) * dst_pitch + tx0 + xo] = sobel_combine(gx, gy, scale, delta);
    }
}
#endif
