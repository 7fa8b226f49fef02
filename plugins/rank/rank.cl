// Rank filters: out(x, y) = the Q-th smallest (0-based) of the K x K window around (x, y), per
// channel. Three ways, chosen per window and pixel type by rank.cpp:
//   rank_network_*   K <= 9: the window in registers, sorted by a compare-exchange network pruned
//                    to the comparators that reach position Q (-D CLF_RANK_NETWORK, made on the
//                    host); _tiled stages the group's window in __local with clf_stage_window,
//                    _direct reads global memory (CPU devices); rank_median3_vector, the 3x3
//                    median in CPU vectors from sorted columns, 2 rows a work-item
//   rank_tile        K <= 9: MX x MY outputs a work-item from one shared window, the sorts and
//                    merges their windows share done once (CLF_RANK_TILE, made on the host by
//                    selection.cpp)
//   rank_histogram   u8 data, any K: each work-item walks RUN rows down one column keeping a
//                    256-bin histogram of its window (16 coarse bins over it), 2K updates and at
//                    most 32 bin reads an output instead of K^2 reads
//   rank_histogram16 u16 levels and half values, any K: as rank_histogram on 16-bit keys, the
//                    high byte from a sliding histogram, the low byte from a second one over the
//                    keys under that high byte, counted again only when the result's high byte
//                    moves
//   rank_bisect      any data, any K: the Q-th key found 8 bits at a time, 4 counts of the
//                    window in 256 bins
// Every way picks an input value, so results are exact for every pixel type.

#if defined(N)
// Sorts v[a], v[b] into order. fmin/fmax: an ordering of every non-NaN float.
#define CX(a, b)                                \
  {                                             \
    const __typeof__(v[a]) lo = fmin(v[a], v[b]); \
    v[b] = fmax(v[a], v[b]);                    \
    v[a] = lo;                                  \
  }

__kernel void rank_network_direct(CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows) {
  const int x = get_global_id(0), y = get_global_id(1), c = get_global_id(2);
  if (x >= width || y >= rows) return;
  const __global float* s = src + src_origin + c * src_plane + (y - R) * src_pitch + (x - R);
  float v[N];
#pragma unroll
  for (int j = 0; j < K; ++j)
#pragma unroll
    for (int i = 0; i < K; ++i) v[j * K + i] = s[j * src_pitch + i];
  CLF_RANK_NETWORK
  dst[dst_origin + c * dst_plane + y * dst_pitch + x] = v[Q];
}

#if defined(VW)
// VW outputs of a row per work-item, each comparator on VW lanes at once (CPU devices: the
// vectors are the SIMD registers); the row's tail, past the last whole vector, one at a time.
typedef CLF_CAT(float, VW) rank_floatv;
__kernel void rank_network_vector(CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows) {
  const int x0 = get_global_id(0) * VW, y = get_global_id(1), c = get_global_id(2);
  if (x0 >= width || y >= rows) return;
  const __global float* s = src + src_origin + c * src_plane + (y - R) * src_pitch + (x0 - R);
  __global float* d = dst + dst_origin + c * dst_plane + y * dst_pitch + x0;
  if (x0 + VW <= width) {
    rank_floatv v[N];
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int i = 0; i < K; ++i) v[j * K + i] = CLF_CAT(vload, VW)(0, s + j * src_pitch + i);
    CLF_RANK_NETWORK
    CLF_CAT(vstore, VW)(v[Q], 0, d);
    return;
  }
  for (int t = 0; t < width - x0; ++t) {
    float v[N];
    for (int j = 0; j < K; ++j)
      for (int i = 0; i < K; ++i) v[j * K + i] = s[j * src_pitch + i + t];
    CLF_RANK_NETWORK
    d[t] = v[Q];
  }
}

