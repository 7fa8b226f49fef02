// One box pass of the Gaussian's method=fast: dst = the mean of the 2r + 1 samples of src
// centred on each output along one axis), over the rectangle [x0, x0 + w) x [y0, y0 + h), which may
// reach into the halo (src holds r more samples on each side of it along the axis). Each
// work-item computes `seg` consecutive outputs with a running sum: the sample entering the window
// is added, the one leaving subtracted, so an output costs two reads whatever r is (plus the
// first window, (2r + 1) / seg reads per output). r is an argument: one program for every sigma.
//
// The sums are kept in double where the device has it: a double holds the sum of a window of floats
// exactly when their exponents span under 2^29 (every u8, u16 and half image, and float images in
// [0, 1] down to 1e-7), and an exact sum does not depend on where a work-item's run began. So the
// strip layout, which moves where runs begin, changes no bit of the result.
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double box_sum;
#else
typedef float box_sum;  // a strip layout may change the last bits
#endif

__kernel void box_pass_y(CLF_PLANE_IN(src), CLF_PLANE(dst), int x0, int y0, int w, int h, int r,
                         int seg) {
  const box_sum scale = (box_sum)1 / (box_sum)(2 * r + 1);
  const int x = x0 + (int)get_global_id(0), y_begin = y0 + (int)get_global_id(1) * seg;
  const int c = get_global_id(2);
  if (x >= x0 + w || y_begin >= y0 + h) return;
  const __global float* s = src + src_origin + c * src_plane + x;
  __global float* d = dst + dst_origin + c * dst_plane + x;
  const int y_end = min(y_begin + seg, y0 + h);
  box_sum sum = 0;
  for (int i = -r; i <= r; ++i) sum += s[(y_begin + i) * src_pitch];
  d[y_begin * dst_pitch] = (float)(sum * scale);
  for (int y = y_begin + 1; y < y_end; ++y) {
    sum += (box_sum)s[(y + r) * src_pitch] - (box_sum)s[(y - r - 1) * src_pitch];
    d[y * dst_pitch] = (float)(sum * scale);
  }
}

__kernel void box_pass_x(CLF_PLANE_IN(src), CLF_PLANE(dst), int x0, int y0, int w, int h, int r,
                         int seg) {
  const box_sum scale = (box_sum)1 / (box_sum)(2 * r + 1);
  const int x_begin = x0 + (int)get_global_id(0) * seg, y = y0 + (int)get_global_id(1);
  const int c = get_global_id(2);
  if (x_begin >= x0 + w || y >= y0 + h) return;
  const __global float* s = src + src_origin + c * src_plane + y * src_pitch;
  __global float* d = dst + dst_origin + c * dst_plane + y * dst_pitch;
  const int x_end = min(x_begin + seg, x0 + w);
  box_sum sum = 0;
  for (int i = -r; i <= r; ++i) sum += s[x_begin + i];
  d[x_begin] = (float)(sum * scale);
  for (int x = x_begin + 1; x < x_end; ++x) {
    sum += (box_sum)s[x + r] - (box_sum)s[x - r - 1];
    d[x] = (float)(sum * scale);
  }
}
