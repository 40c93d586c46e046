// The AVX2 + FMA kernel of the derivatives' dense products (dense_product.hpp): C (+)=
// alpha A B, column-major, in blocks of 8 rows (two 4-wide registers) by up to 4
// columns, each block's 8 x 4 sums held in registers over the depth (one FMA per
// register per step: A's column loaded once, B's entry broadcast), then 4 rows, then the
// last 1-3 rows through a masked load. Only intrinsics and plain loops here, in
// functions compiled for AVX2 + FMA alone (the target attribute): the rest of the core
// stays on the baseline, and the kernel is called only where the CPU has both.
#include "algorithms/dense_product.hpp"

#include <cstdlib>
#include <immintrin.h>

namespace pfaff::detail
{
  namespace
  {
#define PFAFF_FMA __attribute__((target("avx2,fma"))) inline

    /// the 8 (or 4, with Two false) x NJ block at rows i, columns j
    template<int NJ, bool Two>
    PFAFF_FMA void block(int i, int j, int k, double alpha, const double * A, int lda,
                         const double * B, int ldb, double * C, int ldc, bool accumulate)
    {
      __m256d c0[NJ], c1[NJ];
      for (int jj = 0; jj < NJ; ++jj)
      {
        c0[jj] = _mm256_setzero_pd();
        c1[jj] = _mm256_setzero_pd();
      }
      const double * a = A + i;
      const double * b = B + long(j) * ldb;
      for (int kk = 0; kk < k; ++kk, a += lda)
      {
        const __m256d a0 = _mm256_loadu_pd(a);
        __m256d a1 = _mm256_setzero_pd();
        if (Two)
          a1 = _mm256_loadu_pd(a + 4);
        for (int jj = 0; jj < NJ; ++jj)
        {
          const __m256d bb = _mm256_broadcast_sd(b + long(jj) * ldb + kk);
          c0[jj] = _mm256_fmadd_pd(a0, bb, c0[jj]);
          if (Two)
            c1[jj] = _mm256_fmadd_pd(a1, bb, c1[jj]);
        }
      }
      const __m256d al = _mm256_set1_pd(alpha);
      for (int jj = 0; jj < NJ; ++jj)
      {
        double * c = C + long(j + jj) * ldc + i;
        __m256d r0 = _mm256_mul_pd(al, c0[jj]);
        if (accumulate)
          r0 = _mm256_add_pd(_mm256_loadu_pd(c), r0);
        _mm256_storeu_pd(c, r0);
        if (Two)
        {
          __m256d r1 = _mm256_mul_pd(al, c1[jj]);
          if (accumulate)
            r1 = _mm256_add_pd(_mm256_loadu_pd(c + 4), r1);
          _mm256_storeu_pd(c + 4, r1);
        }
      }
    }

    /// the last `rows` (1 to 3) rows from i, columns j .. j + NJ - 1, through masked
    /// loads and stores (no read or write past the column's end)
    template<int NJ>
    PFAFF_FMA void tail(int rows, int i, int j, int k, double alpha, const double * A, int lda,
                        const double * B, int ldb, double * C, int ldc, bool accumulate)
    {
      const __m256i mask = _mm256_setr_epi64x(
        rows > 0 ? -1 : 0, rows > 1 ? -1 : 0, rows > 2 ? -1 : 0, 0);
      __m256d c0[NJ];
      for (int jj = 0; jj < NJ; ++jj)
        c0[jj] = _mm256_setzero_pd();
      const double * a = A + i;
      const double * b = B + long(j) * ldb;
      for (int kk = 0; kk < k; ++kk, a += lda)
      {
        const __m256d a0 = _mm256_maskload_pd(a, mask);
        for (int jj = 0; jj < NJ; ++jj)
          c0[jj] = _mm256_fmadd_pd(a0, _mm256_broadcast_sd(b + long(jj) * ldb + kk), c0[jj]);
      }
      const __m256d al = _mm256_set1_pd(alpha);
      for (int jj = 0; jj < NJ; ++jj)
      {
        double * c = C + long(j + jj) * ldc + i;
        __m256d r0 = _mm256_mul_pd(al, c0[jj]);
        if (accumulate)
          r0 = _mm256_add_pd(_mm256_maskload_pd(c, mask), r0);
        _mm256_maskstore_pd(c, mask, r0);
      }
    }

    template<int NJ>
    PFAFF_FMA void columns(int m, int j, int k, double alpha, const double * A, int lda,
                           const double * B, int ldb, double * C, int ldc, bool accumulate)
    {
      int i = 0;
      for (; i + 8 <= m; i += 8)
        block<NJ, true>(i, j, k, alpha, A, lda, B, ldb, C, ldc, accumulate);
      if (i + 4 <= m)
      {
        block<NJ, false>(i, j, k, alpha, A, lda, B, ldb, C, ldc, accumulate);
        i += 4;
      }
      if (i < m)
        tail<NJ>(m - i, i, j, k, alpha, A, lda, B, ldb, C, ldc, accumulate);
    }
#undef PFAFF_FMA

    bool ask_cpu()
    {
      if (std::getenv("PFAFF_NO_AVX2"))
        return false;
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
  } // namespace

  bool fma_kernel()
  {
    static const bool on = ask_cpu();
    return on;
  }

  __attribute__((target("avx2,fma"))) void gemm_fma(
    int m, int n, int k, double alpha, const double * A, int lda, const double * B, int ldb,
    double * C, int ldc, bool accumulate)
  {
    int j = 0;
    for (; j + 4 <= n; j += 4)
      columns<4>(m, j, k, alpha, A, lda, B, ldb, C, ldc, accumulate);
    switch (n - j)
    {
    case 3:
      columns<3>(m, j, k, alpha, A, lda, B, ldb, C, ldc, accumulate);
      break;
    case 2:
      columns<2>(m, j, k, alpha, A, lda, B, ldb, C, ldc, accumulate);
      break;
    case 1:
      columns<1>(m, j, k, alpha, A, lda, B, ldb, C, ldc, accumulate);
      break;
    default:
      break;
    }
  }
} // namespace pfaff::detail
