// Random-number distributions of Random nodes: what each one's kernel function is called and takes.
//
// A Random node (graph/Node.h) holds the distribution in `op`, its real parameters in fvalue and fstep, an integer
// range in ivalue, and reads its key and counter offset from two uint64 fill sources: kernel parameters, so a new
// draw reuses the compiled kernel. The transformations themselves are in graph/RandomMath.inc.
#pragma once

#include <lazyfuse/dtype.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace lazyfuse::graph {

enum class RandomDist : std::uint8_t {
  Random,              // uniform on [0, 1); float32 or float64
  StandardNormal,      // float32 or float64
  StandardExponential, // float32 or float64
  Lognormal,           // exp(fvalue + fstep * N(0, 1)); float32 or float64
  StandardGamma,       // shape fvalue; float32 or float64
  Beta,                // a = fvalue, b = fstep; float32 or float64
  StandardT,           // df = fvalue; float32 or float64
  Integers,            // uniform on [0, ivalue] (ivalue's bits as uint64); uint64
  Poisson,             // lam = fvalue; int64
  Binomial,            // n = fvalue (an integer), p = fstep; int64
};

std::string_view name_of(RandomDist d);
/// How many real parameters (fvalue, then fstep) the distribution's kernel function takes.
int real_params(RandomDist d);
/// Whether the result is a float of the node's type (else the fixed integer type result_type gives).
bool is_float_dist(RandomDist d);
/// The integer type a non-float distribution returns.
DType integer_result(RandomDist d);
/// The function of graph/RandomMath.inc that draws one element of type `t`: "lf_rand_standard_normal_f32". It
/// takes the key, the counter C and the element's index, then the parameters.
std::string random_function(RandomDist d, DType t);
/// 32-bit words per element of a draw of `t` (integers: of `range`): a Philox block serves 4 / width elements
/// (graph/RandomMath.inc's layout), so a draw of n elements takes ceil(n * width / 4) block counters.
int random_width(RandomDist d, DType t, std::uint64_t range);
/// Whether the distribution (a float one, no rejection) has a function computing four consecutive elements from
/// one group (random_function(d, t) + "_x4": the key, the counter, the first index, a multiple of 4, the
/// parameters, and a pointer to the four results).
bool has_group_function(RandomDist d);

} // namespace lazyfuse::graph
