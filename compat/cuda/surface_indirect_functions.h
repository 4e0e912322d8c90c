// Stand-in for a header that CUDA 13 removed and Clang 19's CUDA wrapper
// headers still include. Cleave's frontend puts this directory on the
// include path (see docs/frontend.md). It declares the texture and surface
// functions, which Cleave refuses, as unavailable (cleave_textures.h).
#pragma once
#include "cleave_textures.h"
