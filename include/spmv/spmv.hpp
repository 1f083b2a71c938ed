#pragma once
/// @file
/// Umbrella header.
#include <spmv/device.hpp>
#include <spmv/formats/ell.hpp>
#include <spmv/formats/hll.hpp>
#include <spmv/formats/transpose.hpp>
#include <spmv/io.hpp>
#include <spmv/matrix.hpp>
#include <spmv/params.hpp>
#include <spmv/plan.hpp>
#include <spmv/reference.hpp>
#include <spmv/solvers.hpp>
#include <spmv/stats.hpp>
#include <spmv/timing.hpp>
#include <spmv/types.hpp>
#include <spmv/version.hpp>
