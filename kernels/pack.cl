// Conversion between the host's interleaved native pixels and the device's float planes, compiled
// per pixel type with -D CLF_PIXEL=0 (u8), 1 (u16), 2 (f16) or 3 (f32). Transfers stay in the
// native type (u8 moves 4x fewer bytes than f32); rounding and saturation follow OpenCV.
#if CLF_PIXEL == 0
typedef uchar pixel_t;
#define LOAD(p, i) convert_float((p)[i])
#define STORE(p, i, v) ((p)[i] = convert_uchar_sat_rte(v))
#elif CLF_PIXEL == 1
typedef ushort pixel_t;
#define LOAD(p, i) convert_float((p)[i])
#define STORE(p, i, v) ((p)[i] = convert_ushort_sat_rte(v))
#elif CLF_PIXEL == 2
typedef half pixel_t;
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (i), (p))
#else
typedef float pixel_t;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#endif

// Interleaved rows (width x rows x channels) -> channel planes.
__kernel void clf_unpack(__global const pixel_t* src, int width, int rows, int channels,
                         __global float* dst, int dst_origin, int dst_pitch, int dst_plane) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= rows) return;
  const int in = (y * width + x) * channels;
  const int out = dst_origin + y * dst_pitch + x;
  for (int c = 0; c < channels; ++c) dst[out + c * dst_plane] = LOAD(src, in + c);
}

// Channel planes -> interleaved rows in the native type.
__kernel void clf_pack(__global const float* src, int src_origin, int src_pitch, int src_plane,
                       __global pixel_t* dst, int width, int rows, int channels) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= rows) return;
  const int in = src_origin + y * src_pitch + x;
  const int out = (y * width + x) * channels;
  for (int c = 0; c < channels; ++c) STORE(dst, out + c, src[in + c * src_plane]);
}
