// Everything an image tool needs to run clfilter's filters: include this one header. (Plugins add
// clf/plugin.hpp, the only header that brings Boost.DLL.)
#pragma once
#include "clf/border.hpp"
#include "clf/device.hpp"
#include "clf/device_image.hpp"
#include "clf/environment.hpp"
#include "clf/error.hpp"
#include "clf/filter.hpp"
#include "clf/image.hpp"
#include "clf/params.hpp"
#include "clf/pipeline.hpp"
#include "clf/registry.hpp"
#include "clf/rows.hpp"
#include "clf/stage.hpp"
#include "clf/stats.hpp"
#include "clf/tuner.hpp"
