// The classical Lagrange-multiplier dynamics (SimOptions.method = "kkt"), the baseline
// the projection method is compared with: the saddle-point system
// [M A^T; A 0] [a; lambda] = [tau - h; -drift] (dynamics.kkt_dynamics), singular where
// A loses row rank, which is refused (KKTSingular) as the NumPy reference refuses it.
#include "model/core.hpp"
#include "algorithms/kkt.hpp"

#include <Eigen/LU>
#include <Eigen/SVD>

#include <cmath>
#include <cstdio>
#include <string>

namespace pfaff
{
  namespace
  {
    // dynamics.kkt_dynamics's message
    std::string kkt_message(int rank, int m, double sigma_min, double rank_tol, double cond)
    {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "KKT matrix singular: A has rank %d < %d rows (sigma_min %.3g <= rank_tol "
                    "%g; condition number %.3g)",
                    rank, m, sigma_min, rank_tol, cond);
      return buf;
    }
  } // namespace

  KKTSingular::KKTSingular(int rank_, int m, double sigma_min_, double rank_tol, double cond_)
  : std::runtime_error(kkt_message(rank_, m, sigma_min_, rank_tol, cond_))
  , rank(rank_)
  , sigma_min(sigma_min_)
  , cond(cond_)
  {
  }

  Status KKTSingular::status(double t, int k, int iterations) const
  {
    Status st;
    st.code = status_code::kkt_singular;
    st.what = what();
    st.index = rank;
    st.value = sigma_min;
    st.extra = cond;
    st.t = t;
    st.step = k;
    st.iterations = iterations;
    return st;
  }

  void kkt_accel(const Model & mo, Data & d, const VecX & tau, VecX & a)
  {
    const int n = mo.model.nv, m = int(d.A.rows());
    const MatX & M = dense_M(mo, d);
    MatX & K = d.K_;
    K.setZero(n + m, n + m);
    K.topLeftCorner(n, n) = M;
    K.topRightCorner(n, m) = d.A.transpose();
    K.bottomLeftCorner(m, n) = d.A;
    // the 2-norm condition number of K (numpy.linalg.cond), recorded as the reference
    // records it: also where the system is refused
    d.kkt_svd_.compute(K);
    const VecX & sk = d.kkt_svd_.singularValues();
    const double cond = sk(0) / sk(n + m - 1);
    if (cond > d.kkt_cond_max_)
      d.kkt_cond_max_ = cond;
    if (m > 0)
    {
      // regular iff A has full row rank, judged by the projection's absolute threshold
      // on A's singular values (not by a pivot of K's LU, which round-off makes 1e-17
      // on one kernel and 0.0 on another)
      d.kkt_svd_A_.compute(d.A);
      const VecX & s = d.kkt_svd_A_.singularValues();
      int rank = 0;
      for (int i = 0; i < s.size(); ++i)
        rank += s(i) > mo.opt.rank_tol;
      if (rank < m)
        throw KKTSingular(rank, m, m <= n ? s(s.size() - 1) : 0.0, mo.opt.rank_tol, cond);
    }
    d.kkt_rhs_.resize(n + m);
    d.kkt_rhs_.head(n) = tau - d.h;
    d.kkt_rhs_.tail(m) = -d.drift;
    d.kkt_lu_.compute(K);
    a = d.kkt_lu_.solve(d.kkt_rhs_).head(n);
  }
} // namespace pfaff
