// Lab kernels: candidate tiled/direct correlation layouts, compiled with -D RX -D RY -D TW -D TH -D WG.
#define KW (2 * RX + 1)
#define KH (2 * RY + 1)
#define LH (TH + 2 * RY)

__kernel void copy4(__global const float4* a, __global float4* b) { b[get_global_id(0)] = a[get_global_id(0)]; }

// ---- T1: the current kernel (scalar per-row staging, one column per work-item, TH rows).
#define LW1 (TW + 2 * RX)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void t1(
    __global const float* src, int origin, int pitch, __global float* dst, int dorigin, int dpitch,
    int width, int rows, __constant float* w) {
  __local float win[LH * LW1];
  const int tx0 = get_group_id(0) * TW, ty0 = get_group_id(1) * TH;
  const int ww = min(LW1, width + 2 * RX - tx0), hh = min(LH, rows + 2 * RY - ty0);
  event_t ev = 0;
  for (int r = 0; r < hh; ++r)
    ev = async_work_group_copy(win + r * LW1, src + origin + (ty0 - RY + r) * pitch + tx0 - RX, (size_t)ww, ev);
  wait_group_events(1, &ev);
  const int out_rows = min(TH, rows - ty0);
  for (int xo = get_local_id(0); xo < TW && tx0 + xo < width; xo += WG) {
    float acc[TH];
    for (int t = 0; t < TH; ++t) acc[t] = 0.f;
    for (int r = 0; r < LH; ++r) {
      float v[KW];
      for (int i = 0; i < KW; ++i) v[i] = win[r * LW1 + xo + i];
      for (int t = 0; t < TH; ++t) {
        const int j = r - t;
        if (j >= 0 && j < KH)
          for (int i = 0; i < KW; ++i) acc[t] += w[j * KW + i] * v[i];
      }
    }
    for (int t = 0; t < out_rows; ++t) dst[dorigin + (ty0 + t) * dpitch + tx0 + xo] = acc[t];
  }
}

// ---- float4 window: aligned start tx0 - HX, HX = RX rounded up to 4.
#define HX4 ((RX + 3) / 4)
#define HX (4 * HX4)
#define Q0 ((HX - RX) / 4)                 // first float4 a 4-output group needs, relative to its own
#define NQ ((HX + RX + 7) / 4 - Q0)        // float4s per row a 4-output group reads
#define OFF ((HX - RX) % 4)                // first needed float inside them

// EW-float elements for t5's async copies (EW = 4, 8, 16): its window starts EW-aligned.
#ifndef EW
#define EW 4
#endif
#define HXE (((RX + EW - 1) / EW) * EW)
#define Q0E ((HXE - RX) / 4)
#define NQE ((HXE + RX + 7) / 4 - Q0E)
#define OFFE ((HXE - RX) % 4)
#define NQ_MAX (NQ > NQE ? NQ : NQE)

// One window row r, as floats f (from f[off] on: the first one the 4-output group needs), into
// the TH accumulators it feeds.
inline void accumulate_row(const float* f, int r, int off, __constant float* w, float4* acc) {
#pragma unroll
  for (int t = 0; t < TH; ++t) {
    const int j = r - t;
    if (j >= 0 && j < KH)
#pragma unroll
      for (int i = 0; i < KW; ++i)
        acc[t] += w[j * KW + i] * (float4)(f[off + i], f[off + i + 1], f[off + i + 2], f[off + i + 3]);
  }
}

inline void spread4(float4 q, float* f) { f[0] = q.x; f[1] = q.y; f[2] = q.z; f[3] = q.w; }

inline void store4(__global float* dst, int dorigin, int dpitch, int x, int ty0, int width, int rows, float4* acc) {
  const int out_rows = min(TH, rows - ty0);
  if (x + 4 <= width) {
    for (int t = 0; t < out_rows; ++t) vstore4(acc[t], 0, dst + dorigin + (ty0 + t) * dpitch + x);
  } else {
    for (int t = 0; t < out_rows; ++t) {
      float a[4] = {acc[t].x, acc[t].y, acc[t].z, acc[t].w};
      for (int k = 0; k < width - x; ++k) dst[dorigin + (ty0 + t) * dpitch + x + k] = a[k];
    }
  }
}

// The tile's 4-output groups, work-item by work-item, from a local float4 window of lw4 float4s
// a row: each group's TH rows from nq float4s a row, starting q0 past its own (off: first float).
inline void tile4(__local const float4* win, int lw4, int q0, int nq, int off, __constant float* w,
                  __global float* dst, int dorigin, int dpitch, int tx0, int ty0, int width, int rows) {
  for (int l = get_local_id(0); l < TW / 4 && tx0 + 4 * l < width; l += WG) {
    float4 acc[TH];
    for (int t = 0; t < TH; ++t) acc[t] = 0.f;
#pragma unroll
    for (int r = 0; r < LH; ++r) {
      float f[4 * NQ_MAX];
#pragma unroll
      for (int k = 0; k < nq; ++k) spread4(win[r * lw4 + l + q0 + k], f + 4 * k);
      accumulate_row(f, r, off, w, acc);
    }
    store4(dst, dorigin, dpitch, tx0 + 4 * l, ty0, width, rows, acc);
  }
}

