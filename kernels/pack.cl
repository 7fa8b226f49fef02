// Conversion between the host's interleaved native pixels and the device's float planes, compiled
// per pixel type with -D CLF_PIXEL=n, n one of clf/contract.h's CLF_PIXEL_*, and per channel count
// with -D CLF_CHANNELS=c. Transfers stay in the native type (u8 moves 4x fewer bytes than f32);
// rounding and saturation follow OpenCV. Offsets (in pixels' samples) let the kernels read and
// write a host image in place (zero-copy on CPU devices). With -D VW=n, rows of c = 1 channel move
// n pixels per work-item (vector loads), and with n = 16 rows of 3 or 4 channels too; with
// -D CLF_ROWS=r, every work-item converts r rows.
#if CLF_PIXEL == CLF_PIXEL_U8
typedef uchar pixel_t;
#define LOAD(p, i) convert_float((p)[i])
#define STORE(p, i, v) ((p)[i] = convert_uchar_sat_rte(v))
#elif CLF_PIXEL == CLF_PIXEL_U16
typedef ushort pixel_t;
#define LOAD(p, i) convert_float((p)[i])
#define STORE(p, i, v) ((p)[i] = convert_ushort_sat_rte(v))
#elif CLF_PIXEL == CLF_PIXEL_F16
typedef half pixel_t;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#else
typedef float pixel_t;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#endif

// Interleaved rows (width x rows x channels) -> channel planes. The first shared_rows rows come
// from `shared` instead (the previous strip's upload buffer, where they already are). Work-items
// past the row (global x = items + 2 hx) also fill the first stage's left and right halo columns
// from the border rule (mode, value as in pad.cl), which saves a clf_pad_cols launch per strip.
inline void clf_unpack_halo(const __global pixel_t* src, int width, int y, int channels,
                            __global float* dst, int dst_origin, int dst_pitch, int dst_plane,
                            int i, int hx, int mode, float value) {
  if (i >= 2 * hx) return;
  const int col = i < hx ? i - hx : width + i - hx;
  const int from = clf_border_interpolate(col, width, mode);
  for (int c = 0; c < channels; ++c)
    dst[dst_origin + c * dst_plane + y * dst_pitch + col] =
        mode >= CLF_BORDER_CONSTANT ? clf_border_fill(mode, value)
                                    : LOAD(src, ((size_t)y * width + from) * channels + c);
}

// CLF_ROWS rows a work-item (global y = rows / CLF_ROWS, rounded up), every row's loads issued
// before the first store: more bytes in flight a work-item, fewer groups to schedule.
#if !defined(CLF_ROWS)
#define CLF_ROWS 1
#endif
#define CLF_ROWS_END(y0, rows) min((y0) + CLF_ROWS, (rows))
// Where row y of a strip's input lies: its first shared_rows rows in the previous upload.
#define CLF_ROW_SRC(y) ((y) < shared_rows ? shared + shared_offset : src + src_offset)

__kernel void clf_unpack(__global const pixel_t* src, ulong src_offset, int width, int rows,
                         int channels, __global float* dst, int dst_origin, int dst_pitch,
                         int dst_plane, __global const pixel_t* shared, ulong shared_offset,
                         int shared_rows, int hx, int mode, float value) {
  const int x = get_global_id(0), y0 = get_global_id(1) * CLF_ROWS;
  if (y0 >= rows) return;
  if (x >= width) {
    for (int y = y0; y < CLF_ROWS_END(y0, rows); ++y)
      clf_unpack_halo(CLF_ROW_SRC(y), width, y, channels, dst, dst_origin, dst_pitch, dst_plane,
                      x - width, hx, mode, value);
    return;
  }
  float v[CLF_ROWS * CLF_CHANNELS];
#pragma unroll
  for (int r = 0; r < CLF_ROWS; ++r) {
    const int y = min(y0 + r, rows - 1);  // past the last row: that row again, not stored
    const __global pixel_t* s = CLF_ROW_SRC(y) + ((size_t)y * width + x) * CLF_CHANNELS;
    for (int c = 0; c < CLF_CHANNELS; ++c) v[r * CLF_CHANNELS + c] = LOAD(s, c);
  }
  for (int r = 0; r < CLF_ROWS && y0 + r < rows; ++r)
    for (int c = 0; c < CLF_CHANNELS; ++c)
      dst[dst_origin + (y0 + r) * dst_pitch + x + c * dst_plane] = v[r * CLF_CHANNELS + c];
}