// The 3x3 median, VW outputs of each of 2 rows a work-item (CPU devices, rank.median3_rows):
// each window column sorted (lo <= mid <= hi), the two rows' columns sharing the sort of their
// middle two rows; the median is then med3(the largest lo, med3 of the mids, the smallest hi).
// 27 min and max operations an output against the network's 40, on the same picks.
#define MED3(a, b, c) fmax(fmin(a, b), fmin(fmax(a, b), c))
__kernel void rank_median3_vector(CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows) {
  const int x0 = get_global_id(0) * VW, y0 = get_global_id(1) * 2, c = get_global_id(2);
  if (x0 >= width || y0 >= rows) return;
  const bool two = y0 + 1 < rows;  // else row y0 + 2 is past the halo: row y0 + 1 stands in
  const __global float* s = src + src_origin + c * src_plane + (y0 - 1) * src_pitch + (x0 - 1);
  __global float* d = dst + dst_origin + c * dst_plane + y0 * dst_pitch + x0;
  if (x0 + VW <= width) {
    rank_floatv lo[2][3], mid[2][3], hi[2][3];
#pragma unroll
    for (int i = 0; i < 3; ++i) {
      const rank_floatv a = CLF_CAT(vload, VW)(0, s + i),
                        b = CLF_CAT(vload, VW)(0, s + src_pitch + i),
                        e = CLF_CAT(vload, VW)(0, s + 2 * src_pitch + i),
                        f = CLF_CAT(vload, VW)(0, s + (two ? 3 : 2) * src_pitch + i);
      const rank_floatv p0 = fmin(b, e), p1 = fmax(b, e);  // the shared rows, sorted
      lo[0][i] = fmin(p0, a), mid[0][i] = fmax(p0, fmin(p1, a)), hi[0][i] = fmax(p1, a);
      lo[1][i] = fmin(p0, f), mid[1][i] = fmax(p0, fmin(p1, f)), hi[1][i] = fmax(p1, f);
    }
#pragma unroll
    for (int r = 0; r < 2; ++r)
      if (r == 0 || two)
        CLF_CAT(vstore, VW)(MED3(fmax(fmax(lo[r][0], lo[r][1]), lo[r][2]),
                                 MED3(mid[r][0], mid[r][1], mid[r][2]),
                                 fmin(fmin(hi[r][0], hi[r][1]), hi[r][2])),
                            0, d + r * dst_pitch);
    return;
  }
  for (int r = 0; r < (two ? 2 : 1); ++r)  // the row's tail: the network, one output at a time
    for (int t = 0; t < width - x0; ++t) {
      float v[N];
      for (int j = 0; j < K; ++j)
        for (int i = 0; i < K; ++i) v[j * K + i] = s[(r + j) * src_pitch + i + t];
      CLF_RANK_NETWORK
      d[r * dst_pitch + t] = v[Q];
    }
}
#endif

#if defined(TW)
// A TW x TH tile of outputs per group, one per work-item; the window (TW + 2R) x (TH + 2R) comes
// from __local. WW4: the staged row in float4s, from CLF_HALO4(R) columns left of the tile.
#define CLF_HX CLF_HALO4(R)
#define WW4 ((CLF_HX + TW + R + 3) / 4)
__kernel __attribute__((reqd_work_group_size(TW, TH, 1))) void rank_network_tiled(
    CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows) {
  __local float4 win[(TH + 2 * R) * WW4];
  const int tx0 = get_group_id(0) * TW, y0 = get_group_id(1) * TH, c = get_group_id(2);
  const event_t staged = clf_stage_window(win, WW4, TH + 2 * R, src + src_origin + c * src_plane,
                                          src_pitch, tx0 - CLF_HX, y0 - R,
                                          width + R + CLF_HX - tx0, rows + 2 * R - y0);
  const int lx = get_local_id(0), ly = get_local_id(1);
  clf_stage_wait(staged);
  const __local float* w = (const __local float*)win + ly * 4 * WW4 + (CLF_HX - R + lx);
  float v[N];
  for (int j = 0; j < K; ++j)
    for (int i = 0; i < K; ++i) v[j * K + i] = w[j * 4 * WW4 + i];
  CLF_RANK_NETWORK
  if (tx0 + lx < width && y0 + ly < rows)
    dst[dst_origin + c * dst_plane + (y0 + ly) * dst_pitch + tx0 + lx] = v[Q];
}
#endif
#endif

#if defined(CLF_RANK_TILE)
// The host launches ceil(width / MX) x ceil(rows / MY) work-items (or more: those past return)
// on a plane of at least MX x MY; the last tile of a row or column moves back inside it, writing
// some outputs twice, the same.
__kernel void rank_tile(CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows) {
  if ((int)get_global_id(0) * MX >= width || (int)get_global_id(1) * MY >= rows) return;
  const int x0 = min((int)get_global_id(0) * MX, width - MX);
  const int y0 = min((int)get_global_id(1) * MY, rows - MY), c = get_global_id(2);
  const __global float* s = src + src_origin + c * src_plane + (y0 - R) * src_pitch + (x0 - R);
  __global float* d = dst + dst_origin + c * dst_plane + y0 * dst_pitch + x0;
#define LD(x, y) s[(y) * src_pitch + (x)]
#define ST(x, y, value) d[(y) * dst_pitch + (x)] = (value)
  CLF_RANK_TILE
#undef LD
#undef ST
}
#endif

