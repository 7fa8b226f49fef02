// One morphology pass: out(x, y) = the min (erode, -D MAX=0) or max (dilate, -D MAX=1) over the
// structuring element of src(x + dx, y + dy). A comparison with NaN is false, so the NaN of
// border=ignore never wins (fmin and fmax would say the same, but PoCL's vector fmin does not
// keep that rule). The element is a list of horizontal segments made on the host,
// -D MORPH_ROWS="ROW(dy, w) ...", segment dy covering dx in [-w, w], for elements of up to
// morphology.cpp's literal_max_rows rows; larger ones read the half-widths from `widths` (a
// program with 511 literal rows took a minute to build). RX and RY bound them. One element, a
// separable rect's row or column, an ellipse or a cross: the same kernel.
// A pass writes the region [x0, x0 + w) x [y0, y0 + h) of strip coordinates, which reaches past the
// image where a later pass needs it. A pass reading a temp plane (checked = 1) applies the border
// rule itself where the window leaves the image, as OpenCV applies it before every erode and
// dilate: the streamer filled only the input's halo. Wrap reads the rows computed past the edge
// (the continuation of a wrapped image is the wrapped result).
// Then, combine 1: other - result (gradient, blackhat's input comes first as other: see
// morphology.cpp), 2: result - other.

inline float morph_fetch(const __global float* s, int pitch, int x, int y, int width, int first_row,
                         int image_rows, int mode, float value) {
  const int gy = first_row + y;
  if (mode == CLF_BORDER_WRAP || (x >= 0 && x < width && gy >= 0 && gy < image_rows))
    return s[y * pitch + x];
  if (mode >= CLF_BORDER_CONSTANT) return clf_border_fill(mode, value);
  return s[(clf_border_interpolate(gy, image_rows, mode) - first_row) * pitch +
           clf_border_interpolate(x, width, mode)];
}

#if MAX
#define OP(acc, v) ((v) > (acc) ? (v) : (acc))
#define MORPH_START (-INFINITY)
#else
#define OP(acc, v) ((v) < (acc) ? (v) : (acc))
#define MORPH_START INFINITY
#endif

#define ROW(dy, w)                                   \
  for (int dx = -(w); dx <= (w); ++dx) acc = OP(acc, LOAD(x + dx, y + (dy)));
#if !defined(MORPH_ROWS)
#define MORPH_ROWS                                   \
  for (int dy = -RY; dy <= RY; ++dy) {               \
    const int wd = widths[dy + RY];                  \
    ROW(dy, wd)                                      \
  }
#endif

// The pass at one pixel (x, y) of strip coordinates.
inline void morph_one(const __global float* s, int src_pitch, __global float* d, int dst_pitch,
                      const __global float* o, int other_pitch, int x, int y, int width,
                      int first_row, int image_rows, int mode, float value, int checked,
                      int combine, __constant int* widths) {
  float acc = MORPH_START;
  const int gy = first_row + y;
  if (!checked || (x >= RX && x + RX < width && gy >= RY && gy + RY < image_rows)) {
#define LOAD(px, py) s[(py)*src_pitch + (px)]
    MORPH_ROWS
#undef LOAD
  } else {
#define LOAD(px, py) morph_fetch(s, src_pitch, px, py, width, first_row, image_rows, mode, value)
    MORPH_ROWS
#undef LOAD
  }
  if (combine) {
    const float v = o[y * other_pitch + x];
    acc = combine == 1 ? v - acc : acc - v;
  }
  d[y * dst_pitch + x] = acc;
}

#define MORPH_ARGS                                                                            \
  CLF_PLANE_IN(src), CLF_PLANE(dst), int x0, int y0, int w, int h, int width, int first_row, \
      int image_rows, int mode, float value, int checked, CLF_PLANE_IN(other), int combine,    \
      __constant int *widths
#define MORPH_PLANES(c)                                      \
  const __global float* s = src + src_origin + (c)*src_plane; \
  __global float* d = dst + dst_origin + (c)*dst_plane;       \
  const __global float* o = other + other_origin + (c)*other_plane;

__kernel void morph_pass(MORPH_ARGS) {
  const int i = get_global_id(0), j = get_global_id(1), c = get_global_id(2);
  if (i >= w || j >= h) return;
  MORPH_PLANES(c)
  morph_one(s, src_pitch, d, dst_pitch, o, other_pitch, x0 + i, y0 + j, width, first_row,
            image_rows, mode, value, checked, combine, widths);
}

