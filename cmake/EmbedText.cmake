# Turns INPUT into a C++ source defining `extern const std::string_view lazyfuse::codegen::${NAME}` (the text of
# INPUT), without its comment lines: they would only lengthen every generated kernel.
get_filename_component(input_name ${INPUT} NAME)
file(READ ${INPUT} content)
string(REGEX REPLACE "(^|\n)[ ]*//[^\n]*" "" content "${content}")
set(delim "LFPRELUDE")
file(WRITE ${OUTPUT} "// Generated from ${input_name}. Do not edit.\n#include <string_view>\nnamespace lazyfuse::codegen {\nextern const std::string_view ${NAME};\nconst std::string_view ${NAME} = R\"${delim}(${content})${delim}\";\n}\n")
