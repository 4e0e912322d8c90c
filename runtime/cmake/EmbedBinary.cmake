# cmake -DIN=file -DOUT=file.inc -DNAME=Symbol -P EmbedBinary.cmake: OUT
# defines `static const unsigned char NAME[]` holding IN's bytes (a cubin)
# and `static const unsigned long NAME_size`, for a runtime that must not
# read files it was built with.
file(READ ${IN} Hex HEX)
string(LENGTH "${Hex}" Digits)
math(EXPR Bytes "${Digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," Body "${Hex}")
file(WRITE ${OUT} "static const unsigned char ${NAME}[] = {${Body}};\n"
  "static const unsigned long ${NAME}_size = ${Bytes};\n")