// Channel planes -> interleaved rows in the native type.
__kernel void clf_pack(__global const float* src, int src_origin, int src_pitch, int src_plane,
                       __global pixel_t* dst, ulong dst_offset, int width, int rows, int channels) {
  const int x = get_global_id(0), y0 = get_global_id(1) * CLF_ROWS;
  if (x >= width || y0 >= rows) return;
  float v[CLF_ROWS * CLF_CHANNELS];
#pragma unroll
  for (int r = 0; r < CLF_ROWS; ++r) {
    const int in = src_origin + min(y0 + r, rows - 1) * src_pitch + x;
    for (int c = 0; c < CLF_CHANNELS; ++c) v[r * CLF_CHANNELS + c] = src[in + c * src_plane];
  }
  dst += dst_offset;
  for (int r = 0; r < CLF_ROWS && y0 + r < rows; ++r)
    for (int c = 0; c < CLF_CHANNELS; ++c)
      STORE(dst, ((size_t)(y0 + r) * width + x) * CLF_CHANNELS + c, v[r * CLF_CHANNELS + c]);
}

#ifdef VW
typedef CLF_CAT(float, VW) clf_pfloatv;
#if CLF_PIXEL == CLF_PIXEL_U8
#define VLOAD(i, p) CLF_CAT(convert_float, VW)(CLF_CAT(vload, VW)(i, p))
#define VSTORE(v, i, p) \
  CLF_CAT(vstore, VW)(CLF_CAT(CLF_CAT(convert_uchar, VW), _sat_rte)(v), i, p)
#elif CLF_PIXEL == CLF_PIXEL_U16
#define VLOAD(i, p) CLF_CAT(convert_float, VW)(CLF_CAT(vload, VW)(i, p))
#define VSTORE(v, i, p) \
  CLF_CAT(vstore, VW)(CLF_CAT(CLF_CAT(convert_ushort, VW), _sat_rte)(v), i, p)
#elif CLF_PIXEL == CLF_PIXEL_F16
#define VLOAD(i, p) CLF_CAT(vload_half, VW)(i, p)
#define VSTORE(v, i, p) CLF_CAT(CLF_CAT(vstore_half, VW), _rte)(v, i, p)
#else
#define VLOAD(i, p) CLF_CAT(vload, VW)(i, p)
#define VSTORE(v, i, p) CLF_CAT(vstore, VW)(v, i, p)
#endif

// The VW pixels of one work-item: interleaved samples <-> CLF_CHANNELS planes. One channel is a
// plain vector conversion; 3 and 4 channels (VW = 16) load 3 or 4 vectors of 16 interleaved
// samples and split them by component selection, and join them back on the way out. (One pixel
// per work-item with a channel loop leaves PoCL gathering and scattering strided samples.)

// Four pixels' channels (float4 each) interleaved.
#define CLF_PIX4(r, g, b, a)                                                                   \
  ((float16)((r).x, (g).x, (b).x, (a).x, (r).y, (g).y, (b).y, (a).y, (r).z, (g).z, (b).z, (a).z, \
             (r).w, (g).w, (b).w, (a).w))

