/* cuda-abi-facts.h — the layout facts that src/include/gp-cuda.h must share
 * with the CUDA toolkit's <cuda.h>, as one list.
 *
 * Included after one of the two headers (they cannot meet in one file:
 * their names clash) by cuda-abi-probe.c (<cuda.h>) and cuda-abi-ours.c
 * (gp-cuda.h); each prints the facts as "name value" lines and
 * tests/simdev/test-cuda-abi.sh compares the two outputs line by line. */
#ifndef GP_TESTS_CUDA_ABI_FACTS_H
#define GP_TESTS_CUDA_ABI_FACTS_H

#include <stddef.h>
#include <stdio.h>

/* SIZE(type), OFFSET(type, member), VALUE(enumerator) */
#define CUDA_ABI_FACTS(SIZE, OFFSET, VALUE)                                     \
	SIZE(CUlaunchConfig)                                                     \
	OFFSET(CUlaunchConfig, hStream)                                          \
	OFFSET(CUlaunchConfig, attrs)                                            \
	OFFSET(CUlaunchConfig, numAttrs)                                         \
	SIZE(CUlaunchAttribute)                                                  \
	SIZE(CUDA_KERNEL_NODE_PARAMS_v2)                                         \
	OFFSET(CUDA_KERNEL_NODE_PARAMS_v2, kernelParams)                         \
	OFFSET(CUDA_KERNEL_NODE_PARAMS_v2, kern)                                 \
	OFFSET(CUDA_KERNEL_NODE_PARAMS_v2, ctx)                                  \
	SIZE(CUmemAllocationProp)                                                \
	OFFSET(CUmemAllocationProp, location)                                    \
	OFFSET(CUmemAllocationProp, win32HandleMetaData)                         \
	OFFSET(CUmemAllocationProp, allocFlags)                                  \
	SIZE(CUmemAccessDesc)                                                    \
	SIZE(CUmemPoolProps)                                                     \
	OFFSET(CUmemPoolProps, maxSize)                                          \
	SIZE(CUuuid)                                                             \
	SIZE(CUDA_MEM_ALLOC_NODE_PARAMS)                                         \
	OFFSET(CUDA_MEM_ALLOC_NODE_PARAMS, bytesize)                             \
	OFFSET(CUDA_MEM_ALLOC_NODE_PARAMS, dptr)                                 \
	SIZE(CUDA_ARRAY_DESCRIPTOR)                                              \
	OFFSET(CUDA_ARRAY_DESCRIPTOR, Format)                                    \
	OFFSET(CUDA_ARRAY_DESCRIPTOR, NumChannels)                               \
	SIZE(CUDA_ARRAY3D_DESCRIPTOR)                                            \
	OFFSET(CUDA_ARRAY3D_DESCRIPTOR, Format)                                  \
	OFFSET(CUDA_ARRAY3D_DESCRIPTOR, Flags)                                   \
	VALUE(CU_AD_FORMAT_HALF)                                                 \
	VALUE(CU_AD_FORMAT_FLOAT)                                                \
	VALUE(CUDA_ERROR_NOT_SUPPORTED)                                          \
	VALUE(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)                             \
	VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)                          \
	VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)                      \
	VALUE(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)                        \
	VALUE(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)           \
	VALUE(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)                     \
	VALUE(CU_STREAM_CAPTURE_STATUS_ACTIVE)

#define CUDA_ABI_PRINT_SIZE(type) printf("sizeof(%s) %zu\n", #type, sizeof(type));
#define CUDA_ABI_PRINT_OFFSET(type, member)                                      \
	printf("offsetof(%s.%s) %zu\n", #type, #member, offsetof(type, member));
#define CUDA_ABI_PRINT_VALUE(name) printf("%s %lld\n", #name, (long long)(name));

/* Prints every fact, one per line; returns 0 when stdout took them. */
static inline int cuda_abi_print(void)
{
	CUDA_ABI_FACTS(CUDA_ABI_PRINT_SIZE, CUDA_ABI_PRINT_OFFSET, CUDA_ABI_PRINT_VALUE)
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

#endif
