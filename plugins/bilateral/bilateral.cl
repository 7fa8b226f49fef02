// Bilateral filter (cv2.bilateralFilter): out = sum w v / sum w over a disc of taps around each
// pixel, w = space weight (the host's table, exp(-r^2 / 2 sigma_space^2)) times
// exp(-dist^2 / 2 sigma_color^2), dist the sum over channels of |v - centre|. Every channel of a
// pixel in one work-item: the colour distance needs them all (-D CH channels, planes
// src_plane floats apart). Taps: (dx, dy) and their space weights in __constant tables.
// With -D TW, TH: a TW x TH tile a group, each channel's window staged in __local; with -D VW: VW
// outputs of a row a work-item, in SIMD vectors (CPU devices); with -D BL_N: the rows layout at
// the end (GPUs), its taps literals.

// The colour weight of a distance: exp, or where the device's native exp is within the float
// promise (GPUs), -D BILATERAL_EXP=native_exp. CPUs (-D BILATERAL_POLY): 2^t as a polynomial in
// t's fraction (Cephes' exp2f coefficients on [-1/2, 1/2], relative error about 2e-7) times 2^n
// added to the exponent bits, all in SIMD lanes where PoCL's exp is a call a lane. t is clamped at
// -126: weights below 2^-126 count as that, not as 0 (beside the centre's 1, nothing).
#if defined(BILATERAL_POLY)
// NAME(x) for x <= 0 of float##N (N empty: float). t - 1/2 < 0, so the conversion's truncation
// rounds it up: n = ceil(t - 1/2), the nearest whole number to t (a conversion, which fast math
// leaves alone and SIMD lanes do at once), and f = t - n in (-1/2, 1/2].
#define BL_EXP_POLY(NAME, N)                                                                \
  inline float##N NAME(float##N x) {                                                        \
    const float##N t = fmax(x * 1.44269504f, (float##N)(-126.f));                           \
    const int##N n = convert_int##N(t - 0.5f);                                               \
    const float##N f = t - convert_float##N(n);                                             \
    float##N p = (float##N)(1.535336188319500e-4f);                                         \
    p = fma(p, f, (float##N)(1.339887440266574e-3f));                                       \
    p = fma(p, f, (float##N)(9.618437357674640e-3f));                                       \
    p = fma(p, f, (float##N)(5.550332471162809e-2f));                                       \
    p = fma(p, f, (float##N)(2.402264791363012e-1f));                                       \
    p = fma(p, f, (float##N)(6.931472028550421e-1f));                                       \
    p = fma(p, f, (float##N)(1.f));                                                         \
    return as_float##N(as_int##N(p) + (n << 23));                                           \
  }
#define BL_EXP_POLY_OF(NAME, N) BL_EXP_POLY(NAME, N)  // N expanded first (VW)
BL_EXP_POLY(bl_exp, )
#define BILATERAL_EXP bl_exp
#elif !defined(BILATERAL_EXP)
#define BILATERAL_EXP exp
#endif
#define COLOR(dist) BILATERAL_EXP((dist) * (dist)*color_coeff)

// One output pixel from window rows `s` (channel c at s + c * plane), `pitch` apart.
#define BILATERAL_PIXEL(T, LOAD, s, pitch, plane, out_store, WEIGHT)                \
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
      const T w = space[k] * WEIGHT(dist);                                          \
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
  BILATERAL_PIXEL(float, LOAD1, s, src_pitch, src_plane, STORE1, COLOR)
}

#if defined(VW)
typedef CLF_CAT(float, VW) bilateral_floatv;
#define LOADV(p) CLF_CAT(vload, VW)(0, p)
#if defined(BILATERAL_POLY)
BL_EXP_POLY_OF(bl_exp_v, VW)
#define WEIGHTV(dist) bl_exp_v((dist) * (dist)*color_coeff)
#else
#define WEIGHTV(dist) COLOR(dist)
#endif
__kernel void bilateral_vector(BILATERAL_ARGS) {
  const int x0 = get_global_id(0) * VW, y = get_global_id(1);
  if (x0 >= width || y >= rows) return;
  const __global float* s = src + src_origin + y * src_pitch + x0;
  __global float* d = dst + dst_origin + y * dst_pitch + x0;
  if (x0 + VW <= width) {
#define STOREV(c, v) CLF_CAT(vstore, VW)(v, 0, d + (c)*dst_plane)
    BILATERAL_PIXEL(bilateral_floatv, LOADV, s, src_pitch, src_plane, STOREV, WEIGHTV)
    return;
  }
  for (int t = 0; t < width - x0; ++t) {
    const __global float* st = s + t;
    __global float* dt = d + t;
#define STORET(c, v) dt[(c)*dst_plane] = (v)
    BILATERAL_PIXEL(float, LOAD1, st, src_pitch, src_plane, STORET, COLOR)
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
  BILATERAL_PIXEL(float, LOADL, s, 4 * WW4, WPLANE, STORE1, COLOR)
}
#endif

// The sum of the absolute differences of the bytes of a and b, and 2^x: on NVIDIA GPUs (-D BL_PTX)
// PTX's vabsdiff4 and ex2.approx.ftz, one instruction each (results below 2^-126 are 0).
#if defined(BL_PTX)
inline uint bl_sad(uint a, uint b) {
  uint d;
  asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(0u));
  return d;
}
inline float bl_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
#else
inline uint bl_sad(uint a, uint b) {
  const uchar4 d = abs_diff(as_uchar4(a), as_uchar4(b));
  return (uint)d.x + d.y + d.z + d.w;
}
#define bl_exp2 native_exp2
#endif
// |a - b| + c, one instruction on NVIDIA GPUs (PTX's sad).
#if defined(BL_PTX)
inline uint bl_absdiff_add(uint a, uint b, uint c) {
  uint d;
  asm("sad.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
#else
inline uint bl_absdiff_add(uint a, uint b, uint c) { return abs_diff(a, b) + c; }
#endif

#if defined(BL_N)
// The rows layout (GPUs; -D BL_N, BL_R, BL_W, BL_WG and the host's BL_TAPS): BL_N outputs of a row
// a work-item, group_rows rows a group, one after the other. Window rows y - dy and y + dy are read
// once, as aligned float4s from CLF_HALO4(BL_R) columns left of the first output (the blocked
// correlation's alignment), into registers that every output takes its taps from. The taps at
// (+-dx, +-dy) share a space weight: their colour-weighted sums are added first and multiplied by
// it once. BL_TAPS lists, for dy = 0..BL_R, BL_ROWS(dy) and then BL_GROUP(dx, dy, space) for each
// dx >= 0 of the disc, all literals, so the code is straight-line. With -D BL_LUT=n (u8 images:
// integral values, colour distances below n) the colour weights come from a table in __local that
// each group fills, one exp a distance, for its group_rows rows, keyed by integers as below; else
// from COLOR at every tap. BL_W: the floats of a window row, per channel (the host's, which its
// halo holds).
#define BL_HX CLF_HALO4(BL_R)
#if defined(BL_LUT)
// Each window pixel's channels also as one word (the a_bytes and b_bytes beside rows a and b), so
// that a tap's key, the byte offset of its distance's entry in the lane's copy, takes one or two
// integer instructions. One channel: the level times the entry's bytes (4 BL_COPIES, exact in a
// float) plus 2^23, whose bits are that product plus 2^23's, so that the key is the words'
// absolute difference plus the lane's key0. Two to four: the channels' bytes, whose summed
// absolute differences (bl_sad) are the distance, times 4 BL_COPIES (a shift) plus key0.
inline uint bl_word_key(uint x, uint y, uint key0) {
  return CH == 1 ? bl_absdiff_add(x, y, key0) : bl_sad(x, y) * (4u * BL_COPIES) + key0;
}
#define BL_WORD_KEY(x, y) bl_word_key(x, y, key0)
#define BL_TAP_KEY(f, k) BL_WORD_KEY(f##_bytes[BL_HX + (k)], centre_bytes[o])
#define BL_COLOR_OF(key) (*(const __local float*)((const __local char*)lut + (key)))
#define BL_KEY0_T uint
#define BL_KEY0(lane) ((uint)(lane)*4u)
#define BL_PACK(f) bl_pack(f, f##_bytes)
// Row y's words, and the outputs' centres among them.
#define BL_ROW_BYTES                                      \
  uint a_bytes[BL_W], b_bytes[BL_W], centre_bytes[BL_N]; \
  BL_PACK(a);                                             \
  for (int o = 0; o < BL_N; ++o) centre_bytes[o] = a_bytes[BL_HX + o];

// The words of window columns k of f (CH runs of BL_W floats, whole values 0..255). More than one
// channel: two channels from one float, v + 256 w exact, and 2^23 + v + 256 w holding v and w in
// its two low bytes and 0x4B in its top one. The third (and fourth) channel's word goes 16 bits
// up: with 3 channels it is added to the first two's, whose top byte stays 0x4B, the same in every
// word (nothing to a distance); with 4 it takes the place of their top half.
inline void bl_pack(const float* f, uint* bytes) {
#pragma unroll
  for (int k = 0; k < BL_W; ++k) {
    if (CH == 1) {
      bytes[k] = as_uint(fma(f[k], 4.f * BL_COPIES, 0x1p23f));
      continue;
    }
    uint word = as_uint(fma(f[BL_W + k], 256.f, f[k] + 0x1p23f));
    if (CH > 2) {
      const float third = f[2 * BL_W + k] + 0x1p23f;
      const uint high = as_uint(CH > 3 ? fma(f[3 * BL_W + k], 256.f, third) : third);
      word = CH > 3 ? (word & 0xffffu) | (high << 16) : word + (high << 16);
    }
    bytes[k] = word;
  }
}
#else
#define BL_COLOR_OF(dist) COLOR(dist)
#define BL_KEY0(lane) 0.f
#define BL_TAP_KEY(f, k) bl_dist(f + BL_HX + (k), centre + o, BL_N)
#define BL_KEY0_T float
#define BL_PACK(f)
#define BL_ROW_BYTES

// The colour distance of a tap's channels (v[c * BL_W]) to those of u (u[c * stride]: the
// centres, BL_N apart, or another window pixel, BL_W apart).
inline float bl_dist(const float* v, const float* u, int stride) {
  float dist = fabs(v[0] - u[0]);
#pragma unroll
  for (int c = 1; c < CH; ++c) dist += fabs(v[c * BL_W] - u[c * stride]);
  return dist;
}
#endif
// With -D BL_COPIES=n (BL_LUT) the table is held n times, interleaved (entry i of copy l at n i +
// l), lane l of a 32-wide warp reading copy l % n: with 32 copies each lane reads its own bank, so
// the distances never put two lanes of a warp on one bank, as random ones do in a single copy;
// with 16, at most two.

// One window row into f: CH runs of BL_W floats from `row`, column x0 - BL_HX. No load is tested:
// the host's halo holds the last work-item's (Bilateral::halo).
inline void bl_load(const __global float* row, int plane, float* f) {
#pragma unroll
  for (int q = 0; q < BL_W / 4; ++q) {
#pragma unroll
    for (int c = 0; c < CH; ++c) {
      const float4 v = ((const __global float4*)(row + c * plane))[q];
      f[c * BL_W + 4 * q] = v.x, f[c * BL_W + 4 * q + 1] = v.y;
      f[c * BL_W + 4 * q + 2] = v.z, f[c * BL_W + 4 * q + 3] = v.w;
    }
  }
}

#define BL_ROWS(dy)                                                 \
  if ((dy) > 0) {                                                   \
    bl_load(s + (y - (dy)) * src_pitch, src_plane, a);              \
    bl_load(s + (y + (dy)) * src_pitch, src_plane, b);              \
    BL_PACK(a);                                                     \
    BL_PACK(b);                                                     \
  }
// Output o's tap at column k of window row f, into the group's gw and gs: the group's first tap
// sets them (0 + w is not w to the compiler: -0 + 0 is 0), the others add to them.
#define BL_TAP(f, k, ASSIGN)                                                      \
  {                                                                               \
    const float cw = BL_COLOR_OF(BL_TAP_KEY(f, k));                               \
    gw ASSIGN cw;                                                                 \
    for (int c = 0; c < CH; ++c) gs[c] ASSIGN cw * f[c * BL_W + BL_HX + (k)];     \
  }
// With a colour table the centre's weight is 1 (both its weights are exp(0)), so the sums start
// from the centre and its group is skipped; exp's path keeps it (a centre of inf or NaN must
// give what the formula gives).
// The results of a table's levels are rounded to whole levels, far coarser than native_divide's
// error.
#if defined(BL_LUT)
#define BL_SKIP(dx, dy) ((dx) == 0 && (dy) == 0)
#define BL_DIVIDE(a, b) native_divide(a, b)
#else
#define BL_SKIP(dx, dy) 0
#define BL_DIVIDE(a, b) ((a) / (b))
#endif
#define BL_GROUP(dx, dy, space)                                                   \
  if (!BL_SKIP(dx, dy)) _Pragma("unroll") for (int o = 0; o < BL_N; ++o) {        \
      float gw, gs[CH];                                                           \
      BL_TAP(a, o + (dx), =)                                                      \
      if ((dx) > 0) BL_TAP(a, o - (dx), +=)                                       \
      if ((dy) > 0) BL_TAP(b, o + (dx), +=)                                       \
      if ((dx) > 0 && (dy) > 0) BL_TAP(b, o - (dx), +=)                           \
      wsum[o] += (space) * gw;                                                    \
      for (int c = 0; c < CH; ++c) sum[c * BL_N + o] += (space) * gs[c];          \
    }

#if defined(BL_LUT)
// The group's colour table: one exp a distance, BL_COPIES copies interleaved.
inline void bl_fill_table(__local float* lut, float color_coeff) {
  for (int dist = get_local_id(0); dist < BL_LUT; dist += BL_WG) {
    const float w = exp((float)(dist * dist) * color_coeff);
    for (int j = 0; j < BL_COPIES; ++j)  // side-by-side distances start at side-by-side copies
      lut[dist * BL_COPIES + (dist + j) % BL_COPIES] = w;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}
#endif

// Both GPU layouts' start: the group's colour table (BL_LUT), the lane's key0, a work-item's first
// output x0 and its window rows' first column s; a work-item past the row's end returns once the
// table is filled.
#if defined(BL_LUT)
#define BL_TABLE                         \
  __local float lut[BL_LUT * BL_COPIES]; \
  bl_fill_table(lut, color_coeff);
#else
#define BL_TABLE
#endif
#define BL_GROUP_START                                            \
  BL_TABLE                                                        \
  const BL_KEY0_T key0 = BL_KEY0(get_local_id(0) % BL_COPIES);    \
  const int x0 = get_global_id(0) * BL_N;                         \
  if (x0 >= width) return;                                        \
  const __global float* s = src + src_origin + x0 - BL_HX;

// A centre's own weight (BL_CENTRE_WEIGHT): with a colour table 1; with exp, the formula's (NaN for
// a centre of inf or NaN). Where the host writes BL_PAIR_EXP or BL_OTAP_EXP (bilateral.pair_exp: a
// share of the disc's offsets), a pair's weight is 2^(distance^2 color_log2 + log2 space) on the
// device's exp2 (bl_exp2) in place of the table's entry: the table's loads and the exp's unit work
// side by side.
#if defined(BL_LUT)
#define BL_CENTRE_WEIGHT(v) 1.f
inline float bl_exp_weight(uint sad, float log2_space, float color_log2) {
  const float d = as_float(sad + 0x4B000000u) - 0x1p23f;  // 2^23 + sad: exact, sad below 2^23
  return bl_exp2(fma(d * d, color_log2, log2_space));
}
#else
#define BL_CENTRE_WEIGHT(v) BL_COLOR_OF(bl_dist(v, v, BL_W))
#endif

// The rows layout in the pairs layout's order (beside the pairs layout, for its launches of few
// rows a group: Bilateral::enqueue). The host's BL_TAPS there starts each output from its centre,
// as BL_NEXT does, loads the window rows one at a time (BL_OROW(dy) into b; row 0 is a), and adds
// each tap where the pairs layout adds it to that output, weighted as its pair (BL_OTAP, or
// BL_OTAP_EXP with log2 of the space weight): the same operations in the same order, so the same
// bits whatever the outputs a work-item, with no rows above a group's first to walk.
#define BL_OROW(dy)                                   \
  bl_load(s + (y + (dy)) * src_pitch, src_plane, b); \
  BL_PACK(b);
#define BL_OCENTRE                                                                    \
  _Pragma("unroll") for (int o = 0; o < BL_N; ++o) {                                  \
    const float w = BL_CENTRE_WEIGHT(a + BL_HX + o);                                  \
    wsum[o] = w;                                                                      \
    for (int c = 0; c < CH; ++c) sum[c * BL_N + o] = w * a[c * BL_W + BL_HX + o];     \
  }
#define BL_OTAP_W(f, dx, weight)                                                            \
  _Pragma("unroll") for (int o = 0; o < BL_N; ++o) {                                        \
    const float w = weight;                                                                 \
    wsum[o] += w;                                                                           \
    for (int c = 0; c < CH; ++c) sum[c * BL_N + o] += w * f[c * BL_W + BL_HX + o + (dx)];   \
  }
#define BL_OTAP(f, dx, space) BL_OTAP_W(f, dx, (space)*BL_COLOR_OF(BL_TAP_KEY(f, o + (dx))))
#define BL_OTAP_EXP(f, dx, log2_space)                                                   \
  BL_OTAP_W(f, dx,                                                                       \
            bl_exp_weight(bl_sad(f##_bytes[BL_HX + o + (dx)], centre_bytes[o]), log2_space, \
                          color_log2))

#if !defined(BL_PAIRS)  // the pairs layout's program: BL_PAIR_TAPS, no BL_TAPS
__kernel __attribute__((reqd_work_group_size(BL_WG, 1, 1))) void bilateral_rows(BILATERAL_ARGS,
                                                                                int group_rows) {
  BL_GROUP_START
  const float color_log2 = color_coeff * M_LOG2E_F;  // BL_OTAP_EXP's (packed keys)
  for (int r = 0; r < group_rows; ++r) {
    const int y = get_group_id(1) * group_rows + r;
    if (y >= rows) return;
    float a[CH * BL_W], b[CH * BL_W], centre[CH * BL_N], sum[CH * BL_N], wsum[BL_N];
    bl_load(s + y * src_pitch, src_plane, a);
    BL_ROW_BYTES
    for (int o = 0; o < BL_N; ++o) {
      wsum[o] = BL_SKIP(0, 0) ? 1.f : 0.f;
      for (int c = 0; c < CH; ++c) {
        centre[c * BL_N + o] = a[c * BL_W + BL_HX + o];
        sum[c * BL_N + o] = BL_SKIP(0, 0) ? centre[c * BL_N + o] : 0.f;
      }
    }
    BL_TAPS
    __global float* d = dst + dst_origin + y * dst_pitch + x0;
    for (int o = 0; o < BL_N && x0 + o < width; ++o)
      for (int c = 0; c < CH; ++c) d[c * dst_plane + o] = BL_DIVIDE(sum[c * BL_N + o], wsum[o]);
  }
}
#endif
#endif

#if defined(BL_PAIRS)
// The pairs layout (-D BL_PAIRS and the host's BL_PAIR_TAPS; the rows layout's other options): a
// pixel pair's colour weight is one weight for both of its pixels, each the other's tap. A
// work-item's BL_N outputs of a row walk down its rows, from BL_R rows above the first, holding the
// sums of rows y to y + BL_R (slot dy: row y + dy). At row y each pair of a pixel of row y (p) and
// one of row y + dy (q, dy = 0 to BL_R) that are an output's taps is weighted once, and added to
// p's sums and to q's where they are outputs. Row y then has all its taps. Every output's sums take
// their taps in the host's order whichever row its group starts at: strips give the same bits.
#define BL_OUT(dy, o) ((dy)*BL_N + ((o) < 0 ? 0 : (o)))
#define BL_SUM(c, dy, o) sum[(c) * (BL_R + 1) * BL_N + BL_OUT(dy, o)]
// Row y's p, or row y + dy's q: the pair's second pixel's row.
#define BL_ROW_OF(dy, p, q) ((dy) == 0 ? (p) : (q))
#if defined(BL_LUT)
#define BL_PAIR_SAD(dy, kp, kq) bl_sad(a_bytes[kp], BL_ROW_OF(dy, a_bytes, b_bytes)[kq])
#define BL_PAIR_KEY(dy, kp, kq) BL_WORD_KEY(a_bytes[kp], BL_ROW_OF(dy, a_bytes, b_bytes)[kq])
#else
#define BL_PAIR_KEY(dy, kp, kq) bl_dist(BL_ROW_OF(dy, a, b) + (kq), a + (kp), BL_W)
#endif
// Window row y + dy into b; the last starts its outputs' sums from their centres: with a colour
// table, weight 1; with exp, the formula's (NaN for a centre of inf or NaN).
#define BL_NEXT(dy)                                                                  \
  bl_load(s + (y + (dy)) * src_pitch, src_plane, b);                                 \
  BL_PACK(b);                                                                        \
  if ((dy) == BL_R) _Pragma("unroll") for (int o = 0; o < BL_N; ++o) {               \
      const float w = BL_CENTRE_WEIGHT(b + BL_HX + o);                               \
      wsum[BL_OUT(BL_R, o)] = w;                                                     \
      for (int c = 0; c < CH; ++c) BL_SUM(c, BL_R, o) = w * b[c * BL_W + BL_HX + o]; \
    }
#define BL_PAIR(dy, kp, kq, space, op, oq) \
  BL_PAIR_W(dy, kp, kq, op, oq, (space)*BL_COLOR_OF(BL_PAIR_KEY(dy, kp, kq)))
#if defined(BL_LUT)
#define BL_PAIR_EXP(dy, kp, kq, log2_space, op, oq) \
  BL_PAIR_W(dy, kp, kq, op, oq, bl_exp_weight(BL_PAIR_SAD(dy, kp, kq), log2_space, color_log2))
#endif
// A pair's weight w added to p's sums (output op of row y) and to q's (output oq of row y + dy).
#define BL_PAIR_W(dy, kp, kq, op, oq, weight)                                                    \
  {                                                                                              \
    const float w = weight;                                                                      \
    if ((op) >= 0) {                                                                             \
      wsum[BL_OUT(0, op)] += w;                                                                  \
      for (int c = 0; c < CH; ++c) BL_SUM(c, 0, op) += w * BL_ROW_OF(dy, a, b)[c * BL_W + (kq)]; \
    }                                                                                            \
    if ((oq) >= 0) {                                                                             \
      wsum[BL_OUT(dy, oq)] += w;                                                                 \
      for (int c = 0; c < CH; ++c) BL_SUM(c, dy, oq) += w * a[c * BL_W + (kp)];                  \
    }                                                                                            \
  }

__kernel __attribute__((reqd_work_group_size(BL_WG, 1, 1))) void bilateral_pairs(BILATERAL_ARGS,
                                                                                 int group_rows) {
  BL_GROUP_START
  __global float* d = dst + dst_origin + x0;
  const int first = get_group_id(1) * group_rows, end = min(first + group_rows, rows);
  float a[CH * BL_W], b[CH * BL_W], wsum[(BL_R + 1) * BL_N], sum[CH * (BL_R + 1) * BL_N];
#if defined(BL_LUT)
  uint a_bytes[BL_W], b_bytes[BL_W];
  const float color_log2 = color_coeff * M_LOG2E_F;  // BL_PAIR_EXP's
#endif
  for (int i = 0; i < (BL_R + 1) * BL_N; ++i) {  // rows above the first: never stored
    wsum[i] = 0.f;
    for (int c = 0; c < CH; ++c) sum[c * (BL_R + 1) * BL_N + i] = 0.f;
  }
  for (int y = first - BL_R; y < end; ++y) {
    bl_load(s + y * src_pitch, src_plane, a);
    BL_PACK(a);
    BL_PAIR_TAPS
    if (y >= first) {
      __global float* out = d + y * dst_pitch;
#pragma unroll
      for (int o = 0; o < BL_N; ++o)
        if (x0 + o < width)
          for (int c = 0; c < CH; ++c) out[c * dst_plane + o] = BL_DIVIDE(BL_SUM(c, 0, o), wsum[o]);
    }
#pragma unroll
    for (int i = 0; i < BL_R * BL_N; ++i) {
      wsum[i] = wsum[i + BL_N];
      for (int c = 0; c < CH; ++c)
        sum[c * (BL_R + 1) * BL_N + i] = sum[c * (BL_R + 1) * BL_N + i + BL_N];
    }
  }
}
#endif