#if defined(HG)
// HG work-items a group, each with its own bins in __local (bin b of item l at b * HG + l).
inline void rank_count(__local ushort* fine, __local ushort* coarse, int l, float value, int step) {
  const int b = clamp((int)value, 0, 255);
  fine[b * HG + l] += step;
  coarse[(b >> 4) * HG + l] += step;
}

inline void rank_count_row(__local ushort* fine, __local ushort* coarse, int l,
                           const __global float* row, int radius, int step) {
  for (int i = -radius; i <= radius; ++i) rank_count(fine, coarse, l, row[i], step);
}

__kernel __attribute__((reqd_work_group_size(HG, 1, 1))) void rank_histogram(
    CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows, int radius, int q) {
  __local ushort fine[256 * HG], coarse[16 * HG];
  const int l = get_local_id(0), x = get_global_id(0), y0 = get_global_id(1) * RUN;
  const int c = get_global_id(2);
  for (int b = 0; b < 256; ++b) fine[b * HG + l] = 0;
  for (int b = 0; b < 16; ++b) coarse[b * HG + l] = 0;
  if (x >= width || y0 >= rows) return;  // no barrier follows: each item owns its bins
  const __global float* s = src + src_origin + c * src_plane + x;
  for (int j = -radius; j <= radius; ++j)
    rank_count_row(fine, coarse, l, s + (y0 + j) * src_pitch, radius, 1);
  const int end = min(y0 + RUN, rows);
  for (int y = y0;; ++y) {
    int below = 0, b = 0;
    while (below + coarse[b * HG + l] <= q) below += coarse[b++ * HG + l];
    b *= 16;
    while (below + fine[b * HG + l] <= q) below += fine[b++ * HG + l];
    dst[dst_origin + c * dst_plane + y * dst_pitch + x] = (float)b;
    if (y + 1 >= end) break;
    rank_count_row(fine, coarse, l, s + (y - radius) * src_pitch, radius, -1);
    rank_count_row(fine, coarse, l, s + (y + radius + 1) * src_pitch, radius, 1);
  }
}
#endif

#if defined(HG16)
// 16-bit keys: u16 levels, or the bits of half values in their order (CLF_HALF_KEYS).
inline int rank_key16(float v) {
#if defined(CLF_HALF_KEYS)
  ushort h;
  vstore_half(v, 0, (__private half*)&h);
  return (h & 0x8000) ? (~h & 0xffff) : (h | 0x8000);
#else
  return clamp((int)v, 0, 65535);
#endif
}
inline float rank_value16(int key) {
#if defined(CLF_HALF_KEYS)
  const ushort h = (key & 0x8000) ? (key & 0x7fff) : (~key & 0xffff);
  return vload_half(0, (__private const half*)&h);
#else
  return (float)key;
#endif
}

// Each work-item's bins, bin b of item l at b * HG16 + l: 256 counts of the keys' high bytes (and
// 16 over them), 256 of the low bytes of the keys whose high byte is the current one (and 16).
#define RANK_HIGH 0
#define RANK_HIGH16 256
#define RANK_LOW 272
#define RANK_LOW16 528
#define RANK_BINS 544

inline void rank_count_high(__local ushort* bins, int l, int key, int step) {
  bins[(RANK_HIGH + (key >> 8)) * HG16 + l] += step;
  bins[(RANK_HIGH16 + (key >> 12)) * HG16 + l] += step;
}
inline void rank_count_low(__local ushort* bins, int l, int key, int step) {
  bins[(RANK_LOW + (key & 255)) * HG16 + l] += step;
  bins[(RANK_LOW16 + ((key >> 4) & 15)) * HG16 + l] += step;
}

// The bin of 256 (at `fine`, with 16 over them at `coarse`) holding the q-th count, *below
// counts past before it.
inline int rank_find16(__local const ushort* fine, __local const ushort* coarse, int l, int q,
                       int* below) {
  int n = *below, b = 0;
  while (n + coarse[b * HG16 + l] <= q) n += coarse[b++ * HG16 + l];
  b *= 16;
  while (n + fine[b * HG16 + l] <= q) n += fine[b++ * HG16 + l];
  *below = n;
  return b;
}

