#pragma once
__device__ inline int sq(int v) { return v * v; }
