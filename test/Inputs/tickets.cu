// Ticket numbers from a global counter: each thread keeps the value its
// atomicAdd returned, so the blocks must share one counter and the order of
// the updates shows: the kernel is not split (global-atomic).
__global__ void tickets(unsigned *counter, unsigned *ticket, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    ticket[i] = atomicAdd(counter, 1u);
}