#if defined(VW)
// VW outputs of a row per work-item in one SIMD vector (CPU devices); windows that leave the
// image, and the row's tail, one output at a time.
typedef CLF_CAT(float, VW) morph_floatv;
__kernel void morph_pass_vector(MORPH_ARGS) {
  const int i0 = get_global_id(0) * VW, j = get_global_id(1), c = get_global_id(2);
  if (i0 >= w || j >= h) return;
  MORPH_PLANES(c)
  const int x = x0 + i0, y = y0 + j, gy = first_row + y;
  if (i0 + VW <= w &&
      (!checked || (x >= RX && x + VW - 1 + RX < width && gy >= RY && gy + RY < image_rows))) {
    morph_floatv acc = (morph_floatv)(MORPH_START);
#define LOAD(px, py) CLF_CAT(vload, VW)(0, s + (py)*src_pitch + (px))
    MORPH_ROWS
#undef LOAD
    if (combine) {
      const morph_floatv v = CLF_CAT(vload, VW)(0, o + y * other_pitch + x);
      acc = combine == 1 ? v - acc : acc - v;
    }
    CLF_CAT(vstore, VW)(acc, 0, d + y * dst_pitch + x);
    return;
  }
  for (int t = 0; t < min(VW, w - i0); ++t)
    morph_one(s, src_pitch, d, dst_pitch, o, other_pitch, x + t, y, width, first_row, image_rows,
              mode, value, checked, combine, widths);
}
#endif

#if defined(VW) && defined(RECT_RUN)
// A rect in one pass (CPU devices, the first pass of an operation): VW columns and RECT_RUN blocks
// of RK = 2 RY + 1 output rows a work-item. Each input row's extremum over 2 RX + 1 columns is
// taken once (rect_row); down the columns, van Herk / Gil-Werman: per block, the suffix extrema
// of its first RK row extrema and the running prefix of the next RK - 1, which are the next
// block's first ones. No temp plane between a row pass and a column pass, and the column costs
// about three operations an output whatever RY.
#define RK (2 * RY + 1)
#if defined(ROW_DOUBLING)
// From radius morphology.row_doubling_min_radius (CPUs): the row's span of VW + 2 RX inputs in
// vectors, its extrema over windows of 1, 2, 4, ... inputs, each from two of the level before (the
// second shifted, shuffle2 across a pair of vectors), and the 2 RX + 1 from two overlapping windows
// of the largest power of two: log2(2 RX + 1) levels of a shuffle and a comparison a vector of the
// span, in place of 2 RX + 1 loads and as many comparisons a vector of outputs. The span's NaNs
// (border=ignore, or NaN inputs) become MORPH_START as they load, so that none wins wherever it
// stands in a comparison; the left operand keeps ties, as the loop's first input does.
// SPAN_V, SPARE_V (the host's, which sizes the work-item by them): the span's vectors, and those
// past it that shifts may read.
#define SPAN (VW + 2 * RX)
#define MORPH_IOTA4 (uint4)(0, 1, 2, 3)
#define MORPH_IOTA8 (uint8)(0, 1, 2, 3, 4, 5, 6, 7)
#define MORPH_IOTA16 (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define MORPH_IOTA CLF_CAT(MORPH_IOTA, VW)
// Inputs n to n + VW of the vectors a, b side by side (0 <= n < VW).
#define SHIFTED(a, b, n) shuffle2(a, b, MORPH_IOTA + (uint)(n))
#define SHIFTED_FROM(v, n) \
  ((n) % VW ? SHIFTED(v[(n) / VW], v[(n) / VW + 1], (n) % VW) : v[(n) / VW])
inline morph_floatv rect_row(const __global float* p) {
  morph_floatv v[SPAN_V + SPARE_V];
#pragma unroll
  for (int k = 0; k < SPAN_V + SPARE_V; ++k)  // the last loads end at the span's end
    v[k] = k < SPAN_V ? OP((morph_floatv)(MORPH_START),
                           CLF_CAT(vload, VW)(0, p - RX + min(k * VW, SPAN - VW)))
                      : (morph_floatv)(MORPH_START);
  if (SPAN_V * VW > SPAN) v[SPAN_V - 1] = SHIFTED(v[SPAN_V - 1], v[SPAN_V - 1], SPAN_V * VW - SPAN);
  int len = 1;
#pragma unroll
  for (int level = 0; level < 12 && 2 * len <= 2 * RX + 1; ++level, len *= 2)
#pragma unroll
    for (int k = 0; k < SPAN_V; ++k) v[k] = OP(v[k], SHIFTED_FROM(v, k * VW + len));
  return OP(v[0], SHIFTED_FROM(v, 2 * RX + 1 - len));
}
#else
inline morph_floatv rect_row(const __global float* p) {
  morph_floatv acc = (morph_floatv)(MORPH_START);
  for (int dx = -RX; dx <= RX; ++dx) acc = OP(acc, CLF_CAT(vload, VW)(0, p + dx));
  return acc;
}
#endif

