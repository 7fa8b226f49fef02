// Plain loops; see reference.hpp.
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ref {

Border border_from_name(const std::string& name) {
  if (name == "replicate") return Border::replicate;
  if (name == "reflect") return Border::reflect;
  if (name == "reflect101") return Border::reflect101;
  if (name == "wrap") return Border::wrap;
  if (name == "constant") return Border::constant;
  throw std::invalid_argument("unknown border " + name);
}

int border_index(int p, int n, Border border) {
  if (p >= 0 && p < n) return p;
  switch (border) {
    case Border::replicate:
      return p < 0 ? 0 : n - 1;
    case Border::wrap:
      return ((p % n) + n) % n;
    case Border::constant:
      return -1;
    case Border::reflect: {  // period 2n: ...cba|abc...cba|abc
      const int m = ((p % (2 * n)) + 2 * n) % (2 * n);
      return m < n ? m : 2 * n - 1 - m;
    }
    case Border::reflect101: {  // period 2n-2: ...dcb|abcd...dcb
      if (n == 1) return 0;
      const int period = 2 * n - 2;
      const int m = ((p % period) + period) % period;
      return m < n ? m : period - m;
    }
  }
  return -1;
}

Image correlate(const Image& in, const std::vector<double>& k, int kw, int kh, Border border,
                double border_value, double delta) {
  Image out = in;
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x)
      for (int c = 0; c < in.channels; ++c) {
        double sum = 0;
        for (int j = 0; j < kh; ++j)
          for (int i = 0; i < kw; ++i) {
            const int sx = border_index(x + i - kw / 2, in.width, border);
            const int sy = border_index(y + j - kh / 2, in.height, border);
            const double v = (sx < 0 || sy < 0) ? border_value : in.at(sx, sy, c);
            sum += k[size_t(j) * kw + i] * v;
          }
        out.at(x, y, c) = sum + delta;
      }
  return out;
}

Image bilateral(const Image& in, int radius, double sigma_color, double sigma_space,
                Border border, double border_value) {
  Image out = in;
  const int n = in.channels;
  std::vector<double> v(size_t(n), 0.0), sum(size_t(n), 0.0);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      double wsum = 0;
      std::fill(sum.begin(), sum.end(), 0.0);
      for (int dy = -radius; dy <= radius; ++dy)
        for (int dx = -radius; dx <= radius; ++dx) {
          if (dx * dx + dy * dy > radius * radius) continue;
          const int sx = border_index(x + dx, in.width, border);
          const int sy = border_index(y + dy, in.height, border);
          double dist = 0;
          for (int c = 0; c < n; ++c) {
            v[size_t(c)] = (sx < 0 || sy < 0) ? border_value : in.at(sx, sy, c);
            dist += std::abs(v[size_t(c)] - in.at(x, y, c));
          }
          const double w = std::exp(-(dx * dx + dy * dy) / (2 * sigma_space * sigma_space)) *
                           std::exp(-dist * dist / (2 * sigma_color * sigma_color));
          wsum += w;
          for (int c = 0; c < n; ++c) sum[size_t(c)] += w * v[size_t(c)];
        }
      for (int c = 0; c < n; ++c) out.at(x, y, c) = sum[size_t(c)] / wsum;
    }
  return out;
}

std::vector<double> gaussian_1d(double sigma, int radius) {
  std::vector<double> k;
  double sum = 0;
  for (int i = -radius; i <= radius; ++i) {
    k.push_back(std::exp(-(i * i) / (2 * sigma * sigma)));
    sum += k.back();
  }
  for (double& v : k) v /= sum;
  return k;
}

