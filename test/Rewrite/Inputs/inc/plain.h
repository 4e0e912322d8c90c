// Host code only: nothing to rewrite, found from the copy by its path.
#pragma once
constexpr int kBlock = 64;
