/* Lists the devices the runtime sees, through cleave_rt.h. */
#include <cleave_rt.h>
#include <stdio.h>

int main(void) {
  int n = 0;
  char desc[256];
  if (cleave_device_count(&n) != 0)
    return 1;
  printf("%d device(s)\n", n);
  for (int i = 0; i < n; ++i) {
    if (cleave_device_describe(i, desc, sizeof desc) != 0)
      return 1;
    printf("device %d: %s\n", i, desc);
  }
  return 0;
}
