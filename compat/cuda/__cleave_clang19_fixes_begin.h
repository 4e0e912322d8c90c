/* Cleave: included just before Clang's __clang_cuda_runtime_wrapper.h.
 * Clang 19's __clang_cuda_intrinsics.h defines __reduce_*_sync(mask, value)
 * as __nvvm_redux_sync_*(mask, value), but the builtins take (value, mask)
 * (redux.sync.op dst, src, membermask): every __reduce_*_sync, and so
 * cooperative_groups' cg::reduce on sm_80+, would reduce the mask over the
 * lanes named by the value. These macros swap the operands back while the
 * wrapper is read; __cleave_clang19_fixes_end.h removes them, so code that
 * calls the builtins directly is untouched. Fixed in Clang 20. */
#if defined(__clang__) && __clang_major__ < 20
#define __CLEAVE_REDUX_SWAP
#define __nvvm_redux_sync_add(__m, __v) __nvvm_redux_sync_add(__v, __m)
#define __nvvm_redux_sync_min(__m, __v) __nvvm_redux_sync_min(__v, __m)
#define __nvvm_redux_sync_max(__m, __v) __nvvm_redux_sync_max(__v, __m)
#define __nvvm_redux_sync_umin(__m, __v) __nvvm_redux_sync_umin(__v, __m)
#define __nvvm_redux_sync_umax(__m, __v) __nvvm_redux_sync_umax(__v, __m)
#define __nvvm_redux_sync_and(__m, __v) __nvvm_redux_sync_and(__v, __m)
#define __nvvm_redux_sync_or(__m, __v) __nvvm_redux_sync_or(__v, __m)
#define __nvvm_redux_sync_xor(__m, __v) __nvvm_redux_sync_xor(__v, __m)
#endif
