// The Gaussian's method=fast: a multirate blur. The Gaussian of sigma is the Gaussian of sigma_1
// (prefilter), then of sigma_2, then of sigma_3 (reconstruction), with sigma_1^2 + sigma_2^2 +
// sigma_3^2 = sigma^2. After the prefilter (sigma_1 = D) the image holds almost nothing above
// 1 / D cycles per pixel, so it is sampled every D pixels; the middle blur runs on that coarse
// grid, and a Gaussian of sigma_3 = D centred on each coarse sample brings it back. Aliasing
// costs exp(-2 pi^2 (sigma_1 / D)^2) = 3e-9 of the signal at each change of rate, and cutting
// each Gaussian at 4 sigma the rest: the 1-D kernel differs from the exact one by at most 1.2e-4
// in L1, so the 2-D result by 2.4e-4 of the value range (method=fast states 0.025%). Per axis:
//   down:  v[J] = sum_k g1[k] x[D J + k]            k in [-4D, 4D], the grid anchored at pixel 0
//   blur:  s[J] = sum_m g2[m] v[J + m]              on the coarse grid
//   up:    y[D b + p] = sum_t w[p][t] s[b + t]      t in [-T, T + 1], w[p] a Gaussian of D
//                                                   sampled at p - D t, normalised
// -D MR_D=d (a power of two, the decimation), MR_T (the up taps each side), MR_NB and MR_NH (coarse
// rows per work-item of mr_down_v, columns of mr_down_h): one program per D.
// Each output's taps are summed in one order whatever the strip, so strips give the whole
// image's bits.
#define MR_R1 (4 * MR_D)
#define MR_K1 (2 * MR_R1 + 1)  // prefilter taps
#define MR_NUP (2 * MR_T + 2)  // coarse samples an output reads

typedef struct {
  float w[MR_K1];
} mr_down_taps;
typedef struct {
  float w[MR_D * MR_NUP];  // phase p's taps at w[p * MR_NUP]
} mr_up_taps;

// dst row r = the prefilter down the columns centred on src row y_base + D r, over `cols`
// columns from src column x_base, for `rows` rows. MR_NB rows per work-item: the window rows they
// share are read once (on the H100, 4 rows took half the time of 1).
__kernel void mr_down_v(CLF_PLANE_IN(src), CLF_PLANE(dst), int y_base, int x_base, int cols,
                        int rows, mr_down_taps g) {
  const int x = get_global_id(0), r0 = get_global_id(1) * MR_NB, c = get_global_id(2);
  if (x >= cols || r0 >= rows) return;
  const __global float* s =
      src + src_origin + c * src_plane + (y_base + MR_D * r0 - MR_R1) * src_pitch + x_base + x;
  const int outs = min(MR_NB, rows - r0), reads = (outs - 1) * MR_D + MR_K1;
  float acc[MR_NB];
  for (int o = 0; o < MR_NB; ++o) acc[o] = 0.f;
#pragma unroll
  for (int k = 0; k < (MR_NB - 1) * MR_D + MR_K1; ++k) {
    const float v = k < reads ? s[k * src_pitch] : 0.f;
#pragma unroll
    for (int o = 0; o < MR_NB; ++o) {
      const int tap = k - o * MR_D;
      if (tap >= 0 && tap < MR_K1) acc[o] += g.w[tap] * v;
    }
  }
  __global float* d = dst + dst_origin + c * dst_plane + r0 * dst_pitch + x;
#pragma unroll
  for (int o = 0; o < MR_NB; ++o)  // literal indices: acc stays in registers
    if (o < outs) d[o * dst_pitch] = acc[o];
}

// dst column i = the prefilter along the rows centred on src column D i + 4D (src column 0 is
// the first one the first window reads). MR_NH columns per work-item from the float4s of their
// windows (src's origin and pitch are multiples of 4, as is D MR_NH): each float4 feeds every
// sum it reaches.
#define MR_QH (((MR_NH - 1) * MR_D + MR_K1 + 3) / 4)  // float4s the windows span
__kernel void mr_down_h(CLF_PLANE_IN(src), CLF_PLANE(dst), int cols, int rows, mr_down_taps g) {
  const int i0 = get_global_id(0) * MR_NH, r = get_global_id(1), c = get_global_id(2);
  if (i0 >= cols || r >= rows) return;
  const __global float4* s =
      (const __global float4*)(src + src_origin + c * src_plane + r * src_pitch + MR_D * i0);
  const int outs = min(MR_NH, cols - i0), reads = (outs - 1) * MR_D + MR_K1;
  float acc[MR_NH];
  for (int o = 0; o < MR_NH; ++o) acc[o] = 0.f;
#pragma unroll
  for (int q = 0; q < MR_QH; ++q) {
    const float4 v4 = 4 * q < reads ? s[q] : 0.f;  // the row's last float4 may be partly past it
    const float v[4] = {v4.x, v4.y, v4.z, v4.w};
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int o = 0; o < MR_NH; ++o) {
        const int tap = 4 * q + u - o * MR_D;
        if (tap >= 0 && tap < MR_K1) acc[o] += g.w[tap] * v[u];
      }
  }
  __global float* d = dst + dst_origin + c * dst_plane + r * dst_pitch + i0;
