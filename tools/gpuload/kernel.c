/* kernel.c — the PTX text of gpuload_spin (see kernel.h). Written by hand;
 * tests/simdev/test-ptx.sh assembles it with ptxas for sm_80 and sm_90.
 *
 * Each thread reads the global nanosecond timer once at entry and loops
 * until (now - start) >= ns; the subtraction keeps the test right even if
 * the timer wraps. */
#include "kernel.h"

const char gl_kernel_ptx[] =
	"//\n"
	"// gpuload_spin: occupy the SM for param_0 nanoseconds of %globaltimer.\n"
	"//\n"
	".version 8.0\n"
	".target sm_80\n"
	".address_size 64\n"
	"\n"
	".visible .entry " GL_KERNEL_NAME "(\n"
	"\t.param .u64 " GL_KERNEL_NAME "_param_0\n"
	")\n"
	"{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b64 %rd<5>;\n"
	"\n"
	"\tld.param.u64 %rd1, [" GL_KERNEL_NAME "_param_0];\n"
	"\tmov.u64 %rd2, %globaltimer;\n"
	"$L_spin:\n"
	"\tmov.u64 %rd3, %globaltimer;\n"
	"\tsub.u64 %rd4, %rd3, %rd2;\n"
	"\tsetp.lt.u64 %p1, %rd4, %rd1;\n"
	"\t@%p1 bra $L_spin;\n"
	"\tret;\n"
	"}\n";
