#pragma once
// GPUBENCH_HD marks a function compiled for the host and, under nvcc, the device too: the
// arithmetic a kernel and its CPU reference share, written once.
#if defined(__CUDACC__)
#define GPUBENCH_HD __host__ __device__
#else
#define GPUBENCH_HD
#endif
