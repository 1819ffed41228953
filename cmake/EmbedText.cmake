# Turns INPUT into a C++ source defining lazyfuse::codegen::kPrelude (a std::string_view of the text), without
# its comment lines: they would only lengthen every generated kernel.
file(READ ${INPUT} content)
string(REGEX REPLACE "(^|\n)[ ]*//[^\n]*" "" content "${content}")
set(delim "LFPRELUDE")
file(WRITE ${OUTPUT} "// Generated from graph/OpMath.inc. Do not edit.\n#include <string_view>\nnamespace lazyfuse::codegen {\nextern const std::string_view kPrelude;\nconst std::string_view kPrelude = R\"${delim}(${content})${delim}\";\n}\n")