inline void clf_split(const __global pixel_t* s, __global float* d, int plane) {
#if CLF_CHANNELS == 1
  CLF_CAT(vstore, VW)(VLOAD(0, s), 0, d);
#elif CLF_CHANNELS == 3 && VW == 16
  // Channel k is samples k, k + 3, ..., k + 45 of the 48: 6, 5 and 5 of them (k = 0), 5, 6 and
  // 5 (k = 1) or 5, 5 and 6 (k = 2) in the three vectors.
  const float16 a = VLOAD(0, s), b = VLOAD(1, s), c = VLOAD(2, s);
  vstore16((float16)(a.s0, a.s3, a.s6, a.s9, a.sc, a.sf, b.s2, b.s5, b.s8, b.sb, b.se, c.s1, c.s4,
                     c.s7, c.sa, c.sd),
           0, d);
  vstore16((float16)(a.s1, a.s4, a.s7, a.sa, a.sd, b.s0, b.s3, b.s6, b.s9, b.sc, b.sf, c.s2, c.s5,
                     c.s8, c.sb, c.se),
           0, d + plane);
  vstore16((float16)(a.s2, a.s5, a.s8, a.sb, a.se, b.s1, b.s4, b.s7, b.sa, b.sd, c.s0, c.s3, c.s6,
                     c.s9, c.sc, c.sf),
           0, d + 2 * plane);
#elif CLF_CHANNELS == 4 && VW == 16
  const float16 a = VLOAD(0, s), b = VLOAD(1, s), c = VLOAD(2, s), e = VLOAD(3, s);
  vstore16((float16)(a.even.even, b.even.even, c.even.even, e.even.even), 0, d);
  vstore16((float16)(a.odd.even, b.odd.even, c.odd.even, e.odd.even), 0, d + plane);
  vstore16((float16)(a.even.odd, b.even.odd, c.even.odd, e.even.odd), 0, d + 2 * plane);
  vstore16((float16)(a.odd.odd, b.odd.odd, c.odd.odd, e.odd.odd), 0, d + 3 * plane);
#else
#error "clf_unpackv: CLF_CHANNELS 1, or 3 or 4 with VW 16"
#endif
}

inline void clf_join(const __global float* s, int plane, __global pixel_t* d) {
#if CLF_CHANNELS == 1
  VSTORE(CLF_CAT(vload, VW)(0, s), 0, d);
#elif CLF_CHANNELS == 3 && VW == 16
  const float16 r = vload16(0, s), g = vload16(0, s + plane), b = vload16(0, s + 2 * plane);
  // Sample i of the 48 is channel i % 3 of pixel i / 3.
  VSTORE(((float16)(r.s0, g.s0, b.s0, r.s1, g.s1, b.s1, r.s2, g.s2, b.s2, r.s3, g.s3, b.s3, r.s4,
                    g.s4, b.s4, r.s5)), 0, d);
  VSTORE(((float16)(g.s5, b.s5, r.s6, g.s6, b.s6, r.s7, g.s7, b.s7, r.s8, g.s8, b.s8, r.s9, g.s9,
                    b.s9, r.sa, g.sa)), 1, d);
  VSTORE(((float16)(b.sa, r.sb, g.sb, b.sb, r.sc, g.sc, b.sc, r.sd, g.sd, b.sd, r.se, g.se, b.se,
                    r.sf, g.sf, b.sf)), 2, d);
#elif CLF_CHANNELS == 4 && VW == 16
  const float16 r = vload16(0, s), g = vload16(0, s + plane);
  const float16 b = vload16(0, s + 2 * plane), a = vload16(0, s + 3 * plane);
  VSTORE(CLF_PIX4(r.lo.lo, g.lo.lo, b.lo.lo, a.lo.lo), 0, d);  // pixels 0-3
  VSTORE(CLF_PIX4(r.lo.hi, g.lo.hi, b.lo.hi, a.lo.hi), 1, d);
  VSTORE(CLF_PIX4(r.hi.lo, g.hi.lo, b.hi.lo, a.hi.lo), 2, d);
  VSTORE(CLF_PIX4(r.hi.hi, g.hi.hi, b.hi.hi, a.hi.hi), 3, d);
#endif
}

