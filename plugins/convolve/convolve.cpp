// convolve: a user-given KxK kernel, correlated like OpenCV's filter2D (flip=true for true
// convolution). A rank-1 matrix is split into a row and a column kernel and runs separably.
#include <clf/correlate.hpp>
#include <clf/error.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>
#include <cmath>
#include <fstream>
#include <sstream>

namespace {
using namespace clf;

constexpr int max_size = 127;

std::vector<ParamSpec> convolve_params() {
  return with_border_params({
      ParamSpec::matrix_of(
          "kernel",
          "the matrix: rows separated by ';', values by ',' (e.g. 1,2,1;2,4,2;1,2,1); odd "
          "width and height"),
      ParamSpec::text(
          "kernel_file",
          "text file with the matrix: one row per line, values separated by spaces or commas, "
          "# comments"),
      ParamSpec::flag("normalize", "divide the kernel by the sum of its values").fallback("false"),
      ParamSpec::text("anchor",
                      "kernel cell aligned with the output pixel, as X;Y (default: the centre)"),
      ParamSpec::number("delta", "added to every result").fallback("0"),
      ParamSpec::flag("flip",
                      "rotate the kernel 180 degrees: mathematical convolution instead of "
                      "filter2D's correlation")
          .fallback("false"),
      ParamSpec::one_of("method", {"auto", "direct", "fft"},
                        "how a matrix of rank above 1 is applied: direct sums, or by FFT in "
                        "overlapping blocks (equal within float rounding, not bit for bit); auto "
                        "picks the cheaper for the device and size (-v says which)")
          .fallback("auto"),
  });
}

Matrix read_kernel_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::io, "convolve: cannot read kernel_file '" + path + "'");
  std::string text, line;
  while (std::getline(in, line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    if (line.find_first_not_of(" \t\r,") != std::string::npos) text += line + ";";
  }
  // The file's contents are not quoted back: kernel_file may name a file that is not a kernel.
  return parse_matrix(text, "convolve: kernel_file '" + path + "'", false);
}

// Rank 1 when every row is a multiple of the row holding the largest value: A = u v^T.
bool split_rank1(const Matrix& m, std::vector<float>& kx, std::vector<float>& ky) {
  int pr = 0, pc = 0;
  double peak = 0;
  for (int r = 0; r < m.rows; ++r)
    for (int c = 0; c < m.cols; ++c)
      if (std::abs(m.at(r, c)) > peak) peak = std::abs(m.at(r, c)), pr = r, pc = c;
  if (peak == 0) return false;
  const double pivot = m.at(pr, pc);
  for (int r = 0; r < m.rows; ++r)
    for (int c = 0; c < m.cols; ++c)
      if (std::abs(m.at(r, pc) * m.at(pr, c) / pivot - m.at(r, c)) > 1e-7 * peak) return false;
  kx.clear();
  ky.clear();
  for (int c = 0; c < m.cols; ++c) kx.push_back(float(m.at(pr, c) / pivot));
  for (int r = 0; r < m.rows; ++r) ky.push_back(float(m.at(r, pc)));
  return true;
}

class ConvolveFactory : public FilterFactory {
 public:
  std::string name() const override { return "convolve"; }
  std::string summary() const override {
    return "correlate with a KxK matrix like OpenCV filter2D (no flip; flip=true convolves)";
  }
  std::vector<ParamSpec> params() const override { return convolve_params(); }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    if (p.has("kernel") == p.has("kernel_file"))
      throw Error(ErrorKind::usage,
                  "convolve: give exactly one of kernel=ROWS or kernel_file=PATH "
                  "(e.g. convolve:kernel=0,-1,0;-1,5,-1;0,-1,0)");
    Matrix m =
        p.has("kernel") ? p.get_matrix("kernel") : read_kernel_file(p.get_string("kernel_file"));
    const std::string size = std::to_string(m.cols) + "x" + std::to_string(m.rows);
    if (m.cols > max_size || m.rows > max_size)
      throw Error(ErrorKind::usage, "convolve: kernel " + size + " is larger than " +
                                        std::to_string(max_size) + "x" + std::to_string(max_size));
    if (p.get_bool("flip")) std::reverse(m.values.begin(), m.values.end());
    if (p.has("anchor")) {  // re-centre: pad with zeros so the anchor becomes the middle cell
      int ax = -1, ay = -1, used = 0;
      const std::string a = p.get_string("anchor");
      if (std::sscanf(a.c_str(), "%d;%d%n", &ax, &ay, &used) != 2 || used != int(a.size()) ||
          ax < 0 || ay < 0 || ax >= m.cols || ay >= m.rows)
        throw Error(ErrorKind::usage, "convolve: anchor must be X;Y inside the " + size +
                                          " kernel (got '" + a + "')");
      const int rx = std::max(ax, m.cols - 1 - ax), ry = std::max(ay, m.rows - 1 - ay);
      Matrix padded{2 * ry + 1, 2 * rx + 1,
                    std::vector<double>(size_t(2 * ry + 1) * (2 * rx + 1), 0.0)};
      for (int r = 0; r < m.rows; ++r)
        for (int c = 0; c < m.cols; ++c)
          padded.values[size_t(r - ay + ry) * padded.cols + (c - ax + rx)] = m.at(r, c);
      m = padded;
    } else if (m.cols % 2 == 0 || m.rows % 2 == 0) {
      throw Error(ErrorKind::usage,
                  "convolve: kernel " + size +
                      " has no centre; use odd width and height, or set anchor=X;Y");
    }
    if (p.get_bool("normalize")) {
      double sum = 0;
      for (double v : m.values) sum += v;
      if (std::abs(sum) < 1e-12)
        throw Error(ErrorKind::usage, "convolve: normalize=true but the kernel sums to 0");
      for (double& v : m.values) v /= sum;
    }
    const float delta = float(p.get_float("delta"));
    const std::string what = "convolve " + size;
    std::vector<float> kx, ky;
    const std::string method = p.get_string("method");
    if (m.rows * m.cols > 1 && split_rank1(m, kx, ky)) {
      if (method == "fft")
        throw Error(ErrorKind::usage, "convolve: method=fft: kernel " + size +
                                          " has rank 1 and runs separably, in fewer taps than "
                                          "an FFT costs; leave method at auto");
      return std::make_unique<SeparableFilter>(device, kx, ky, delta, border_from_params(p),
                                               "convolve", what + ", rank 1: separable");
    }
    const std::vector<float> w(m.values.begin(), m.values.end());
    const Method how = method == "fft"      ? Method::fft
                       : method == "direct" ? Method::direct
                                            : Method::automatic;
    return std::make_unique<CorrelationFilter>(device, m.cols / 2, m.rows / 2, w, delta,
                                               border_from_params(p), "convolve", what + ", 2-D",
                                               how);
  }
};

PluginManifest manifest() { return {{std::make_shared<ConvolveFactory>()}}; }
}  // namespace

CLF_PLUGIN(manifest)