__kernel void morph_rect_vector(MORPH_ARGS) {
  const int i0 = get_global_id(0) * VW, j0 = get_global_id(1) * RECT_RUN * RK;
  const int c = get_global_id(2);
  if (i0 >= w || j0 >= h) return;
  MORPH_PLANES(c)
  const int x = x0 + i0, n = min(RECT_RUN * RK, h - j0);
  if (i0 + VW > w) {  // the row's tail, one output at a time
    for (int t = 0; t < n; ++t)
      for (int u = 0; u < w - i0; ++u)
        morph_one(s, src_pitch, d, dst_pitch, o, other_pitch, x + u, y0 + j0 + t, width,
                  first_row, image_rows, mode, value, 0, combine, widths);
    return;
  }
  // rows[t]: the block's row t's extrema, then its suffix from t, until the next block's row t
  // takes its place.
  morph_floatv rows[RK];
  for (int q = 0; q < RK; ++q) rows[q] = rect_row(s + (y0 + j0 - RY + q) * src_pitch + x);
  for (int b = 0; b * RK < n; ++b) {
    const int top = y0 + j0 + b * RK;  // the block's first output row
    morph_floatv acc = (morph_floatv)(MORPH_START);
    for (int t = RK - 1; t >= 0; --t) rows[t] = acc = OP(acc, rows[t]);
    acc = (morph_floatv)(MORPH_START);
    const int outputs = min(RK, n - b * RK);
    for (int t = 0; t < outputs; ++t) {  // fewer than RK: the last block, no next one to feed
      if (t > 0) {  // row top + RY + t: the prefix's, and the next block's row t - 1
        rows[t - 1] = rect_row(s + (top + RY + t) * src_pitch + x);
        acc = OP(acc, rows[t - 1]);
      }
      morph_floatv v = t > 0 ? OP(rows[t], acc) : rows[0];
      const int y = top + t;
      if (combine) {
        const morph_floatv other_value = CLF_CAT(vload, VW)(0, o + y * other_pitch + x);
        v = combine == 1 ? other_value - v : v - other_value;
      }
      CLF_CAT(vstore, VW)(v, 0, d + y * dst_pitch + x);
    }
    if ((b + 1) * RK < n) rows[RK - 1] = rect_row(s + (top + RK + RY) * src_pitch + x);
  }
}
#undef RK
#endif

#if defined(LINE)
// A long line of LK = 2 LR + 1 pixels (a separable rect's column, LINE 1, or row, LINE 2) at a
// constant cost per output whatever its length (van Herk / Gil-Werman): a work-item owns LK
// consecutive outputs along the line and takes the running extremum of the window's first LK
// inputs backwards (suffixes) and of the next LK - 1 forwards (prefixes); output t is the extremum
// of suffix t and prefix t - 1.
#define LK (2 * LR + 1)
// Loads a work-item issues together: its stores to dst between them may alias src for all the
// compiler knows, and a loop of one load each would wait for every one in turn.
#if !defined(LINE_CHUNK)
#define LINE_CHUNK 8
#endif
inline float line_read(const __global float* s, int pitch, int x, int y, int width, int first_row,
                       int image_rows, int mode, float value, int checked) {
  return checked ? morph_fetch(s, pitch, x, y, width, first_row, image_rows, mode, value)
                 : s[y * pitch + x];
}

