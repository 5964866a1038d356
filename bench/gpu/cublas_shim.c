/* Part of bench/gpu/make_bundle.sh: see there. */
/* A libcublas.so.12 that forwards the eight cuBLAS calls faiss 1.15.1 makes to libcublas.so.13
   (the v2 API is unchanged between the two for these calls), and logs the math modes and
   compute types asked for, so a run can show that no TF32 or reduced-precision path is used. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
typedef int st; typedef void *H;
static void *lib;
static FILE *logf_;
static void *sym(const char *n) {
  if (!lib) {
    const char *p = getenv("CUBLAS13_PATH");
    lib = dlopen(p ? p : "libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "cublas shim: %s\n", dlerror()); abort(); }
    const char *l = getenv("CUBLAS_SHIM_LOG");
    if (l) logf_ = fopen(l, "a");
  }
  void *f = dlsym(lib, n);
  if (!f) { fprintf(stderr, "cublas shim: no %s\n", n); abort(); }
  return f;
}
#define LOG(...) do { if (logf_) { fprintf(logf_, __VA_ARGS__); fflush(logf_); } } while (0)
st cublasCreate_v2(H *h) { static st (*f)(H *); if (!f) f = sym("cublasCreate_v2"); return f(h); }
st cublasDestroy_v2(H h) { static st (*f)(H); if (!f) f = sym("cublasDestroy_v2"); return f(h); }
st cublasSetStream_v2(H h, void *s) { static st (*f)(H, void *); if (!f) f = sym("cublasSetStream_v2"); return f(h, s); }
st cublasGetMathMode(H h, int *m) { static st (*f)(H, int *); if (!f) f = sym("cublasGetMathMode"); return f(h, m); }
st cublasSetMathMode(H h, int m) { static st (*f)(H, int); if (!f) f = sym("cublasSetMathMode"); LOG("SetMathMode %d\n", m); return f(h, m); }
st cublasSgemmEx(H h, int ta, int tb, int m, int n, int k, const float *al, const void *A, int At, int lda,
                 const void *B, int Bt, int ldb, const float *be, void *C, int Ct, int ldc) {
  static st (*f)(H, int, int, int, int, int, const float *, const void *, int, int, const void *, int, int,
                 const float *, void *, int, int);
  if (!f) f = sym("cublasSgemmEx");
  LOG("SgemmEx types %d %d %d\n", At, Bt, Ct);
  return f(h, ta, tb, m, n, k, al, A, At, lda, B, Bt, ldb, be, C, Ct, ldc);
}
st cublasGemmEx(H h, int ta, int tb, int m, int n, int k, const void *al, const void *A, int At, int lda,
                const void *B, int Bt, int ldb, const void *be, void *C, int Ct, int ldc, int ct, int algo) {
  static st (*f)(H, int, int, int, int, int, const void *, const void *, int, int, const void *, int, int,
                 const void *, void *, int, int, int, int);
  if (!f) f = sym("cublasGemmEx");
  LOG("GemmEx types %d %d %d compute %d algo %d\n", At, Bt, Ct, ct, algo);
  return f(h, ta, tb, m, n, k, al, A, At, lda, B, Bt, ldb, be, C, Ct, ldc, ct, algo);
}
st cublasGemmStridedBatchedEx(H h, int ta, int tb, int m, int n, int k, const void *al, const void *A, int At,
                              int lda, long long sA, const void *B, int Bt, int ldb, long long sB, const void *be,
                              void *C, int Ct, int ldc, long long sC, int bc, int ct, int algo) {
  static st (*f)(H, int, int, int, int, int, const void *, const void *, int, int, long long, const void *, int,
                 int, long long, const void *, void *, int, int, long long, int, int, int);
  if (!f) f = sym("cublasGemmStridedBatchedEx");
  LOG("GemmStridedBatchedEx types %d %d %d compute %d algo %d\n", At, Bt, Ct, ct, algo);
  return f(h, ta, tb, m, n, k, al, A, At, lda, sA, B, Bt, ldb, sB, be, C, Ct, ldc, sC, bc, ct, algo);
}
