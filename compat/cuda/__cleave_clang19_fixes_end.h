/* Cleave: included just after Clang's __clang_cuda_runtime_wrapper.h; see
 * __cleave_clang19_fixes_begin.h. */
#ifdef __CLEAVE_REDUX_SWAP
#undef __CLEAVE_REDUX_SWAP
#undef __nvvm_redux_sync_add
#undef __nvvm_redux_sync_min
#undef __nvvm_redux_sync_max
#undef __nvvm_redux_sync_umin
#undef __nvvm_redux_sync_umax
#undef __nvvm_redux_sync_and
#undef __nvvm_redux_sync_or
#undef __nvvm_redux_sync_xor
#endif