// T2: TW = 4*NT outputs per group (NT = TW/4 threads computing), async float4 copies per row.
#define LW4 (TW / 4 + 2 * HX4)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void t2(
    __global const float* src, int origin, int pitch, __global float* dst, int dorigin, int dpitch,
    int width, int rows, __constant float* w) {
  __local float4 win[LH * LW4];
  const int tx0 = get_group_id(0) * TW, ty0 = get_group_id(1) * TH;
  const __global float4* s4 = (const __global float4*)(src + origin + (ty0 - RY) * pitch + tx0 - HX);
  const int pitch4 = pitch / 4;
  const int n4 = min(LW4, (HX + width + RX - tx0 + 3) / 4), hh = min(LH, rows + 2 * RY - ty0);
  event_t ev = 0;
  for (int r = 0; r < hh; ++r) ev = async_work_group_copy(win + r * LW4, s4 + r * pitch4, (size_t)n4, ev);
  wait_group_events(1, &ev);
  tile4(win, LW4, Q0, NQ, OFF, w, dst, dorigin, dpitch, tx0, ty0, width, rows);
}

// T3: same window, staged by hand (plain loads, all of them issued before the stores) for the bound.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void t3(
    __global const float* src, int origin, int pitch, __global float* dst, int dorigin, int dpitch,
    int width, int rows, __constant float* w) {
  __local float4 win[LH * LW4];
  const int tx0 = get_group_id(0) * TW, ty0 = get_group_id(1) * TH;
  const __global float4* s4 = (const __global float4*)(src + origin + (ty0 - RY) * pitch + tx0 - HX);
  const int pitch4 = pitch / 4;
  const int n4 = min(LW4, (HX + width + RX - tx0 + 3) / 4), hh = min(LH, rows + 2 * RY - ty0);
  const int total = n4 * hh;
#define PER ((LH * LW4 + WG - 1) / WG)
  float4 tmp[PER];
#pragma unroll
  for (int k = 0; k < PER; ++k) {
    const int idx = get_local_id(0) + k * WG;
    if (idx < total) tmp[k] = s4[(idx / n4) * pitch4 + idx % n4];
  }
#pragma unroll
  for (int k = 0; k < PER; ++k) {
    const int idx = get_local_id(0) + k * WG;
    if (idx < total) win[(idx / n4) * LW4 + idx % n4] = tmp[k];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  tile4(win, LW4, Q0, NQ, OFF, w, dst, dorigin, dpitch, tx0, ty0, width, rows);
}

// T4: direct, 4 columns x TH rows per work-item from aligned global float4 loads (no local memory).
__kernel void t4(__global const float* src, int origin, int pitch, __global float* dst, int dorigin,
                 int dpitch, int width, int rows, __constant float* w) {
  const int l = get_global_id(0), ty0 = get_global_id(1) * TH;
  const int x = 4 * l;
  if (x >= width || ty0 >= rows) return;
  const __global float4* s4 = (const __global float4*)(src + origin + (ty0 - RY) * pitch + x - HX);
  const int pitch4 = pitch / 4;
  float4 acc[TH];
  for (int t = 0; t < TH; ++t) acc[t] = 0.f;
#pragma unroll
  for (int r = 0; r < LH; ++r) {
    float f[4 * NQ];
#pragma unroll
    for (int k = 0; k < NQ; ++k) spread4(s4[r * pitch4 + Q0 + k], f + 4 * k);
    accumulate_row(f, r, OFF, w, acc);
  }
  store4(dst, dorigin, dpitch, x, ty0, width, rows, acc);
}

// T5: t2 with EW-float elements per async copy (EW = 4, 8, 16): the window starts EW-aligned.
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
typedef CAT(float, EW) floatE;
#define LWE (TW / EW + 2 * HXE / EW)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void t5(
    __global const float* src, int origin, int pitch, __global float* dst, int dorigin, int dpitch,
    int width, int rows, __constant float* w) {
  __local floatE winE[LH * LWE];
  const int tx0 = get_group_id(0) * TW, ty0 = get_group_id(1) * TH;
  const __global floatE* sE = (const __global floatE*)(src + origin + (ty0 - RY) * pitch + tx0 - HXE);
  const int pitchE = pitch / EW;
  const int nE = min(LWE, (HXE + width + RX - tx0 + EW - 1) / EW), hh = min(LH, rows + 2 * RY - ty0);
  event_t ev = 0;
  for (int r = 0; r < hh; ++r) ev = async_work_group_copy(winE + r * LWE, sE + r * pitchE, (size_t)nE, ev);
  wait_group_events(1, &ev);
  __local const float4* win = (__local const float4*)winE;
  const int lw4 = LWE * EW / 4;
  tile4(win, lw4, Q0E, NQE, OFFE, w, dst, dorigin, dpitch, tx0, ty0, width, rows);
}