// Rows of CLF_CHANNELS channels, VW pixels per work-item; the row's partial tail one pixel at a
// time. Arguments as clf_unpack's and clf_pack's; CLF_ROWS rows a work-item as theirs (one
// channel: every row's vector loaded before the first store).
__kernel void clf_unpackv(__global const pixel_t* src, ulong src_offset, int width, int rows,
                          int channels, __global float* dst, int dst_origin, int dst_pitch,
                          int dst_plane, __global const pixel_t* shared, ulong shared_offset,
                          int shared_rows, int hx, int mode, float value) {
  const int item = get_global_id(0), items = (width + VW - 1) / VW, x0 = item * VW;
  const int y0 = get_global_id(1) * CLF_ROWS;
  if (y0 >= rows) return;
  if (item >= items) {
    for (int y = y0; y < CLF_ROWS_END(y0, rows); ++y)
      clf_unpack_halo(CLF_ROW_SRC(y), width, y, CLF_CHANNELS, dst, dst_origin, dst_pitch,
                      dst_plane, item - items, hx, mode, value);
    return;
  }
  __global float* d = dst + dst_origin + x0;
  if (x0 + VW <= width) {
#if CLF_CHANNELS == 1
    clf_pfloatv v[CLF_ROWS];
#pragma unroll
    for (int r = 0; r < CLF_ROWS; ++r) {
      const int y = min(y0 + r, rows - 1);
      v[r] = VLOAD(0, CLF_ROW_SRC(y) + (size_t)y * width + x0);
    }
    for (int r = 0; r < CLF_ROWS && y0 + r < rows; ++r)
      CLF_CAT(vstore, VW)(v[r], 0, d + (y0 + r) * dst_pitch);
#else
    for (int y = y0; y < CLF_ROWS_END(y0, rows); ++y)
      clf_split(CLF_ROW_SRC(y) + ((size_t)y * width + x0) * CLF_CHANNELS, d + y * dst_pitch,
                dst_plane);
#endif
    return;
  }
  for (int y = y0; y < CLF_ROWS_END(y0, rows); ++y)
    for (int k = 0; k < width - x0; ++k)
      for (int ch = 0; ch < CLF_CHANNELS; ++ch)
        d[y * dst_pitch + k + ch * dst_plane] =
            LOAD(CLF_ROW_SRC(y), ((size_t)y * width + x0 + k) * CLF_CHANNELS + ch);
}

__kernel void clf_packv(__global const float* src, int src_origin, int src_pitch, int src_plane,
                        __global pixel_t* dst, ulong dst_offset, int width, int rows,
                        int channels) {
  const int x0 = get_global_id(0) * VW, y0 = get_global_id(1) * CLF_ROWS;
  if (x0 >= width || y0 >= rows) return;
  const __global float* s = src + src_origin + x0;
  __global pixel_t* d = dst + dst_offset + (size_t)x0 * CLF_CHANNELS;
  if (x0 + VW <= width) {
#if CLF_CHANNELS == 1
    clf_pfloatv v[CLF_ROWS];
#pragma unroll
    for (int r = 0; r < CLF_ROWS; ++r)
      v[r] = CLF_CAT(vload, VW)(0, s + min(y0 + r, rows - 1) * src_pitch);
    for (int r = 0; r < CLF_ROWS && y0 + r < rows; ++r)
      VSTORE(v[r], 0, d + (size_t)(y0 + r) * width);
#else
    for (int y = y0; y < CLF_ROWS_END(y0, rows); ++y)
      clf_join(s + y * src_pitch, src_plane, d + (size_t)y * width * CLF_CHANNELS);
#endif
    return;
  }
  for (int y = y0; y < CLF_ROWS_END(y0, rows); ++y)
    for (int k = 0; k < width - x0; ++k)
      for (int ch = 0; ch < CLF_CHANNELS; ++ch)
        STORE(d, (size_t)y * width * CLF_CHANNELS + CLF_CHANNELS * k + ch,
              s[y * src_pitch + k + ch * src_plane]);
}
#endif
