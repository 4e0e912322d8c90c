# cmake -DIN=file -DOUT=file.inc -DNAME=Symbol -P EmbedText.cmake: OUT
# defines `static const char NAME[]` holding IN's text (PTX), for a runtime
# that must not read files it was built with.
file(READ ${IN} Text)
file(WRITE ${OUT} "static const char ${NAME}[] = R\"EMBED(${Text})EMBED\";\n")
