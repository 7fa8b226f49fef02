// Overlap-save correlation by FFT (core/src/fft.cpp): the stage's input cut into blocks of BX x BY
// floats that overlap by 2 rx columns and 2 ry rows, transformed, multiplied by the window's
// spectrum, transformed back; each block gives its vx x vy middle outputs (vx = BX - 2 rx). The
// block size is built in (-D BX, BY, ROW); the window's radii are arguments, so one program serves
// every window of a block size.
// A block is laid out as VkFFT's in-place real transform wants it: BY rows of ROW floats
// (2 (BX / 2 + 1), room for the half spectrum). The buffer holds the blocks of one launch: blocks
// side by side along a row of blocks, the first at column x0 and row y0.
#define CLF_BLOCK_FLOATS (ROW * BY)

// Block k of a launch: input columns x0 + k vx - rx .. + BX and rows y0 - ry .. + BY of channel
// c, zero past the input's valid window (they only reach outputs that are thrown away).
__kernel void clf_fft_gather(CLF_PLANE_IN(src), int width, int rows, int rx, int ry, int c, int x0,
                             int y0, __global float* out) {
  const int i = get_global_id(0), j = get_global_id(1), k = get_global_id(2);
  const int x = x0 + k * (BX - 2 * rx) + i - rx, y = y0 + j - ry;
  if (i < ROW && j < BY) {
    const bool inside = i < BX && x < width + rx && y < rows + ry;
    out[(size_t)k * CLF_BLOCK_FLOATS + j * ROW + i] =
        inside ? src[src_origin + c * src_plane + y * src_pitch + x] : 0.f;
  }
}

// Every block's half spectrum times the window's (one block's worth: BY rows of ROW / 2 complex
// values), times the inverse transform's 1 / (BX BY).
__kernel void clf_fft_multiply(__global float2* blocks, __global const float2* window,
                               float scale) {
  const int u = get_global_id(0), v = get_global_id(1), k = get_global_id(2);
  if (u < ROW / 2 && v < BY) {
    const float2 w = window[v * (ROW / 2) + u] * scale;
    __global float2* p = blocks + (size_t)k * (CLF_BLOCK_FLOATS / 2) + v * (ROW / 2) + u;
    const float2 a = *p;
    *p = (float2)(a.x * w.x - a.y * w.y, a.x * w.y + a.y * w.x);
  }
}

// The middle vx x vy of each block into the output plane, plus delta.
__kernel void clf_fft_scatter(__global const float* in, int rx, int ry, int c, int x0, int y0,
                              CLF_PLANE(dst), int width, int rows, float delta) {
  const int i = get_global_id(0), j = get_global_id(1), k = get_global_id(2);
  const int vx = BX - 2 * rx, vy = BY - 2 * ry;
  const int x = x0 + k * vx + i, y = y0 + j;
  if (i < vx && j < vy && x < width && y < rows)
    dst[dst_origin + c * dst_plane + y * dst_pitch + x] =
        in[(size_t)k * CLF_BLOCK_FLOATS + (j + ry) * ROW + i + rx] + delta;
}
