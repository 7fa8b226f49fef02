// Fills the halo of a stage's input plane from the image's border rule, reading only pixels inside
// the image (which the previous stage or the upload wrote). Rows are plane-relative: row r is image
// row first_row + r; columns -hx..-1 and width..width+hx-1 are the horizontal halo.

// Whole halo rows (image row outside [0, height)), including their corners:
// global (width + 2hx, n, C).
__kernel void clf_pad_rows(__global float* buf, int origin, int pitch, int plane, int width,
                           int hx, int first_row, int height, int row_begin, int mode,
                           float value) {
  const int col = (int)get_global_id(0) - hx, r = row_begin + (int)get_global_id(1);
  const int c = get_global_id(2);
  if (col >= width + hx) return;
  __global float* p = buf + origin + c * plane;
  const int src_row = clf_border_interpolate(first_row + r, height, mode) - first_row;
  const int src_col = clf_border_interpolate(col, width, mode);
  p[r * pitch + col] =
      mode >= CLF_BORDER_CONSTANT ? clf_border_fill(mode, value) : p[src_row * pitch + src_col];
}

// Left and right halo columns of rows [row_begin, row_end) inside the image: global (2hx,
// row_end - row_begin, C) or more.
__kernel void clf_pad_cols(__global float* buf, int origin, int pitch, int plane, int width,
                           int hx, int row_begin, int row_end, int mode, float value) {
  const int i = get_global_id(0), r = row_begin + (int)get_global_id(1), c = get_global_id(2);
  if (i >= 2 * hx || r >= row_end) return;
  const int col = i < hx ? i - hx : width + i - hx;
  __global float* p = buf + origin + c * plane + r * pitch;
  p[col] = mode >= CLF_BORDER_CONSTANT ? clf_border_fill(mode, value)
                                     : p[clf_border_interpolate(col, width, mode)];
}
