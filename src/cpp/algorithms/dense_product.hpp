// Dense products at a robot's sizes (tens of rows) for the derivatives: C (+)= alpha L R.
// The core is built for the x86-64 baseline (SSE2: no -march=native, whose wider
// alignment would break Eigen's ABI against the prebuilt Pinocchio), so Eigen's kernels
// run on 2-wide vectors. Where the CPU has AVX2 and FMA (asked once at run time), the
// products run on a 4-wide FMA kernel of their own (dense_product.cpp: intrinsics in
// functions compiled for that target alone, no Eigen in them, so nothing inlined from a
// header is compiled twice for two targets); elsewhere, or with the environment
// variable PFAFF_NO_AVX2 set, on Eigen's. The sums are the same up to their order
// (round-off); the witness is the derivatives' parity with the NumPy reference, run on
// both paths (tests/unit/core/test_dense_product.py).
#pragma once

#include <type_traits>

#include <Eigen/Core>

namespace pfaff::detail
{
  /// whether the AVX2 + FMA kernel runs (the CPU has both, PFAFF_NO_AVX2 unset)
  bool fma_kernel();

  /// C (m x n, leading dimension ldc) (+)= alpha A B, A (m x k, lda) and B (k x n, ldb)
  /// column-major, on the AVX2 + FMA kernel (call it only where fma_kernel())
  void gemm_fma(int m, int n, int k, double alpha, const double * A, int lda,
                const double * B, int ldb, double * C, int ldc, bool accumulate);

  template<class T>
  constexpr bool column_major_direct()
  {
    using Tr = Eigen::internal::traits<T>;
    return (int(Tr::Flags) & Eigen::DirectAccessBit) && !(int(Tr::Flags) & Eigen::RowMajorBit)
           && Eigen::internal::inner_stride_at_compile_time<T>::ret == 1;
  }

  /// dst (+)= alpha l r (accumulate: +=). On the FMA kernel where it runs and dst and r
  /// are column-major with direct access (l too, or a transpose evaluated into
  /// `scratch` first); otherwise coefficient by coefficient where rows + cols + depth
  /// <= 48 (Eigen's blocked GEMM costs more to set up than such a product) and Eigen's
  /// GEMM above
  template<class Dst, class L, class R>
  void product(Dst && dst, const L & l, const R & r, double alpha, bool accumulate,
               Eigen::MatrixXd & scratch)
  {
    using D = std::decay_t<Dst>;
    if constexpr (column_major_direct<D>() && column_major_direct<R>())
    {
      if (fma_kernel() && l.cols() > 0)
      {
        if (!accumulate && (dst.rows() != l.rows() || dst.cols() != r.cols()))
          dst.resize(l.rows(), r.cols());
        if constexpr (column_major_direct<L>())
          gemm_fma(int(l.rows()), int(r.cols()), int(l.cols()), alpha, l.data(),
                   int(l.outerStride()), r.data(), int(r.outerStride()), dst.data(),
                   int(dst.outerStride()), accumulate);
        else
        {
          scratch = l;
          gemm_fma(int(l.rows()), int(r.cols()), int(l.cols()), alpha, scratch.data(),
                   int(scratch.rows()), r.data(), int(r.outerStride()), dst.data(),
                   int(dst.outerStride()), accumulate);
        }
        return;
      }
    }
    if (l.rows() + l.cols() + r.cols() <= 48)
    {
      if (accumulate)
        dst += alpha * l.lazyProduct(r);
      else
        dst = alpha * l.lazyProduct(r);
    }
    else if (accumulate)
      dst.noalias() += alpha * l * r;
    else
      dst.noalias() = alpha * l * r;
  }
} // namespace pfaff::detail
