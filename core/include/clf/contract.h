/* The contracts between clfilter's C++ and its OpenCL C kernels, in one file both languages read:
 * C++ includes it (border.hpp, image.hpp, stage.hpp), and every program gets it first in its
 * prelude (Device::build). Macros only, so it is valid C, C++ and OpenCL C. */
#ifndef CLF_CONTRACT_H
#define CLF_CONTRACT_H

/* Border modes: clf::BorderMode's values, the `mode` argument of clf_border_interpolate. */
#define CLF_BORDER_REPLICATE 0
#define CLF_BORDER_REFLECT 1
#define CLF_BORDER_REFLECT101 2
#define CLF_BORDER_WRAP 3
#define CLF_BORDER_CONSTANT 4
/* Pixels outside the image never win: filled with NaN, which a min or max written as a comparison
 * passes over (a comparison with NaN is false). For extrema only (morphology's default, as OpenCV's
 * erode and dilate). */
#define CLF_BORDER_IGNORE 5

/* Pixel types: clf::PixelType's values, the -D CLF_PIXEL=n the conversion kernels are built with.
 */
#define CLF_PIXEL_U8 0
#define CLF_PIXEL_U16 1
#define CLF_PIXEL_F16 2
#define CLF_PIXEL_F32 3

/* The float4 margin: a stage input keeps CLF_HALO4(halo_x) columns left of column 0 (a halo rounded
 * up to whole float4s), and every row pitch and plane origin is a multiple of 4 floats, so that a
 * window starting that far left of a tile whose first column is a multiple of 4 is 16-byte aligned.
 * C++: clf::plane_margin. Kernels: clf_stage_window and the blocked correlation bodies. */
#define CLF_HALO4(r) ((((r) + 3) / 4) * 4)

/* Token pasting after expansion, for the kernels' vector types: CLF_CAT(float, VW) is float8 when
 * VW is 8, CLF_CAT(vload, VW) vload8. */
#define CLF_CAT2(a, b) a##b
#define CLF_CAT(a, b) CLF_CAT2(a, b)

#endif