// Adds (step 1) or takes out (-1) a window row: every key's high byte, and the low byte of those
// under the high byte p.
inline void rank_count_row16(__local ushort* bins, int l, const __global float* row, int radius,
                             int p, int step) {
  for (int i = -radius; i <= radius; ++i) {
    const int key = rank_key16(row[i]);
    rank_count_high(bins, l, key, step);
    if ((key >> 8) == p) rank_count_low(bins, l, key, step);
  }
}

// As rank_histogram, on 16-bit keys: the high byte from a sliding histogram, then the low byte
// among the window's keys under it, from a second sliding histogram that is counted again from
// the window only when the high byte of the result moves.
__kernel __attribute__((reqd_work_group_size(HG16, 1, 1))) void rank_histogram16(
    CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows, int radius, int q) {
  __local ushort bins[RANK_BINS * HG16];
  const int l = get_local_id(0), x = get_global_id(0), y0 = get_global_id(1) * RUN;
  const int c = get_global_id(2);
  for (int b = 0; b < RANK_LOW; ++b) bins[b * HG16 + l] = 0;
  if (x >= width || y0 >= rows) return;  // no barrier follows: each item owns its bins
  const __global float* s = src + src_origin + c * src_plane + x;
  for (int j = -radius; j <= radius; ++j)
    rank_count_row16(bins, l, s + (y0 + j) * src_pitch, radius, -1, 1);
  const int end = min(y0 + RUN, rows);
  for (int y = y0, p = -1;; ++y) {
    int below = 0;
    const int high = rank_find16(bins + RANK_HIGH * HG16, bins + RANK_HIGH16 * HG16, l, q, &below);
    if (high != p) {
      p = high;
      for (int b = RANK_LOW; b < RANK_BINS; ++b) bins[b * HG16 + l] = 0;
      for (int j = -radius; j <= radius; ++j)
        for (int i = -radius; i <= radius; ++i) {
          const int key = rank_key16(s[(y + j) * src_pitch + i]);
          if ((key >> 8) == p) rank_count_low(bins, l, key, 1);
        }
    }
    const int low = rank_find16(bins + RANK_LOW * HG16, bins + RANK_LOW16 * HG16, l, q, &below);
    dst[dst_origin + c * dst_plane + y * dst_pitch + x] = rank_value16(p * 256 + low);
    if (y + 1 >= end) break;
    rank_count_row16(bins, l, s + (y - radius) * src_pitch, radius, p, -1);
    rank_count_row16(bins, l, s + (y + radius + 1) * src_pitch, radius, p, 1);
  }
}
#endif

// Floats as unsigned keys in the same order (negatives reversed below the positives).
inline uint rank_key(float f) {
  const uint u = as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
inline float rank_unkey(uint k) { return as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k); }

#if defined(BG)
// The Q-th smallest key found 8 bits at a time, from the top: each step counts the next 8 bits of
// the window's keys that share the bits found so far in 256 bins (16 over them) of the
// work-item's own in __local, bin b of item l at b * BG + l.
__kernel __attribute__((reqd_work_group_size(BG, 1, 1))) void rank_bisect(
    CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows, int radius, int q) {
  __local ushort bins[272 * BG];
  const int l = get_local_id(0), x = get_global_id(0), y = get_global_id(1), c = get_global_id(2);
  if (x >= width || y >= rows) return;  // no barrier follows: each item owns its bins
  const __global float* s =
      src + src_origin + c * src_plane + (y - radius) * src_pitch + (x - radius);
  const int k = 2 * radius + 1;
  uint found = 0, known = 0;  // the key's bits found so far, and which they are
  int rest = q;               // its rank among the keys that share them
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int b = 0; b < 272; ++b) bins[b * BG + l] = 0;
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < k; ++i) {
        const uint key = rank_key(s[j * src_pitch + i]);
        if ((key & known) == found) {
          const uint digit = (key >> shift) & 255u;
          bins[digit * BG + l] += 1;
          bins[(256 + (digit >> 4)) * BG + l] += 1;
        }
      }
    int below = 0, b = 0;
    while (below + bins[(256 + b) * BG + l] <= rest) below += bins[(256 + b++) * BG + l];
    b *= 16;
    while (below + bins[b * BG + l] <= rest) below += bins[b++ * BG + l];
    rest -= below;
    found |= (uint)b << shift;
    known |= 255u << shift;
  }
  dst[dst_origin + c * dst_plane + y * dst_pitch + x] = rank_unkey(found);
}
#endif
