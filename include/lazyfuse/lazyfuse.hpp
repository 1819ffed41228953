// Umbrella header: everything a user of lazyfuse needs.
#pragma once

#include <lazyfuse/array.hpp>
#include <lazyfuse/config.hpp>
#include <lazyfuse/creation.hpp>
#include <lazyfuse/dtype.hpp>
#include <lazyfuse/elementwise.hpp>
#include <lazyfuse/error.hpp>
#include <lazyfuse/host_array.hpp>
#include <lazyfuse/index.hpp>
#include <lazyfuse/indexing.hpp>
#include <lazyfuse/linalg.hpp>
#include <lazyfuse/manipulation.hpp>
#include <lazyfuse/random.hpp>
#include <lazyfuse/reductions.hpp>
#include <lazyfuse/runtime.hpp>
#include <lazyfuse/scans.hpp>
#include <lazyfuse/sorting.hpp>
