// A small writer of indented source text for the printers: one call per line, indentation by scope.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace lazyfuse::codegen {

/// Collects lines of source text. line() writes one line at the current indentation; indent() and block() raise
/// it for as long as the object they return lives, so that a printer's nesting in C++ is the nesting of the
/// text it prints.
class CodeWriter {
public:
  /// Starts at `depth` spaces of indentation.
  explicit CodeWriter(int depth = 0) : depth_(depth) {}

  /// Writes the parts (anything std::ostream prints) as one line at the current indentation.
  template <class... Parts> CodeWriter& line(const Parts&... parts) {
    out_ << std::string(std::size_t(depth_), ' ');
    (out_ << ... << parts);
    out_ << '\n';
    return *this;
  }
  /// Writes one line at column 0, whatever the indentation (preprocessor directives: #pragma unroll).
  template <class... Parts> CodeWriter& directive(const Parts&... parts) {
    (out_ << ... << parts);
    out_ << '\n';
    return *this;
  }
  /// Writes `text` as it is (whole lines, with their newlines).
  CodeWriter& text(std::string_view text) {
    out_ << text;
    return *this;
  }

  /// Raises the indentation by `spaces` until it is destroyed.
  class [[nodiscard]] Indent {
  public:
    Indent(CodeWriter& w, int spaces) : w_(w), spaces_(spaces) { w_.depth_ += spaces_; }
    ~Indent() { w_.depth_ -= spaces_; }
    Indent(const Indent&) = delete;
    Indent& operator=(const Indent&) = delete;

  private:
    CodeWriter& w_;
    int spaces_;
  };
  Indent indent(int spaces = 2) { return Indent(*this, spaces); }

  /// Writes `head {`, indents what follows by two spaces, and closes with `}` when destroyed.
  class [[nodiscard]] Block {
  public:
    explicit Block(CodeWriter& w) : w_(w) { w_.depth_ += 2; }
    ~Block() {
      w_.depth_ -= 2;
      w_.line("}");
    }
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;

  private:
    CodeWriter& w_;
  };
  template <class... Parts> Block block(const Parts&... head) {
    line(head..., " {");
    return Block(*this);
  }

  std::string str() const { return out_.str(); }

private:
  std::ostringstream out_;
  int depth_ = 0;
};

} // namespace lazyfuse::codegen
