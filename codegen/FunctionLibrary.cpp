#include "codegen/FunctionLibrary.h"

#include "graph/Assert.h"

#include <algorithm>
#include <cctype>

namespace lazyfuse::codegen {

namespace {

bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Calls f(identifier) for every identifier of `text` starting with "lf_".
template <class F> void for_each_lf_identifier(std::string_view text, F&& f) {
  for (std::size_t k = 0; k < text.size();) {
    if (!is_ident_char(text[k])) {
      ++k;
      continue;
    }
    std::size_t e = k;
    while (e < text.size() && is_ident_char(text[e])) ++e;
    if (text.compare(k, 3, "lf_") == 0) f(text.substr(k, e - k));
    k = e;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The top-level declarations of `text`: each ends at the `}` closing its body (and a `;` right after) or at a `;`
// outside any brackets.
std::vector<std::string_view> split_declarations(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0; // (), {} and [] together
  std::size_t start = 0;
  for (std::size_t k = 0; k < text.size(); ++k) {
    const char c = text[k];
    if (c == '"' || c == '\'') { // skip a literal
      for (++k; k < text.size() && text[k] != c; ++k)
        if (text[k] == '\\') ++k;
      continue;
    }
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    bool end = false;
    if (c == '}') end = --depth == 0;
    if (c == ';' && depth == 0) end = true;
    LAZYFUSE_ASSERT(depth >= 0, "unbalanced brackets in a function library");
    if (!end) continue;
    std::size_t stop = k + 1;
    if (c == '}') {
      std::size_t next = stop;
      while (next < text.size() && std::isspace(static_cast<unsigned char>(text[next]))) ++next;
      if (next < text.size() && text[next] == ';') stop = next + 1;
    }
    const std::string_view decl = trim(text.substr(start, stop - start));
    if (!decl.empty()) out.push_back(decl);
    start = k = stop;
    --k;
  }
  LAZYFUSE_ASSERT(depth == 0 && trim(text.substr(start)).empty(), "a function library ends inside a declaration");
  return out;
}

// What a declaration declares: the identifier before its parameter list (a function) or its body (a struct),
// whichever comes first, skipping template arguments.
std::string_view declared_name(std::string_view decl) {
  int angle = 0;
  std::size_t paren = std::string_view::npos;
  for (std::size_t k = 0; k < decl.size() && paren == std::string_view::npos; ++k) {
    if (decl[k] == '<') ++angle;
    if (decl[k] == '>') --angle;
    if ((decl[k] == '(' || decl[k] == '{') && angle == 0) paren = k;
  }
  LAZYFUSE_ASSERT(paren != std::string_view::npos, "a declaration of a function library has no parameters or body");
  std::size_t e = paren;
  while (e > 0 && std::isspace(static_cast<unsigned char>(decl[e - 1]))) --e;
  if (e > 0 && decl[e - 1] == '>') { // template arguments of an explicit specialization
    int depth = 0;
    do {
      --e;
      if (decl[e] == '>') ++depth;
      if (decl[e] == '<') --depth;
    } while (e > 0 && depth > 0);
    while (e > 0 && std::isspace(static_cast<unsigned char>(decl[e - 1]))) --e;
  }
  std::size_t b = e;
  while (b > 0 && is_ident_char(decl[b - 1])) --b;
  LAZYFUSE_ASSERT(b < e, "a declaration of a function library has no name");
  return decl.substr(b, e - b);
}

// `text` without its comment lines (lines whose first characters other than blanks are //).
std::string without_comment_lines(std::string_view text) {
  std::string out;
  for (std::size_t k = 0; k < text.size();) {
    std::size_t e = text.find('\n', k);
    e = e == std::string_view::npos ? text.size() : e + 1;
    const std::string_view line = text.substr(k, e - k);
    if (trim(line).substr(0, 2) != "//") out.append(line);
    k = e;
  }
  return out;
}

} // namespace

FunctionLibrary::FunctionLibrary(std::string_view library) : text_(without_comment_lines(library)) {
  const auto decls = split_declarations(text_);
  std::vector<std::string_view> declared;
  for (auto d : decls) declared.push_back(declared_name(d));
  names_ = declared;
  std::sort(names_.begin(), names_.end());
  names_.erase(std::unique(names_.begin(), names_.end()), names_.end());
  uses_of_.resize(names_.size());
  for (std::size_t k = 0; k < decls.size(); ++k) {
    const Chunk c{decls[k], find_name(declared[k])};
    auto& uses = uses_of_[std::size_t(c.name)];
    for_each_lf_identifier(c.text, [&](std::string_view id) {
      const int n = find_name(id);
      if (n >= 0 && n != c.name && std::find(uses.begin(), uses.end(), n) == uses.end()) uses.push_back(n);
    });
    chunks_.push_back(c);
  }
  index_chunks();
}

FunctionLibrary::FunctionLibrary(const Prebuilt& prebuilt)
    : chunks_(prebuilt.chunks.begin(), prebuilt.chunks.end()), names_(prebuilt.names.begin(), prebuilt.names.end()) {
  LAZYFUSE_ASSERT_EQ(prebuilt.uses_begin.size(), names_.size() + 1, "a prebuilt library has one use range per name");
  uses_of_.resize(names_.size());
  for (std::size_t n = 0; n < names_.size(); ++n)
    uses_of_[n].assign(prebuilt.uses.begin() + prebuilt.uses_begin[n],
                       prebuilt.uses.begin() + prebuilt.uses_begin[n + 1]);
  index_chunks();
}

void FunctionLibrary::index_chunks() {
  chunks_of_.assign(names_.size(), {});
  is_struct_.assign(names_.size(), false);
  for (std::size_t k = 0; k < chunks_.size(); ++k) {
    const auto name = std::size_t(chunks_[k].name);
    chunks_of_[name].push_back(int(k));
    if (chunks_[k].text.substr(0, 7) == "struct ") is_struct_[name] = true;
  }
}

std::string FunctionLibrary::to_cpp(std::string_view function) const {
  // Raw strings need a delimiter no chunk contains.
  const std::string delim = "lfchunk";
  for (auto& c : chunks_)
    LAZYFUSE_ASSERT(c.text.find(")" + delim + "\"") == std::string_view::npos, "a chunk contains the delimiter");
  std::string out = "// Generated by codegen/tools/split_op_library.cpp. Do not edit.\n"
                    "#include \"codegen/FunctionLibrary.h\"\n"
                    "namespace lazyfuse::codegen {\nnamespace {\n"
                    "constexpr std::string_view kNames[] = {\n";
  for (auto n : names_) out.append("  \"").append(n).append("\",\n");
  out += "};\nconstexpr FunctionLibrary::Chunk kChunks[] = {\n";
  for (auto& c : chunks_)
    out.append("  {R\"" + delim + "(").append(c.text).append(")" + delim + "\", " + std::to_string(c.name) + "},\n");
  out += "};\nconstexpr int kUses[] = {";
  std::string begins = "0";
  std::size_t total = 0;
  for (auto& uses : uses_of_) {
    for (int u : uses) out += std::to_string(u) + ", ";
    total += uses.size();
    begins += ", " + std::to_string(total);
  }
  if (total == 0) out += "0"; // no zero-length arrays
  out += "};\nconstexpr int kUsesBegin[] = {" + begins + "};\n} // namespace\n\n";
  out.append("const FunctionLibrary& ").append(function).append("() {\n");
  out += "  static const FunctionLibrary library(FunctionLibrary::Prebuilt{kNames, kChunks, {kUses, " +
         std::to_string(total) + "}, kUsesBegin});\n  return library;\n}\n\n} // namespace lazyfuse::codegen\n";
  return out;
}

int FunctionLibrary::find_name(std::string_view name) const {
  auto it = std::lower_bound(names_.begin(), names_.end(), name);
  return it != names_.end() && *it == name ? int(it - names_.begin()) : -1;
}

std::vector<bool> FunctionLibrary::closure(std::string_view source) const {
  std::vector<bool> in_source(names_.size(), false), used(names_.size(), false), taken(chunks_.size(), false);
  std::vector<int> work, names;
  auto want = [&](int n) {
    if (n >= 0 && !used[std::size_t(n)]) {
      used[std::size_t(n)] = true;
      work.push_back(n);
    }
  };
  for_each_lf_identifier(source, [&](std::string_view id) {
    const int n = find_name(id);
    if (n >= 0) in_source[std::size_t(n)] = true;
    want(n);
  });
  while (!work.empty()) {
    const int n = work.back();
    work.pop_back();
    for (int k : chunks_of_[std::size_t(n)]) {
      names.clear();
      bool allowed = true;
      for_each_lf_identifier(chunks_[std::size_t(k)].text, [&](std::string_view id) {
        const int m = find_name(id);
        if (m < 0 || m == n) return;
        if (is_struct_[std::size_t(m)] && !in_source[std::size_t(m)]) allowed = false;
        names.push_back(m);
      });
      if (!allowed) continue;
      taken[std::size_t(k)] = true;
      for (int m : names) want(m);
    }
  }
  return taken;
}

std::string FunctionLibrary::select(std::string_view source) const {
  const auto taken = closure(source);
  std::string out;
  for (std::size_t k = 0; k < chunks_.size(); ++k)
    if (taken[k]) out.append(chunks_[k].text).append("\n");
  return out;
}

std::vector<std::string> FunctionLibrary::select_names(std::string_view source) const {
  const auto taken = closure(source);
  std::vector<std::string> out;
  std::vector<bool> listed(names_.size(), false);
  for (std::size_t k = 0; k < chunks_.size(); ++k) {
    const auto name = std::size_t(chunks_[k].name);
    if (taken[k] && !listed[name]) {
      listed[name] = true;
      out.emplace_back(names_[name]);
    }
  }
  return out;
}

} // namespace lazyfuse::codegen
