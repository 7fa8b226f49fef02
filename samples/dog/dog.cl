// out = narrow - wide, per channel plane.
__kernel void dog_subtract(CLF_PLANE_IN(narrow), CLF_PLANE_IN(wide), CLF_PLANE(out), int width,
                           int rows) {
  const int x = get_global_id(0), y = get_global_id(1), c = get_global_id(2);
  if (x >= width || y >= rows) return;
  out[out_origin + c * out_plane + y * out_pitch + x] =
      narrow[narrow_origin + c * narrow_plane + y * narrow_pitch + x] -
      wide[wide_origin + c * wide_plane + y * wide_pitch + x];
}
