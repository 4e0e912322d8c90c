#include "parse-error.cuh"

int main() { return 0; }