#if LINE == 2
// A row's inputs [base - LR, base - LR + count) staged in seg by a group of LG side by side, those
// at or past x_end as MORPH_START (they feed no output); returns once the whole group's are.
inline void line_stage_row(__local float* seg, int count, const __global float* s, int pitch,
                           int base, int y, int x_end, int width, int first_row, int image_rows,
                           int mode, float value, int check) {
  for (int q0 = get_local_id(0); q0 < count; q0 += LINE_CHUNK * LG) {
    float in[LINE_CHUNK];
#pragma unroll
    for (int k = 0; k < LINE_CHUNK; ++k) {
      const int q = q0 + k * LG, x = base - LR + q;
      in[k] = q < count && x < x_end
                  ? line_read(s, pitch, x, y, width, first_row, image_rows, mode, value, check)
                  : MORPH_START;
    }
#pragma unroll
    for (int k = 0; k < LINE_CHUNK; ++k)
      if (q0 + k * LG < count) seg[q0 + k * LG] = in[k];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

// line_stage_row's staging where no border rule applies, in float4s: `seg` (16-byte aligned)
// from column start - (start & 3), the row's inputs from start on at seg[(start & 3) + q]. Plane
// rows and their margins are whole float4s (clf_stage_window's alignment): a float4 that holds a
// column before x_end is in the row's room.
inline void line_stage_row4(__local float* seg, int count, const __global float* s, int pitch,
                            int start, int y, int x_end) {
  const int a = start - (start & 3), n4 = ((start & 3) + count + 3) / 4;
  const __global float4* row = (const __global float4*)(s + y * pitch + a);
  for (int j0 = get_local_id(0); j0 < n4; j0 += LINE_CHUNK * LG) {
    float4 in[LINE_CHUNK];
#pragma unroll
    for (int k = 0; k < LINE_CHUNK; ++k) {
      const int j = j0 + k * LG;
      in[k] = j < n4 && a + 4 * j < x_end ? row[j] : (float4)(MORPH_START);
    }
#pragma unroll
    for (int k = 0; k < LINE_CHUNK; ++k) {
      const int j = j0 + k * LG, x = a + 4 * j;
      if (j >= n4) break;
      const float4 v = in[k];
      vstore4((float4)(x < x_end ? v.x : MORPH_START, x + 1 < x_end ? v.y : MORPH_START,
                       x + 2 < x_end ? v.z : MORPH_START, x + 3 < x_end ? v.w : MORPH_START),
              j, seg);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}
#endif

#if LINE == 1 && defined(LINE_WALK)
// A column walked down (-D LINE_WALK, where LK rows of LINE_GROUP floats, 64 or 32, take at most
// half of local memory): each of a group's work-items owns one column and walks down a segment of
// blocks of LK outputs (the launch's rows of groups share out the blocks), reading each input row
// of its segment once. Its column of `held` holds the current block's suffixes; going down the
// next block, each row's prefix meets the suffix above it for one output, and the row takes the
// suffix's place, raw; then the block's suffixes are taken in place. No work-item reads
// another's column: no barriers. The input rows come in chunks of LINE_CHUNK, each chunk's loads
// issued one chunk ahead, so that they are in flight during the work on the chunk before and
// during a block's suffixes.
__kernel __attribute__((reqd_work_group_size(LINE_GROUP, 1, 1))) void morph_line(MORPH_ARGS) {
  __local float held[LK * LINE_GROUP];
  const int blocks = ((h + LK - 1) / LK + get_global_size(1) - 1) / get_global_size(1);
  const int i = get_global_id(0), first = get_global_id(1) * blocks * LK;
  if (i >= w || first >= h) return;
  const int n = min(blocks * LK, h - first), x = x0 + i, base = y0 + first;
  const int gy = first_row + base;
  const bool inside = x >= 0 && x < width && gy - LR >= 0 && gy + n - 1 + LR < image_rows;
  MORPH_PLANES(get_global_id(2))
  const int check = checked && !inside;
  __local float* col = held + get_local_id(0);  // row t of a block at col[t * LINE_GROUP]
  // Input row r of the segment is row base - LR + r; rows from n + 2 LR on feed no output.
#define AT(r)                                                                                 \
  ((r) < n + 2 * LR ? line_read(s, src_pitch, x, base - LR + (r), width, first_row, image_rows, \
                                mode, value, check)                                           \
                    : MORPH_START)
  // The chunk after the one at row t0 of the block whose first input row is `first_in`: the
  // block's next chunk, or the next block's first.
#define FETCH_AFTER(first_in, t0)                                                      \
  {                                                                                    \
    const int t1 = (t0) + LINE_CHUNK < LK ? (t0) + LINE_CHUNK : 0;                     \
    const int r1 = t1 > 0 ? (first_in) + t1 : (first_in) + LK;                         \
    _Pragma("unroll") for (int k = 0; k < LINE_CHUNK; ++k) ahead[k] =                  \
        t1 + k < LK ? AT(r1 + k) : MORPH_START;                                        \
  }
  float ahead[LINE_CHUNK];
#pragma unroll
  for (int k = 0; k < LINE_CHUNK; ++k) ahead[k] = k < LK ? AT(k) : MORPH_START;
  for (int t0 = 0; t0 < LK; t0 += LINE_CHUNK) {  // block 0, raw
    float in[LINE_CHUNK];
#pragma unroll
    for (int k = 0; k < LINE_CHUNK; ++k) in[k] = ahead[k];
    FETCH_AFTER(0, t0)
#pragma unroll
    for (int k = 0; k < LINE_CHUNK; ++k)
      if (t0 + k < LK) col[(t0 + k) * LINE_GROUP] = in[k];
  }
  for (int q = 0; q * LK < n; ++q) {
    float acc = MORPH_START;  // the block's suffixes, in place
#pragma unroll 8
    for (int t = LK - 1; t >= 0; --t) col[t * LINE_GROUP] = acc = OP(acc, col[t * LINE_GROUP]);
    const int next = (q + 1) * LK;  // the next block's first input row
    acc = MORPH_START;              // its prefix
    for (int t0 = 0; t0 < LK; t0 += LINE_CHUNK) {
      float in[LINE_CHUNK], other[LINE_CHUNK];
#pragma unroll
      for (int k = 0; k < LINE_CHUNK; ++k) in[k] = ahead[k];
      FETCH_AFTER(next, t0)
#pragma unroll
      for (int k = 0; k < LINE_CHUNK; ++k) {
        const int t = t0 + k, j = q * LK + t;  // output j: suffix t and the prefix to t - 1
        other[k] = combine && t < LK && j < n ? o[(base + j) * other_pitch + x] : 0.f;
      }
#pragma unroll
      for (int k = 0; k < LINE_CHUNK; ++k) {
        const int t = t0 + k, j = q * LK + t;
        if (t >= LK) break;
        float v = OP(col[t * LINE_GROUP], acc);
        acc = OP(acc, in[k]);
        col[t * LINE_GROUP] = in[k];
        if (combine) v = combine == 1 ? other[k] - v : v - other[k];
        if (j < n) d[(base + j) * dst_pitch + x] = v;
      }
    }
  }
#undef FETCH_AFTER
#undef AT
}
#undef LINE_GROUP
#elif LINE == 1
// A column: work-items side by side along x read side by side; the suffixes go to dst and are
// read back by the same work-item.
__kernel void morph_line(MORPH_ARGS) {
  const int i = get_global_id(0), block = get_global_id(1);
  if (i >= w || block * LK >= h) return;
  const int n = min(LK, h - block * LK), x = x0 + i, base = y0 + block * LK;
  const int gy = first_row + base;
  const bool inside = x >= 0 && x < width && gy - LR >= 0 && gy + LK - 1 + LR < image_rows;
  MORPH_PLANES(get_global_id(2))
  const int check = checked && !inside;
#define AT(t) \
  line_read(s, src_pitch, x, base + (t), width, first_row, image_rows, mode, value, check)
  float acc = MORPH_START;  // MORPH_START pads the chunks: it never wins
  for (int t0 = LK - 1; t0 >= 0; t0 -= LINE_CHUNK) {  // suffixes, t = LK - 1 down to 0
    float in[LINE_CHUNK];
#pragma unroll
    for (int k = 0; k < LINE_CHUNK; ++k) in[k] = t0 - k >= 0 ? AT(t0 - k - LR) : MORPH_START;
#pragma unroll
    for (int k = 0; k < LINE_CHUNK; ++k) {
      acc = OP(acc, in[k]);
      if (t0 - k >= 0 && t0 - k < n) d[(base + t0 - k) * dst_pitch + x] = acc;
    }
  }
  acc = MORPH_START;
  for (int t0 = 0; t0 < n; t0 += LINE_CHUNK) {  // prefixes from t = 1, with the suffixes
    float in[LINE_CHUNK], suffix[LINE_CHUNK], other[LINE_CHUNK];
#pragma unroll
    for (int k = 0; k < LINE_CHUNK; ++k) {
      const int t = t0 + k;
      in[k] = t > 0 && t < n ? AT(LR + t) : MORPH_START;
      suffix[k] = t < n ? d[(base + t) * dst_pitch + x] : MORPH_START;
      other[k] = combine && t < n ? o[(base + t) * other_pitch + x] : 0.f;
    }
#pragma unroll
    for (int k = 0; k < LINE_CHUNK; ++k) {
      acc = OP(acc, in[k]);
      float v = OP(suffix[k], acc);
      if (combine) v = combine == 1 ? other[k] - v : v - other[k];
      if (t0 + k < n) d[(base + t0 + k) * dst_pitch + x] = v;
    }
  }
#undef AT
}
#elif defined(ROW_TILE)
// A row (-D ROW_TILE, GPUs): a group of LG work-items owns ROW_TILE outputs of one row. Its
// segment of ROW_SPAN = ROW_TILE + 2 LR inputs is staged in __local by side-by-side reads, float4s
// where no border rule applies; the van Herk blocks of LK inputs start at the segment's first,
// and each is scanned in chunks of ROW_CHUNK (odd: side-by-side chunks fall on different banks),
// one chunk a work-item from registers, so that a whole group works at any LK. Each chunk takes
// its own suffixes (into suf) and prefixes (in place), then the extrema of the chunks before it in
// its block (into before) and after it (into after). Output q is the extremum of suffix q, the
// chunks after q's, prefix e = q + LK - 1 and the chunks before e's.
#define ROW_SPAN (ROW_TILE + 2 * LR)
#define ROW_CHUNKS_A_BLOCK ((LK + ROW_CHUNK - 1) / ROW_CHUNK)
#define ROW_CHUNKS (((ROW_SPAN + LK - 1) / LK) * ROW_CHUNKS_A_BLOCK)
#define ROW_CHUNKS_AN_ITEM ((ROW_CHUNKS + LG - 1) / LG)
// Chunk c's first input in the segment, and the chunk of input q.
#define ROW_CHUNK_START(c) \
  ((c) / ROW_CHUNKS_A_BLOCK * LK + (c) % ROW_CHUNKS_A_BLOCK * ROW_CHUNK)
#define ROW_CHUNK_OF(q) ((q) / LK * ROW_CHUNKS_A_BLOCK + (q) % LK / ROW_CHUNK)
__kernel __attribute__((reqd_work_group_size(LG, 1, 1))) void morph_line(MORPH_ARGS) {
  // pre and suf from (base - LR) & 3 floats into whole float4s, as line_stage_row4 stages them
  __local float4 pre4[ROW_SPAN / 4 + 2], suf4[ROW_SPAN / 4 + 2];
  __local float before[ROW_CHUNKS], after[ROW_CHUNKS];
  const int l = get_local_id(0), y = y0 + get_global_id(1), gy = first_row + y;
  const int base = x0 + get_group_id(0) * ROW_TILE;
  MORPH_PLANES(get_global_id(2))
  const bool inside =
      base - LR >= 0 && base - LR + ROW_SPAN <= width && gy >= 0 && gy < image_rows;
  const int check = checked && !inside;
  __local float* pre = (__local float*)pre4 + ((base - LR) & 3);
  __local float* suf = (__local float*)suf4 + ((base - LR) & 3);
  if (check)
    line_stage_row(pre, ROW_SPAN, s, src_pitch, base, y, x0 + w + LR, width, first_row,
                   image_rows, mode, value, check);
  else
    line_stage_row4((__local float*)pre4, ROW_SPAN, s, src_pitch, base - LR, y, x0 + w + LR);
#pragma unroll
  for (int n = 0; n < ROW_CHUNKS_AN_ITEM; ++n) {  // each chunk's own suffixes and prefixes
    const int c = l + n * LG, start = ROW_CHUNK_START(c);
    const int end = min(min(start + ROW_CHUNK, (c / ROW_CHUNKS_A_BLOCK + 1) * LK), ROW_SPAN);
    if (c >= ROW_CHUNKS) break;
    float v[ROW_CHUNK];
#pragma unroll
    for (int u = 0; u < ROW_CHUNK; ++u) v[u] = start + u < end ? pre[start + u] : MORPH_START;
    float acc = MORPH_START;
#pragma unroll
    for (int u = ROW_CHUNK - 1; u >= 0; --u) {
      acc = OP(acc, v[u]);
      if (start + u < end) suf[start + u] = acc;
    }
    acc = MORPH_START;
#pragma unroll
    for (int u = 0; u < ROW_CHUNK; ++u) {
      acc = OP(acc, v[u]);
      if (start + u < end) pre[start + u] = acc;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int n = 0; n < ROW_CHUNKS_AN_ITEM; ++n) {  // the extrema of the block's other chunks
    const int c = l + n * LG, start = ROW_CHUNK_START(c);
    const int block = start - c % ROW_CHUNKS_A_BLOCK * ROW_CHUNK;
    const int block_end = min(block + LK, ROW_SPAN);
    if (c >= ROW_CHUNKS) break;
    if (start >= ROW_SPAN) continue;  // past the segment: no output reads it
    float b = MORPH_START, a = MORPH_START;
    for (int t = block + ROW_CHUNK - 1; t < start; t += ROW_CHUNK) b = OP(b, pre[t]);  // last
    for (int t = start + ROW_CHUNK; t < block_end; t += ROW_CHUNK) a = OP(a, suf[t]);  // first
    before[c] = b;
    after[c] = a;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int q = l; q < ROW_TILE && base + q < x0 + w; q += LG) {
    const int e = q + LK - 1;
    float v = OP(OP(suf[q], after[ROW_CHUNK_OF(q)]), OP(pre[e], before[ROW_CHUNK_OF(e)]));
    if (combine) {
      const float other_value = o[y * other_pitch + base + q];
      v = combine == 1 ? other_value - v : v - other_value;
    }
    d[y * dst_pitch + base + q] = v;
  }
}
#else
// A row: a group of LG work-items owns LG * LK outputs of one row. The row's segment with its LR
// halo each side is staged in __local by side-by-side reads, each work-item takes its LK outputs'
// extrema there (a stride of LK floats, odd: no bank conflicts), and the group stores the results
// side by side.
__kernel __attribute__((reqd_work_group_size(LG, 1, 1))) void morph_line(MORPH_ARGS) {
  __local float seg[LG * LK + 2 * LR], res[LG * LK];
  const int l = get_local_id(0), j = get_global_id(1);
  const int base = x0 + get_group_id(0) * LG * LK, y = y0 + j, gy = first_row + y;
  MORPH_PLANES(get_global_id(2))
  const int count = LG * LK + 2 * LR;
  const bool inside = base - LR >= 0 && base - LR + count <= width && gy >= 0 && gy < image_rows;
  const int check = checked && !inside;
  line_stage_row(seg, count, s, src_pitch, base, y, x0 + w + LR, width, first_row, image_rows, mode,
                 value, check);
  const int start = l * LK;
  float acc = MORPH_START;
  for (int t = LK - 1; t >= 0; --t) {
    acc = OP(acc, seg[start + t]);
    res[start + t] = acc;
  }
  acc = MORPH_START;
  for (int t = 1; t < LK; ++t) {
    acc = OP(acc, seg[start + LK - 1 + t]);
    res[start + t] = OP(res[start + t], acc);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int q = l; q < LG * LK && base + q < x0 + w; q += LG) {
    float v = res[q];
    if (combine) {
      const float other_value = o[y * other_pitch + base + q];
      v = combine == 1 ? other_value - v : v - other_value;
    }
    d[y * dst_pitch + base + q] = v;
  }
}
#endif
#endif

#if defined(WALK)
// A rect read from the input in one pass (GPUs; -D WALK): a group of WG work-items owns WG columns
// and walks down `walk` blocks of RK = 2 RY + 1 output rows (the host's: fewer in a strip of few
// rows), reading each input row once. A batch of RK input rows is staged in __local (seg) and each
// row's extrema over 2 RX + 1 columns are taken there, 4 side by side a work-item sharing their
// common 2 RX - 2 (ext). Then each work-item goes down its column (van Herk / Gil-Werman): the
// suffix extrema of the previous batch's rows and the running prefix of this batch's give RK
// outputs, about three operations each whatever RY. -D WALK_PREFETCH (small radii): the next
// batch's loads are issued into registers before this batch's extrema are taken, and stored to
// __local after; without it each batch's loads are waited for (large radii, where those registers
// would leave room for too few groups).
#define RK (2 * RY + 1)
#define SEGW (WG + 2 * RX)         // staged floats a row
#define SEGP ((SEGW + 3) / 4 * 4)  // and its pitch, whole float4s
#define WALK_LOADS ((RK * SEGW + WG - 1) / WG)  // staged floats a work-item
// Work-item l's share of a batch: RK rows of SEGW floats from (sx0, sy0), those at or past
// (x_end, y_end) read as MORPH_START (they feed no stored output). One loop of constant bounds,
// unrolled: every load of the batch is in flight at once.
inline void walk_load(float* v, const __global float* s, int pitch, int sx0, int sy0, int x_end,
                      int y_end, int l) {
#pragma unroll
  for (int j = 0; j < WALK_LOADS; ++j) {
    const int i = l + j * WG, r = i / SEGW, q = i - r * SEGW;
    const int sx = sx0 + q, sy = sy0 + r;
    v[j] = i < RK * SEGW && sx < x_end && sy < y_end ? s[sy * pitch + sx] : MORPH_START;
  }
}
// And into the batch's rows in __local.
inline void walk_store(__local float* seg, const float* v, int l) {
#pragma unroll
  for (int j = 0; j < WALK_LOADS; ++j) {
    const int i = l + j * WG;
    if (i < RK * SEGW) seg[i / SEGW * SEGP + i % SEGW] = v[j];
  }
}

// A row's extrema at 4 outputs side by side from the 2 RX + 4 values (float4s in __local, from
// p4) their windows cover: the 2 RX - 2 every window holds taken once.
inline void walk_row4(const __local float4* p4, float* e) {
  float p[(2 * RX + 4 + 3) / 4 * 4];
#pragma unroll
  for (int t = 0; t < (2 * RX + 4 + 3) / 4; ++t) {
    const float4 v = p4[t];
    p[4 * t] = v.x, p[4 * t + 1] = v.y, p[4 * t + 2] = v.z, p[4 * t + 3] = v.w;
  }
  float core = MORPH_START;  // in every one of the 4 windows: p[3 .. 2 RX] (NaN never wins)
#pragma unroll
  for (int t = 3; t <= 2 * RX; ++t) core = OP(core, p[t]);
  const float a2 = OP(core, p[2]), a1 = OP(a2, p[1]);
  const float b1 = OP(core, p[2 * RX + 1]), b2 = OP(b1, p[2 * RX + 2]);
  e[0] = OP(a1, p[0]);
  e[1] = OP(a1, p[2 * RX + 1]);
  e[2] = OP(a2, b2);
  e[3] = OP(b2, p[2 * RX + 3]);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void morph_rect_walk(MORPH_ARGS,
                                                                          int walk) {
  __local float4 seg4[RK * SEGP / 4];
  __local float ext[RK * WG];
  __local float* seg = (__local float*)seg4;
  const int l = get_local_id(0), bx = get_group_id(0) * WG, by = get_group_id(1) * walk * RK;
  MORPH_PLANES(get_global_id(2))
  const int x = x0 + bx + l;
  float rows[RK];
#if defined(WALK_PREFETCH)
  float next[WALK_LOADS];  // the next batch's loads, in flight while this batch is computed
  walk_load(next, s, src_pitch, x0 + bx - RX, y0 + by - RY, x0 + w + RX, y0 + h + RY, l);
#endif
  for (int b = 0; b <= walk && by + (b - 1) * RK < h; ++b) {  // b = 0: the first block's top
    const int first = y0 + by - RY + b * RK;                  // the batch's first input row
    barrier(CLK_LOCAL_MEM_FENCE);                             // the last batch's reads are done
#if defined(WALK_PREFETCH)
    walk_store(seg, next, l);
    if (b < walk && by + b * RK < h)
      walk_load(next, s, src_pitch, x0 + bx - RX, first + RK, x0 + w + RX, y0 + h + RY, l);
#else
    {
      float v[WALK_LOADS];
      walk_load(v, s, src_pitch, x0 + bx - RX, first, x0 + w + RX, y0 + h + RY, l);
      walk_store(seg, v, l);
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int job = l; job < RK * (WG / 4); job += WG) {
      const int r = job / (WG / 4), g = job - r * (WG / 4);
      float e[4];  // columns bx + 4 g .. bx + 4 g + 3
      walk_row4(seg4 + (r * SEGP + 4 * g) / 4, e);
#pragma unroll
      for (int k = 0; k < 4; ++k) ext[r * WG + 4 * g + k] = e[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (b == 0) {
#pragma unroll
      for (int t = 0; t < RK; ++t) rows[t] = ext[t * WG + l];
      continue;
    }
    float suffix[RK], acc = MORPH_START;
#pragma unroll
    for (int t = RK - 1; t >= 0; --t) suffix[t] = acc = OP(acc, rows[t]);
    acc = MORPH_START;
    const int top = y0 + by + (b - 1) * RK;  // the block's first output row
#pragma unroll
    for (int t = 0; t < RK; ++t) {  // output t: suffix t and the prefix of rows 0 .. t - 1
      const float row = ext[t * WG + l];
      float v = t > 0 ? OP(suffix[t], acc) : suffix[0];
      acc = OP(acc, row);
      rows[t] = row;
      const int y = top + t;
      if (bx + l < w && y < y0 + h) {
        if (combine) {
          const float other_value = o[y * other_pitch + x];
          v = combine == 1 ? other_value - v : v - other_value;
        }
        d[y * dst_pitch + x] = v;
      }
    }
  }
}

// Columns first (morphology.walk_columns_min_radius): a group of WG work-items owns WG input
// columns, one each, and walks down `walk` blocks of RK rows. Each work-item loads a batch's RK
// rows of its column into registers (all in flight at once) and goes down them (van Herk, as
// above); the RK column extrema go to one of two __local buffers, so one barrier a batch: the
// buffer written next was last read before the barrier before. Then each output row's extrema over
// 2 RX + 1 of them, 4 outputs side by side a job sharing their common 2 RX - 2. A group stores WOUT
// outputs a row: its WG columns less the 2 RX its windows reach past, in whole float4s. Against the
// rows-first walk: no staged input rows, no __local row extrema, one barrier a batch in place of
// three; but 2 RX of every WG columns loaded for no output of their own.
#define WOUT ((WG - 2 * RX) / 4 * 4)
#if WOUT >= 4
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void morph_rect_walk_columns(
    MORPH_ARGS, int walk) {
  __local float4 cols4[2 * RK * WG / 4];
  const int l = get_local_id(0), bx = get_group_id(0) * WOUT, by = get_group_id(1) * walk * RK;
  MORPH_PLANES(get_global_id(2))
  const int sx = x0 + bx - RX + l;  // this work-item's input column
  const bool inside = sx < x0 + w + RX;
  float suffix[RK];
  for (int b = 0; b <= walk && by + (b - 1) * RK < h; ++b) {  // b = 0: the first block's top
    const int first = y0 + by - RY + b * RK;                  // the batch's first input row
    float v[RK];
#pragma unroll
    for (int t = 0; t < RK; ++t)
      v[t] = inside && first + t < y0 + h + RY ? s[(first + t) * src_pitch + sx] : MORPH_START;
    if (b > 0) {
      __local float* out = (__local float*)cols4 + (b & 1) * RK * WG + l;
      float acc = MORPH_START;
#pragma unroll
      for (int t = 0; t < RK; ++t) {  // output t: suffix t and the prefix of rows 0 .. t - 1
        out[t * WG] = t > 0 ? OP(suffix[t], acc) : suffix[0];
        acc = OP(acc, v[t]);
      }
    }
    float acc = MORPH_START;
#pragma unroll
    for (int t = RK - 1; t >= 0; --t) suffix[t] = acc = OP(acc, v[t]);
    if (b == 0) continue;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int top = y0 + by + (b - 1) * RK;  // the block's first output row
    for (int job = l; job < RK * (WOUT / 4); job += WG) {
      const int r = job / (WOUT / 4), g = job - r * (WOUT / 4);
      const int y = top + r, x = bx + 4 * g;
      if (y >= y0 + h || x >= w) continue;
      float e[4];
      walk_row4(cols4 + ((b & 1) * RK * WG + r * WG + 4 * g) / 4, e);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        if (x + k >= w) break;
        float val = e[k];
        if (combine) {
          const float other_value = o[y * other_pitch + x0 + x + k];
          val = combine == 1 ? other_value - val : val - other_value;
        }
        d[y * dst_pitch + x0 + x + k] = val;
      }
    }
  }
}
#endif
#undef WOUT
#undef RK
#undef SEGW
#undef SEGP
#undef WALK_LOADS
#endif
