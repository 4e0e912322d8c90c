// Part of Cleave's compatibility headers (docs/frontend.md). CUDA 13 removed
// the headers that declared the texture and surface fetch functions; their
// stand-ins include this file, which declares those functions, and the
// texture-reference API that CUDA 12 removed, as unavailable, so that Clang
// refuses a use at its line with a message that names the feature instead
// of "use of undeclared identifier". Cleave does not support textures or
// surfaces (docs/driver.md, "What is refused").
#pragma once

#define CLEAVE_REFUSED(feature)                                                \
  __attribute__((unavailable(feature " are not supported by Cleave: its "     \
                                     "runtime splits kernels over the CPU "    \
                                     "and GPUs through plain device memory "   \
                                     "(docs/driver.md, \"What is refused\")")))

// R is the fetched type the program names (tex2D<float4>(...)), so that the
// refusal is the only error of the call.
#define CLEAVE_REFUSED_FETCH(name, feature)                                    \
  template <class R = int, class... A>                                         \
  __host__ __device__ R name(A...) CLEAVE_REFUSED(feature);
#define CLEAVE_REFUSED_API(name, feature)                                      \
  template <class... A>                                                        \
  __host__ cudaError_t name(A &&...) CLEAVE_REFUSED(feature);

CLEAVE_REFUSED_FETCH(tex1Dfetch, "texture objects")
CLEAVE_REFUSED_FETCH(tex1D, "texture objects")
CLEAVE_REFUSED_FETCH(tex2D, "texture objects")
CLEAVE_REFUSED_FETCH(tex3D, "texture objects")
CLEAVE_REFUSED_FETCH(tex1DLayered, "texture objects")
CLEAVE_REFUSED_FETCH(tex2DLayered, "texture objects")
CLEAVE_REFUSED_FETCH(texCubemap, "texture objects")
CLEAVE_REFUSED_FETCH(texCubemapLayered, "texture objects")
CLEAVE_REFUSED_FETCH(tex2Dgather, "texture objects")
CLEAVE_REFUSED_FETCH(tex1DLod, "texture objects")
CLEAVE_REFUSED_FETCH(tex2DLod, "texture objects")
CLEAVE_REFUSED_FETCH(tex3DLod, "texture objects")
CLEAVE_REFUSED_FETCH(tex1DLayeredLod, "texture objects")
CLEAVE_REFUSED_FETCH(tex2DLayeredLod, "texture objects")
CLEAVE_REFUSED_FETCH(texCubemapLod, "texture objects")
CLEAVE_REFUSED_FETCH(texCubemapLayeredLod, "texture objects")
CLEAVE_REFUSED_FETCH(tex1DGrad, "texture objects")
CLEAVE_REFUSED_FETCH(tex2DGrad, "texture objects")
CLEAVE_REFUSED_FETCH(tex3DGrad, "texture objects")
CLEAVE_REFUSED_FETCH(tex1DLayeredGrad, "texture objects")
CLEAVE_REFUSED_FETCH(tex2DLayeredGrad, "texture objects")
CLEAVE_REFUSED_FETCH(texCubemapGrad, "texture objects")
CLEAVE_REFUSED_FETCH(texCubemapLayeredGrad, "texture objects")

CLEAVE_REFUSED_FETCH(surf1Dread, "surface objects")
CLEAVE_REFUSED_FETCH(surf1Dwrite, "surface objects")
CLEAVE_REFUSED_FETCH(surf2Dread, "surface objects")
CLEAVE_REFUSED_FETCH(surf2Dwrite, "surface objects")
CLEAVE_REFUSED_FETCH(surf3Dread, "surface objects")
CLEAVE_REFUSED_FETCH(surf3Dwrite, "surface objects")
CLEAVE_REFUSED_FETCH(surf1DLayeredread, "surface objects")
CLEAVE_REFUSED_FETCH(surf1DLayeredwrite, "surface objects")
CLEAVE_REFUSED_FETCH(surf2DLayeredread, "surface objects")
CLEAVE_REFUSED_FETCH(surf2DLayeredwrite, "surface objects")
CLEAVE_REFUSED_FETCH(surfCubemapread, "surface objects")
CLEAVE_REFUSED_FETCH(surfCubemapwrite, "surface objects")
CLEAVE_REFUSED_FETCH(surfCubemapLayeredread, "surface objects")
CLEAVE_REFUSED_FETCH(surfCubemapLayeredwrite, "surface objects")

CLEAVE_REFUSED_API(cudaBindTexture, "texture references")
CLEAVE_REFUSED_API(cudaBindTexture2D, "texture references")
CLEAVE_REFUSED_API(cudaBindTextureToArray, "texture references")
CLEAVE_REFUSED_API(cudaBindTextureToMipmappedArray, "texture references")
CLEAVE_REFUSED_API(cudaUnbindTexture, "texture references")
CLEAVE_REFUSED_API(cudaGetTextureAlignmentOffset, "texture references")
CLEAVE_REFUSED_API(cudaGetTextureReference, "texture references")
CLEAVE_REFUSED_API(cudaBindSurfaceToArray, "surface references")
CLEAVE_REFUSED_API(cudaGetSurfaceReference, "surface references")

#undef CLEAVE_REFUSED_API
#undef CLEAVE_REFUSED_FETCH
#undef CLEAVE_REFUSED
