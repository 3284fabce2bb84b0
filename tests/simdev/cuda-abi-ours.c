/* cuda-abi-ours.c — prints gpupool's answers to the layout facts in
 * cuda-abi-facts.h, from src/include/gp-cuda.h (the header simdev, gpuload
 * and the interposer build against). tests/simdev/test-cuda-abi.sh compares
 * them with the toolkit's (cuda-abi-probe.c). */
#include "include/gp-cuda.h"

#include "cuda-abi-facts.h"

int main(void)
{
	return cuda_abi_print();
}
