// thrust is out of Cleave's scope: refused at the include.
#include <cstdio>
#include <thrust/device_vector.h>
#include <thrust/sort.h>

int main() {
  thrust::device_vector<int> v(4, 1);
  thrust::sort(v.begin(), v.end());
  printf("%d\n", (int)v[0]);
  return 0;
}
