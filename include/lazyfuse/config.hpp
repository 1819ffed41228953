// Every LAZYFUSE_* setting in one place: read once from the environment, settable from C++ (the C++
// setting wins, as CuPy's set_limit over CUPY_GPU_MEMORY_LIMIT). docs/configuration.md lists them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lazyfuse::config {

/// Where a setting's value came from.
enum class Source { Default, Environment, Cpp };

struct Setting {
  std::string name;        ///< e.g. "LAZYFUSE_MODE"
  std::string value;       ///< current value as text
  Source source;           ///< where it came from
  std::string description; ///< one line
  /// "" when the environment's value was taken (or the variable is not set); else why it was not, in full or in
  /// part: an invalid value (the default applies instead; for LAZYFUSE_GPU_MEMORY_LIMIT the value is kept and
  /// the memory pool refuses to start) or unknown LAZYFUSE_LOG channels (ignored, the others log).
  std::string rejected;
};

/// Current value of a setting (the environment is read once, on first use of any setting; a LAZYFUSE_* variable
/// that is no setting, outside the LAZYFUSE_TEST_* and LAZYFUSE_CI_* names kept for tests and CI, draws one
/// warning on stderr naming the closest setting). Throws lazyfuse::Error for an unknown name.
std::string get(std::string_view name);
/// Overrides a setting from C++. Throws lazyfuse::Error for an unknown name or an invalid value.
void set(std::string_view name, std::string_view value);
/// Forgets the C++ override; the environment's value (or the default) applies again.
void reset(std::string_view name);
/// All settings, in a fixed order.
std::vector<Setting> all();
/// The configuration warnings this process has written to stderr so far, in order, without the
/// "[lazyfuse] warning: " prefix: unknown LAZYFUSE_* variables and LAZYFUSE_LOG channels, rejected values from
/// the environment, kernel cache directories not used.
std::vector<std::string> warnings();

/// Convenience for the switch the issue tracker calls "eager mode": every op runs as its own kernel.
void set_eager(bool eager);
bool eager();

} // namespace lazyfuse::config
