// emboss: out = in + strength * (bottom-right minus top-left neighbours), a relief lit from the
// top left. The 3x3 window is staged with clfilter's shared helper clf_stage_window (prepended by
// Device::build with the rest of the kernel prelude); built with -D TW/TH/WG from choose_tiling.
#define R 1
#define HX CLF_HALO4(R)             // the staged window starts on a float4: HX >= R columns left
#define WIN_W4 (TW / 4 + 2 * HX / 4)  // window row in float4s
#define WIN_W (4 * WIN_W4)            // ... and in floats
#define WIN_H (TH + 2 * R)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void emboss(CLF_PLANE_IN(src),
                                                                     CLF_PLANE(dst), int width,
                                                                     int rows, float strength) {
  __local float4 staged_rows[WIN_H * WIN_W4];
  const int tx0 = get_group_id(0) * TW, ty0 = get_group_id(1) * TH, c = get_group_id(2);
  const event_t staged =
      clf_stage_window(staged_rows, WIN_W4, WIN_H, src + src_origin + c * src_plane, src_pitch,
                       tx0 - HX, ty0 - R, width + R + HX - tx0, rows + 2 * R - ty0);
  __global float* d = dst + dst_origin + c * dst_plane;
  clf_stage_wait(staged);
  // win[(t + 1) * WIN_W + xo] is the input pixel of output (tx0 + xo, ty0 + t).
  const __local float* win = (const __local float*)staged_rows + HX;
  for (int xo = get_local_id(0); xo < TW && tx0 + xo < width; xo += WG)
    for (int t = 0; t < TH && ty0 + t < rows; ++t) {
      const float centre = win[(t + 1) * WIN_W + xo];
      const float relief = win[(t + 2) * WIN_W + xo + 1] + 0.5f * (win[(t + 2) * WIN_W + xo] +
                           win[(t + 1) * WIN_W + xo + 1]) - win[t * WIN_W + xo - 1] -
                           0.5f * (win[t * WIN_W + xo] + win[(t + 1) * WIN_W + xo - 1]);
      d[(ty0 + t) * dst_pitch + tx0 + xo] = centre + strength * relief;
    }
}
