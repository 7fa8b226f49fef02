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

std::vector<double> gaussian_1d(double sigma, int radius);    // sums to 1
std::vector<double> outer(const std::vector<double>& column, const std::vector<double>& row);
// Sobel 1-D kernels from OpenCV's documentation tables: smoothing (order 0) and derivative
// (orders 1, 2) for sizes 3, 5, 7.
std::vector<double> sobel_1d(int order, int size);
Image sobel_magnitude(const Image& in, Border border);  // sqrt(Gx^2 + Gy^2), 3x3

}  // namespace ref
