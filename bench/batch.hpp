// clfilter-bench --batch: many images over one device and over several (see batch.cpp).
#pragma once
#include <string>
#include <vector>

#include "clf/clf.hpp"

namespace clf_bench {
int batch_bench(const std::string& device_sel, int images, int per_device, int width, int height,
                int channels, clf::PixelType type, const std::vector<std::string>& chain, int reps);
}