#pragma unroll
  for (int o = 0; o < MR_NH; ++o)
    if (o < outs) d[o] = acc[o];
}

// The coarse blur, 2 r + 1 taps: dst(i, j) = sum_m w[m] src(i, j + m) (down the columns, vertical
// != 0) or src(i + m, j) (along the rows).
__kernel void mr_blur(CLF_PLANE_IN(src), CLF_PLANE(dst), int cols, int rows, int r, int vertical,
                      __constant float* w) {
  const int i = get_global_id(0), j = get_global_id(1), c = get_global_id(2);
  if (i >= cols || j >= rows) return;
  const __global float* s = src + src_origin + c * src_plane + j * src_pitch + i;
  const int step = vertical ? src_pitch : 1;
  float acc = 0.f;
  for (int m = 0; m <= 2 * r; ++m) acc += w[m] * s[m * step];
  dst[dst_origin + c * dst_plane + j * dst_pitch + i] = acc;
}

// The D phases of one coarse sample b: out[p] = sum_t w[p NUP + t] s[t stride] over the 2T + 2
// samples b - T .. b + T + 1 from s, `stride` floats apart (a row down the columns, 1 along the
// rows). Literal indices after unrolling: e and out stay in registers.
inline void mr_up_phases(const __global float* s, int stride, mr_up_taps w, float* out) {
  float e[MR_NUP];
#pragma unroll
  for (int t = 0; t < MR_NUP; ++t) e[t] = s[t * stride];
#pragma unroll
  for (int p = 0; p < MR_D; ++p) {
    float acc = 0.f;
#pragma unroll
    for (int t = 0; t < MR_NUP; ++t) acc += w.w[p * MR_NUP + t] * e[t];
    out[p] = acc;
  }
}

// Up the columns: dst row y (of `rows`) from coarse rows; work-item q owns the D rows from
// y_first + D q (phase 0, coarse sample b) and reads src rows q .. q + 2T + 1 (samples b - T ..
// b + T + 1).
__kernel void mr_up_v(CLF_PLANE_IN(src), CLF_PLANE(dst), int cols, int rows, int y_first,
                      mr_up_taps w) {
  const int i = get_global_id(0), q = get_global_id(1), c = get_global_id(2);
  const int y0 = y_first + MR_D * q;
  if (i >= cols || y0 >= rows) return;
  float out[MR_D];
  mr_up_phases(src + src_origin + c * src_plane + q * src_pitch + i, src_pitch, w, out);
  __global float* d = dst + dst_origin + c * dst_plane + i;
#pragma unroll
  for (int p = 0; p < MR_D; ++p)
    if (y0 + p >= 0 && y0 + p < rows) d[(y0 + p) * dst_pitch] = out[p];
}

// Along the rows: dst columns D b .. D b + D - 1 (of `width`) from src columns b .. b + 2T + 1.
// On GPUs (groups of 64 work-items, one row: the launch's local size) the group's 64 D outputs go
// through __local (one float of padding per 32 against bank conflicts), so that the stores of a
// warp are consecutive floats rather than D-float runs 4 D floats apart (several times faster on
// the H100). CPUs (-D MR_PLAIN) store each work-item's run, as their caches want, with no
// barrier (which splits the kernel's loop there).
#define MR_PAD(k) ((k) + (k) / 32)
__kernel
#if !defined(MR_PLAIN)
__attribute__((reqd_work_group_size(64, 1, 1)))
#endif
void mr_up_h(CLF_PLANE_IN(src), CLF_PLANE(dst), int width, int rows, mr_up_taps w) {
  const int b = get_global_id(0), y = get_global_id(1), c = get_global_id(2);
  if (y >= rows) return;  // the whole group: it spans one row
  float out[MR_D];
  const bool live = MR_D * b < width;
  if (live) mr_up_phases(src + src_origin + c * src_plane + y * src_pitch + b, 1, w, out);
  __global float* d = dst + dst_origin + c * dst_plane + y * dst_pitch;
#if defined(MR_PLAIN)
  if (!live) return;
#pragma unroll
  for (int p = 0; p < MR_D; ++p)  // literal indices: out stays in registers
    if (MR_D * b + p < width) d[MR_D * b + p] = out[p];
#else
  __local float tile[MR_PAD(64 * MR_D)];
  const int l = get_local_id(0);
  if (live) {
#pragma unroll
    for (int p = 0; p < MR_D; ++p) tile[MR_PAD(l * MR_D + p)] = out[p];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int x0 = MR_D * 64 * (int)get_group_id(0);
#pragma unroll
  for (int j = 0; j < MR_D; ++j)
    if (x0 + 64 * j + l < width) d[x0 + 64 * j + l] = tile[MR_PAD(64 * j + l)];
#endif
}
