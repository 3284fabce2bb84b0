/* cuda-abi-probe.c — prints the CUDA toolkit's answers to the layout facts
 * in cuda-abi-facts.h, from the real <cuda.h>. Built and run only by
 * tests/simdev/test-cuda-abi.sh, where the toolkit is installed; its output
 * is compared with cuda-abi-ours.c's. */
#include <cuda.h>

#include "cuda-abi-facts.h"

int main(void)
{
	return cuda_abi_print();
}
