# Turns one text file (an OpenCL source) into a C++ file defining `const char* const <SYMBOL>`.
# Invoked as: cmake -DINPUT=... -DOUTPUT=... -DSYMBOL=... -P embed_file.cmake
file(READ "${INPUT}" text)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT}; do not edit.\n"
  "extern const char* const ${SYMBOL};\n"
  "const char* const ${SYMBOL} = R\"clf_embed(${text})clf_embed\";\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
