# Turns INPUT into a C++ source defining lazyfuse::codegen::kPrelude (a std::string_view of the text).
file(READ ${INPUT} content)
set(delim "LFPRELUDE")
file(WRITE ${OUTPUT} "// Generated from graph/OpMath.inc. Do not edit.\n#include <string_view>\nnamespace lazyfuse::codegen {\nextern const std::string_view kPrelude;\nconst std::string_view kPrelude = R\"${delim}(${content})${delim}\";\n}\n")
