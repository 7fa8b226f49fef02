// Columns-first lab kernels (dev/kernel-lab/columns.cpp runs them): copy4, and cf, the separable
// single pass of radius R (-D R), CW float4 columns and TH rows a group (the halo's included), LYC
// rows per work-item in the column pass, 8 outputs per work-item in the row pass. Switches:
// LIN (row pass work-items over pairs and rows as one index), STEPS=n (tiles a group marches down),
// ROW16 (16 outputs per work-item), F2 (float2 columns), YFIRST (groups down the columns first),
// CLAMP (window rows clamped to the plane, as the product's kernel), VST (vstore4 on a float
// pointer), NOCOL / NOROW (a pass's multiply-adds left out), STORE1 (one of the two stores).
#define KW (2 * R + 1)
typedef struct { float w[KW]; } taps;
#define H4 ((R + 3) / 4)
#if defined(ROW16)
#define OW ((CW - 2 * H4) & ~3)
#define NQ16 ((OFF + 2 * R + 15) / 4 + 1)
#define NP (OW / 4)
#else
#define OW (CW - 2 * H4)
#define NP (OW / 2)
#endif
#define OFF (4 * H4 - R)
#define NQ8 ((OFF + 2 * R + 7) / 4 + 1)
#if defined(F2)
#define WG (2 * CW * TH / LYC)
#else
#define WG (CW * TH / LYC)
#endif
#if NP > 32
#define LPR (32 * ((NP + 31) / 32))
#elif NP > 16
#define LPR 32
#elif NP > 8
#define LPR 16
#else
#define LPR 8
#endif
#if defined(ROW16)
#define QQ (CW / 4 + 2)
#define RS (4 * QQ)
#define IDX(c) (((c) & 3) * QQ + ((c) >> 2))
#else
#define HALF (CW / 2 + 4)
#define RS (HALF + CW / 2)
#define IDX(c) (((c) & 1) * HALF + ((c) >> 1))
#endif

#include "row8.clh"

__kernel void copy4(__global const float4* src, int origin, int pitch4, __global float4* dst,
                    int w4) {
  const int x = get_global_id(0), y = get_global_id(1);
  dst[y * w4 + x] = src[origin + y * pitch4 + x];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void cf(
    __global const float4* src, int origin, int pitch4, __global float4* dst, int w4, int rows,
    taps wx, taps wy) {
  __local float4 col[TH * RS];
  const int lid = get_local_id(0);
#ifndef STEPS
#define STEPS 1
#endif
#if defined(YFIRST)
  const int gl = get_group_id(0) + get_group_id(1) * get_num_groups(0);
  const int gxi = gl / get_num_groups(1), gyi = gl % get_num_groups(1);
#else
  const int gxi = get_group_id(0), gyi = get_group_id(1);
#endif
  const int g0 = gxi * OW - H4;
  for (int step = 0; step < STEPS; ++step) {
  const int y0 = (gyi * STEPS + step) * TH;
  if (step > 0) barrier(CLK_LOCAL_MEM_FENCE);
#if defined(F2)
  {
    const int cx2 = lid % (2 * CW), cb = lid / (2 * CW);
    const __global float2* s2 = (const __global float2*)(src + origin + (y0 + cb * LYC - R) * pitch4 + g0) + cx2;
    float2 acc[LYC];
    for (int t = 0; t < LYC; ++t) acc[t] = 0.f;
#pragma unroll
    for (int r = 0; r < LYC + 2 * R; ++r) {
      const float2 v = s2[r * 2 * pitch4];
#pragma unroll
      for (int t = 0; t < LYC; ++t) {
        const int j = r - t;
        if (j >= 0 && j < KW) acc[t] += wy.w[j] * v;
      }
    }
    for (int t = 0; t < LYC; ++t)
      ((__local float2*)(col + (cb * LYC + t) * RS + IDX(cx2 >> 1)))[cx2 & 1] = acc[t];
  }
#else
  {
    const int cx = lid % CW, cb = lid / CW;
    const __global float4* s = src + origin + (y0 + cb * LYC - R) * pitch4 + g0 + cx;
    const int last = rows + 2 * R - 1 - (y0 + cb * LYC);
    float4 acc[LYC];
    for (int t = 0; t < LYC; ++t) acc[t] = 0.f;
    float4 tot = 0.f;
#pragma unroll
    for (int r = 0; r < LYC + 2 * R; ++r) {
#if defined(CLAMP)
      const float4 v = s[min(r, last) * pitch4];
#else
      const float4 v = s[r * pitch4];
#endif
#if defined(NOCOL)
      tot += v;
      continue;
#endif
#pragma unroll
      for (int t = 0; t < LYC; ++t) {
        const int j = r - t;
        if (j >= 0 && j < KW) acc[t] += wy.w[j] * v;
      }
    }
#if defined(NOCOL)
    for (int t = 0; t < LYC; ++t) acc[t] = tot + (float)t;
#endif
    for (int t = 0; t < LYC; ++t) col[(cb * LYC + t) * RS + IDX(cx)] = acc[t];
  }
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
#if defined(LIN)
  for (int u = lid; u < NP * TH; u += WG) {
    const int pl = u % NP, t = u / NP;
    const int go = gxi * OW + 2 * pl;
    if (go >= w4) continue;
#else
  const int pl = lid % LPR, rg = lid / LPR;
  const int go = gxi * OW + (NP == OW / 2 ? 2 : 4) * pl;
  if (pl < NP && go < w4)
  for (int t = rg; t < TH; t += WG / LPR) {
#endif
    const __local float4* row = col + t * RS;
#if !defined(ROW16)
    float4 a, b;
    lab_row8(row, 2 * pl, wx, &a, &b);
#else
    float o[16];
#pragma unroll
    for (int m = 0; m < 16; ++m) o[m] = 0.f;
#pragma unroll
    for (int k = 0; k < NQ16; ++k) {
      const float4 q = row[IDX(4 * pl + k)];
      const float e[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int i = 4 * k + u - OFF;
#pragma unroll
        for (int m = 0; m < 16; ++m)
          if (i - m >= 0 && i - m < KW) o[m] += wx.w[i - m] * e[u];
      }
    }
    __global float4* d = dst + (y0 + t) * w4 + go;
    d[0] = (float4)(o[0], o[1], o[2], o[3]);
    if (go + 1 < w4) d[1] = (float4)(o[4], o[5], o[6], o[7]);
    if (go + 2 < w4) d[2] = (float4)(o[8], o[9], o[10], o[11]);
    if (go + 3 < w4) d[3] = (float4)(o[12], o[13], o[14], o[15]);
#endif
#if !defined(ROW16)
    __global float4* d = dst + (y0 + t) * w4 + go;
#if defined(STORE1)
    d[0] = a + b;
#elif defined(VST)
    __global float* df = (__global float*)d;
    if (4 * go + 4 <= 4 * w4) vstore4(a, 0, df);
    if (go + 1 < w4) vstore4(b, 1, df);
#else
    d[0] = a;
    if (go + 1 < w4) d[1] = b;
#endif
#endif
  }
  }
}
