/*
 * A stand-in for the NVIDIA driver's libcuda.so.1 on a host WITHOUT a GPU, for tests only.
 *
 * The nvidia-cupynumeric / legate pip wheels link libcuda.so.1, so on a machine without the
 * driver `import cupynumeric` fails before Legate can fall back to its CPU processors. This
 * library answers what the real driver answers on a host with no GPU: every entry point reports
 * CUDA_ERROR_NO_DEVICE (cuInit first), and cuGetProcAddress hands out such entry points, so
 * Legate's Realm finds no CUDA device and runs on CPUs.
 *
 * It is built by the cuPyNumeric test session (`nox -s cupynumeric`, see
 * tests/cupynumeric_ci/README.md) and is never installed or shipped with tyxonq.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

typedef int CUresult;
#define CUDA_SUCCESS 0
#define CUDA_ERROR_NO_DEVICE 100

static CUresult no_device(void) { return CUDA_ERROR_NO_DEVICE; }

CUresult cuInit(unsigned int flags) { (void)flags; return CUDA_ERROR_NO_DEVICE; }
CUresult cuDriverGetVersion(int *version) {
  if (version) *version = 12080; /* a driver API version; devices: none */
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int *count) { if (count) *count = 0; return CUDA_ERROR_NO_DEVICE; }
CUresult cuGetErrorString(CUresult error, const char **text) {
  (void)error;
  if (text) *text = "no CUDA device (tyxonq test stand-in for libcuda.so.1)";
  return CUDA_SUCCESS;
}
CUresult cuGetErrorName(CUresult error, const char **text) {
  (void)error;
  if (text) *text = "CUDA_ERROR_NO_DEVICE";
  return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(unsigned long long pointer) { (void)pointer; return CUDA_ERROR_NO_DEVICE; }
CUresult cuMemFreeHost(void *pointer) { (void)pointer; return CUDA_ERROR_NO_DEVICE; }

/* Entry points by name: this library's own where it has one, else one reporting no device. */
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                             unsigned long long flags, int *status) {
  (void)version; (void)flags;
  void *self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void *found = (self && symbol) ? dlsym(self, symbol) : NULL;
  if (pfn) *pfn = found ? found : (void *)no_device;
  if (status) *status = 0; /* CU_GET_PROC_ADDRESS_SUCCESS */
  return CUDA_SUCCESS;
}
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
