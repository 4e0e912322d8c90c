/*===- compat/host/omp.h - The host compiler's omp.h, as Clang parses it ---===*
 *
 * Part of Cleave. Only Cleave's Clang parses of a .cu file search this
 * directory; the host compiler includes its own omp.h directly. Clang 19
 * has no omp.h of its own unless libomp is installed, so the parse finds the
 * host compiler's (GCC's) through -idirafter (docs/driver.md). GCC's omp.h
 * marks its allocation functions __attribute__((__malloc__(omp_free))), an
 * argument form of the attribute that Clang 19 rejects: while it is read,
 * the argument form expands to nothing (plain __malloc__ is untouched, since
 * a function-like macro expands only before a parenthesis).
 *===----------------------------------------------------------------------===*/
#if __has_include_next(<omp.h>)
#pragma push_macro("__malloc__")
#undef __malloc__
#define __malloc__(...)
#include_next <omp.h>
#pragma pop_macro("__malloc__")
#else
#error "<omp.h> not found: neither Clang nor the host compiler (--cxx) has one; install the host compiler's OpenMP (GCC's libgomp, or libomp for Clang)"
#endif
