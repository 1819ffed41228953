// Build-time tool: splits the macro-expanded op semantics (graph/OpMath.inc as NVRTC sees it) into the declarations
// of a FunctionLibrary and writes them as C++ (FunctionLibrary::to_cpp), so that no process parses them at run time.
//
//   split_op_library <expanded OpMath.inc> <output .cpp>
#include "codegen/FunctionLibrary.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: split_op_library <expanded OpMath.inc> <output .cpp>\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "split_op_library: cannot read " << argv[1] << "\n";
    return 1;
  }
  std::ostringstream text;
  text << in.rdbuf();
  const lazyfuse::codegen::FunctionLibrary library(text.str());
  const std::string source = library.to_cpp("op_library");
  // Written only when it changed, so that an unchanged OpMath.inc does not recompile the library.
  std::ifstream old(argv[2], std::ios::binary);
  std::ostringstream previous;
  if (old) previous << old.rdbuf();
  if (old && previous.str() == source) return 0;
  old.close();
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out << source;
  if (!out) {
    std::cerr << "split_op_library: cannot write " << argv[2] << "\n";
    return 1;
  }
  return 0;
}
