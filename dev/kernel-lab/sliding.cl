// Sliding-window lab kernel (dev/kernel-lab/columns.cpp runs it for a variant "sGWxHxBxVW"): the
// separable single pass of radius R with the column pass walking down a strip of H output rows.
// A group is GW work-items across, VW floats each (its halo included); each keeps the last 2R rows
// of its column in registers, so every input row is read once per strip, not once per tile.
// Every B rows it writes the column sums to one of two __local buffers, loads the next B rows, and
// after one barrier the row pass reads 8-wide windows from the buffer and stores. Switches: PD=n
// (load n batches ahead), RESTRICT (restrict pointers), NOCOL / NOROW (a pass's multiply-adds
// left out). The product's clf_separable_columns (kernels/correlate/separable_columns.clh) grew from this one.
#define KW (2 * R + 1)
typedef struct { float w[KW]; } taps;
#if VW == 1
#define T float
#elif VW == 2
#define T float2
#else
#define T float4
#endif
#define H4 ((R + 3) / 4)
#define CW (GW * VW / 4)
#define OW (CW - 2 * H4)
#define NP (OW / 2)
#define OFF (4 * H4 - R)
#define NQ8 ((OFF + 2 * R + 7) / 4 + 1)
#define HALF (CW / 2 + 4)
#define RS (HALF + CW / 2)
#define IDX(c) (((c) & 1) * HALF + ((c) >> 1))

#include "row8.clh"

#ifndef PD
#define PD 1
#endif
#if defined(RESTRICT)
#define RQ restrict
#else
#define RQ
#endif
#define NW (2 * R + PD * B)

__kernel __attribute__((reqd_work_group_size(GW, 1, 1))) void sw(
    __global const float* RQ src, int origin, int pitch, __global float4* RQ dst, int w4, int rows,
    taps wx, taps wy) {
  __local float4 buf[2 * B * RS];
  const int lid = get_local_id(0);
  const int gx = get_group_id(0), y0 = get_group_id(1) * H;
  const int g0 = gx * OW - H4;  // float4 column of the group's first work-item
  const int pitchT = pitch / VW;
  const __global T* s =
      (const __global T*)(src + origin + (y0 - R) * pitch + 4 * g0) + lid;
  T win[NW];
#pragma unroll
  for (int i = 0; i < NW; ++i) win[i] = s[i * pitchT];
  s += NW * pitchT;
  // where this work-item's VW floats go in a row of the buffer
  const int px = lid * VW, c = px >> 2;
  __local float* mine = (__local float*)buf + 4 * IDX(c) + (px & 3);
  for (int k = 0; k < H / B; ++k) {
    __local float* L = mine + (k & 1) * B * RS * 4;
#pragma unroll
    for (int b = 0; b < B; ++b) {
      T a = 0.f;
#if defined(NOCOL)
      a = win[b + R];
#else
#pragma unroll
      for (int j = 0; j < KW; ++j) a += wy.w[j] * win[b + j];
#endif
#if VW == 1
      L[b * RS * 4] = a;
#elif VW == 2
      *(__local float2*)(L + b * RS * 4) = a;
#else
      *(__local float4*)(L + b * RS * 4) = a;
#endif
    }
#pragma unroll
    for (int i = 0; i < NW - B; ++i) win[i] = win[i + B];
    if (k + PD < H / B) {
#pragma unroll
      for (int i = 0; i < B; ++i) win[NW - B + i] = s[i * pitchT];
      s += B * pitchT;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const __local float4* Lb = buf + (k & 1) * B * RS;
    for (int u = lid; u < NP * B; u += GW) {
      const int pl = u % NP, t = u / NP;
      const int go = gx * OW + 2 * pl;
      if (go >= w4) continue;
      const __local float4* row = Lb + t * RS;
      float4 a, bb;
      lab_row8(row, 2 * pl, wx, &a, &bb);
      __global float4* d = dst + (y0 + k * B + t) * w4 + go;
      d[0] = a;
      if (go + 1 < w4) d[1] = bb;
    }
  }
}
