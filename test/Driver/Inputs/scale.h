#ifndef SCALE
#error "SCALE must be defined with -D"
#endif
#define FACTOR float(SCALE)
