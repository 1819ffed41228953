// Compiled (never linked) by check.cmake, once per CASE: each case but `valid` is a mistake that must fail to
// compile with lazyfuse's own message. `valid` compiles the same code with correct indices, so a failure of the
// others cannot come from a wrong include path or flag.
#include <lazyfuse/lazyfuse.hpp>

using namespace lazyfuse;

void use(Array x, Array y) {
  Array mask = x > 0;
  (void)mask;
#if defined(CASE_valid)
  (void)x(1, slice(0, 2), newaxis, ellipsis);
  (void)x.at(none, all_of).set(y);
  (void)x.index_with({Index(std::int64_t(1))});
  (void)x.set_at({Index(std::int64_t(1))}, y);
  (void)where(mask, x, 0.0);
  (void)x(slice(0, 2), y, newaxis); // advanced indexing (y: an integer array at run time)
  (void)x.at(mask).set(0.0);
  (void)x.at(y).add(1.0);
#elif defined(CASE_index_with_mask)
  (void)x.index_with({mask});
#elif defined(CASE_set_at_mask)
  (void)x.set_at({mask}, y);
#elif defined(CASE_call_bool)
  (void)x(true);
#elif defined(CASE_call_double)
  (void)x(1.5);
#else
#error "define one CASE_<name>"
#endif
}
