// Plain-loop CPU references for every filter, written independently of the kernels: a reader can
// check each by eye. Images are interleaved doubles; borders follow OpenCV's definitions.
#pragma once
#include <string>
#include <vector>

namespace ref {

enum class Border { replicate, reflect, reflect101, wrap, constant };
Border border_from_name(const std::string& name);

struct Image {
  int width = 0, height = 0, channels = 0;
  std::vector<double> values;  // (y * width + x) * channels + c
  double at(int x, int y, int c) const { return values[(size_t(y) * width + x) * channels + c]; }
  double& at(int x, int y, int c) { return values[(size_t(y) * width + x) * channels + c]; }
};

// Index of the pixel a border mode reads for coordinate p of an axis of length n (-1: constant).
int border_index(int p, int n, Border border);

// out(x, y) = sum_{j, i} k[j][i] * in(x + i - kw/2, y + j - kh/2) + delta  (correlation)
Image correlate(const Image& in, const std::vector<double>& k, int kw, int kh, Border border,
                double border_value = 0, double delta = 0);

std::vector<double> gaussian_1d(double sigma, int radius);  // sums to 1
// The Gaussian's method=fast along one axis, from its definition (plugins/blur/multirate.cl):
// a prefilter of sigma D and radius 4D sampled at multiples of D, a Gaussian of sigma
// sqrt(sigma^2 - 2 D^2) / D and radius ceil(4 that) on those samples, and back to pixel D b + p
// through samples b - 4 .. b + 5 weighed by a Gaussian of D at p - D t (normalised), D the largest
// power of two up to sigma / 2 (at most 16). Element p: the 1-D kernel of the pixels D b + p,
// centred on them.
std::vector<std::vector<double>> multirate_gaussian_1d(double sigma);
// correlate with separable kernels that depend on the output pixel: kx[x % kx.size()] along the
// rows, ky[y % ky.size()] down the columns (each kernel odd-sized and centred).
Image correlate_phased(const Image& in, const std::vector<std::vector<double>>& kx,
                       const std::vector<std::vector<double>>& ky, Border border,
                       double border_value = 0);
std::vector<double> outer(const std::vector<double>& column, const std::vector<double>& row);
// Sobel 1-D kernels from OpenCV's documentation tables: smoothing (order 0) and derivative
// (orders 1, 2) for sizes 3, 5, 7.
std::vector<double> sobel_1d(int order, int size);
Image sobel_magnitude(const Image& in, Border border);  // sqrt(Gx^2 + Gy^2), 3x3
// cv2.bilateralFilter's definition: over the disc dx^2 + dy^2 <= radius^2, weights
// exp(-r^2 / 2 sigma_space^2) * exp(-dist^2 / 2 sigma_color^2), dist the sum over channels of
// |v - centre|; out = sum w v / sum w.
Image bilateral(const Image& in, int radius, double sigma_color, double sigma_space,
                Border border, double border_value = 0);

}  // namespace ref
