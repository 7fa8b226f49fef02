// out = in + amount * d, d = in - blurred, where abs(d) >= threshold (else out = in: OpenImageIO's
// unsharp_mask rule), per channel plane.
__kernel void unsharp_combine(CLF_PLANE_IN(in), CLF_PLANE_IN(blurred), CLF_PLANE(out), int width,
                              int rows, float amount, float threshold) {
  const int x = get_global_id(0), y = get_global_id(1), c = get_global_id(2);
  if (x >= width || y >= rows) return;
  const float v = in[in_origin + c * in_plane + y * in_pitch + x];
  const float d = v - blurred[blurred_origin + c * blurred_plane + y * blurred_pitch + x];
  out[out_origin + c * out_plane + y * out_pitch + x] = fabs(d) < threshold ? v : v + amount * d;
}