std::vector<std::vector<double>> multirate_gaussian_1d(double sigma) {
  int d = 1;
  while (d < 16 && 4 * d <= sigma) d *= 2;
  const double coarse_sigma = std::sqrt(sigma * sigma - 2.0 * d * d) / d;
  const int r1 = 4 * d, r2 = int(std::ceil(4 * coarse_sigma)), t_lo = -4, t_hi = 5;
  const std::vector<double> g1 = gaussian_1d(d, r1), g2 = gaussian_1d(coarse_sigma, r2);
  const int halo = d * (t_hi + r2) + r1;  // offsets n in [-halo, halo]
  std::vector<std::vector<double>> kernels;
  for (int p = 0; p < d; ++p) {
    std::vector<double> up;
    double total = 0;
    for (int t = t_lo; t <= t_hi; ++t) {
      up.push_back(std::exp(-double(p - d * t) * (p - d * t) / (2.0 * d * d)));
      total += up.back();
    }
    std::vector<double> k(size_t(2 * halo + 1), 0.0);
    // Output D b + p reads sample b + t + m of the coarse blur's input, which reads input
    // D (b + t + m) + i: offset n = D (t + m) + i - p.
    for (int t = t_lo; t <= t_hi; ++t)
      for (int m = -r2; m <= r2; ++m)
        for (int i = -r1; i <= r1; ++i)
          k[size_t(d * (t + m) + i - p + halo)] +=
              up[size_t(t - t_lo)] / total * g2[size_t(m + r2)] * g1[size_t(i + r1)];
    kernels.push_back(k);
  }
  return kernels;
}

Image correlate_phased(const Image& in, const std::vector<std::vector<double>>& kx,
                       const std::vector<std::vector<double>>& ky, Border border,
                       double border_value) {
  const int hx = int(kx[0].size() / 2), hy = int(ky[0].size() / 2);
  auto pixel = [&](int x, int y, int c) {
    const int sx = border_index(x, in.width, border), sy = border_index(y, in.height, border);
    return (sx < 0 || sy < 0) ? border_value : in.at(sx, sy, c);
  };
  // Along the rows first, over every row the columns' kernels read.
  std::vector<double> rows(size_t(in.height + 2 * hy) * in.width * in.channels);
  auto row_at = [&](int x, int y, int c) -> double& {
    return rows[(size_t(y + hy) * in.width + x) * in.channels + c];
  };
  for (int y = -hy; y < in.height + hy; ++y)
    for (int x = 0; x < in.width; ++x)
      for (int c = 0; c < in.channels; ++c) {
        const std::vector<double>& k = kx[size_t(x) % kx.size()];
        double sum = 0;
        for (int i = -hx; i <= hx; ++i) sum += k[size_t(i + hx)] * pixel(x + i, y, c);
        row_at(x, y, c) = sum;
      }
  Image out = in;
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x)
      for (int c = 0; c < in.channels; ++c) {
        const std::vector<double>& k = ky[size_t(y) % ky.size()];
        double sum = 0;
        for (int j = -hy; j <= hy; ++j) sum += k[size_t(j + hy)] * row_at(x, y + j, c);
        out.at(x, y, c) = sum;
      }
  return out;
}

std::vector<double> outer(const std::vector<double>& column, const std::vector<double>& row) {
  std::vector<double> k;
  for (double c : column)
    for (double r : row) k.push_back(c * r);
  return k;
}

std::vector<double> sobel_1d(int order, int size) {
  if (size == 3) {
    if (order == 0) return {1, 2, 1};
    if (order == 1) return {-1, 0, 1};
    return {1, -2, 1};
  }
  if (size == 5) {
    if (order == 0) return {1, 4, 6, 4, 1};
    if (order == 1) return {-1, -2, 0, 2, 1};
    return {1, 0, -2, 0, 1};
  }
  if (size == 7) {
    if (order == 0) return {1, 6, 15, 20, 15, 6, 1};
    if (order == 1) return {-1, -4, -5, 0, 5, 4, 1};
    return {1, 2, -1, -4, -1, 2, 1};
  }
  throw std::invalid_argument("sobel size");
}

Image sobel_magnitude(const Image& in, Border border) {
  const Image gx = correlate(in, outer(sobel_1d(0, 3), sobel_1d(1, 3)), 3, 3, border);
  const Image gy = correlate(in, outer(sobel_1d(1, 3), sobel_1d(0, 3)), 3, 3, border);
  Image out = in;
  for (size_t i = 0; i < out.values.size(); ++i)
    out.values[i] = std::sqrt(gx.values[i] * gx.values[i] + gy.values[i] * gy.values[i]);
  return out;
}

}  // namespace ref
