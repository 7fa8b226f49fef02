// Everything an image tool needs to run clfilter's filters: include this one header.
#pragma once
#include "clf/device.hpp"
#include "clf/error.hpp"
#include "clf/filter.hpp"
#include "clf/image.hpp"
#include "clf/pipeline.hpp"
#include "clf/registry.hpp"
#include "clf/rows.hpp"
#include "clf/stats.hpp"
