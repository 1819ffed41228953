// Umbrella header: everything a user of lazyfuse needs.
#pragma once

#include <lazyfuse/array.hpp>
#include <lazyfuse/config.hpp>
#include <lazyfuse/dtype.hpp>
#include <lazyfuse/error.hpp>
#include <lazyfuse/host_array.hpp>
#include <lazyfuse/runtime.hpp>
