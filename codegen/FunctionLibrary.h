// Libraries of functions a kernel takes only what it uses from: the op prelude (graph/OpMath.inc) and the
// printer's device library.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lazyfuse::codegen {

/// A text of top-level C++ declarations (functions, function templates and their explicit specializations,
/// structs; each whole: up to its `{ ... }` body or a `;`), split into one chunk per declaration. A chunk's name is
/// what it declares (the identifier before its parameter list or body, template arguments aside); the chunks it
/// uses are those named by the lf_ identifiers in its text. Nothing is written by hand: a new function in the text is
/// found, and so are the functions it calls. A declaration that names a struct of the library (other than the one it
/// declares) is taken only for a source that names that struct itself: the overloads of a name for a struct type
/// (lf_add on lf_c64) go only into kernels that use the type, not into every kernel that calls lf_add.
class FunctionLibrary {
public:
  /// One declaration: its text and what it declares (an index into the names).
  struct Chunk {
    std::string_view text;
    int name = -1;
  };
  /// A library split ahead of time (to_cpp): sorted names, the chunks in text order, and per name the names its
  /// declarations use, as uses[uses_begin[n] .. uses_begin[n + 1]).
  struct Prebuilt {
    std::span<const std::string_view> names;
    std::span<const Chunk> chunks;
    std::span<const int> uses;
    std::span<const int> uses_begin;
  };

  /// Splits `library` (its comment lines dropped) into declarations.
  explicit FunctionLibrary(std::string_view library);
  /// Adopts a library split at build time (views into static storage): nothing is parsed, so the first kernel a
  /// process renders, a disk-cache hit included, does not pay for splitting the op semantics.
  explicit FunctionLibrary(const Prebuilt& prebuilt);

  /// C++ source defining `const FunctionLibrary& <function>()` in lazyfuse::codegen, which returns this library
  /// as a Prebuilt one (codegen/tools/split_op_library.cpp writes the op library's this way).
  std::string to_cpp(std::string_view function) const;

  // The chunks are views into text_: a copy would point into the original.
  FunctionLibrary(const FunctionLibrary&) = delete;
  FunctionLibrary& operator=(const FunctionLibrary&) = delete;

  /// The chunks that define the lf_ functions `source` names, with every chunk they use in turn: every
  /// declaration (overload, specialization) of each such name, in the order of the library's text (which declares
  /// before use), one declaration a line. Deterministic: a function of `source`'s identifiers alone.
  std::string select(std::string_view source) const;
  /// The names of the functions select(source) declares, in the order of their first declaration.
  std::vector<std::string> select_names(std::string_view source) const;

  /// The number of chunks (tests).
  std::size_t size() const { return chunks_.size(); }

private:
  std::vector<bool> closure(std::string_view source) const; // per chunk: taken
  void index_chunks();
  int find_name(std::string_view name) const;

  std::string text_; // the parsed text the views point into (empty for a Prebuilt library)
  std::vector<Chunk> chunks_;
  std::vector<std::string_view> names_;     // sorted
  std::vector<std::vector<int>> uses_of_;   // per name: the names its declarations use
  std::vector<std::vector<int>> chunks_of_; // per name: its declarations (chunk indices)
  std::vector<bool> is_struct_;             // per name: declared by a struct
};

/// graph/OpMath.inc as kernels compile it: macro-expanded at build time by the host preprocessor with
/// __CUDACC_RTC__ defined (LF_HD, LF_INF_F, LF_INF_D and the lf_i8 ... lf_u64 type names are left for the kernel's
/// own definitions), without comments, and split at build time (the generated OpLibrary.cpp).
const FunctionLibrary& op_library();

} // namespace lazyfuse::codegen
