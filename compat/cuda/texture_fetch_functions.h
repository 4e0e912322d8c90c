// Empty stand-in for a header that CUDA 13 removed and Clang 19's CUDA
// wrapper headers still include. Cleave's frontend puts this directory on the
// include path (see docs/frontend.md).
#pragma once
