// Derivatives of the projection dynamics at constant rank (see derivatives.hpp): the
// NumPy reference is pfaff.derivatives (projection.py: Solver, pseudo_inverse_terms,
// rank_radius; terms.py: the Pinocchio partials), followed equation by equation; the
// factors of A (rank, bases, A^+) are in derivatives_factor.cpp.
#include "algorithms/derivatives.hpp"
#include "algorithms/householder.hpp"
#include "algorithms/rnea_partials.hpp"
#include "algorithms/tree_factor.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "pinocchio/algorithm/cholesky.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/kinematics-derivatives.hpp"

namespace pfaff
{
  namespace
  {
    /// X <- L^-1 X (L: the lower triangle of G's factor, r x r, r the rank of A; X: r
    /// rows), by hand up to 16 rows: Eigen's blocked triangular solve costs more in its
    /// set-up and its column-by-column chains than the r^2 / 2 products of a column
    void lower_solve(const MatX & L, MatX & X)
    {
      const int r = int(L.rows());
      if (r > 16)
      {
        L.triangularView<Eigen::Lower>().solveInPlace(X);
        return;
      }
      // row by row over all columns: each column's sum is a short chain of its own, the
      // columns' chains independent (a column at a time waits on each entry it stores)
      double li[16];
      for (int i = 0; i < r; ++i)
      {
        for (int l = 0; l < i; ++l)
          li[l] = L(i, l);
        const double inv = 1.0 / L(i, i);
        for (Eigen::Index c = 0; c < X.cols(); ++c)
        {
          double * x = X.data() + c * r;
          double s = x[i];
          for (int l = 0; l < i; ++l)
            s -= li[l] * x[l];
          x[i] = s * inv;
        }
      }
    }

    /// ||X||_F^2 in eight independent sums (dA's m nv^2 entries, the call's largest
    /// array; perf put Eigen's squaredNorm of it at 2 % of the biped's call, its sum
    /// waiting on a chain of additions; this loop's share was not timed apart)
    double squared_norm(const MatX & X)
    {
      const double * x = X.data();
      const Eigen::Index n = X.size();
      double s[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
      Eigen::Index i = 0;
      for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; ++j)
          s[j] += x[i + j] * x[i + j];
      for (; i < n; ++i)
        s[0] += x[i] * x[i];
      return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    }
  } // namespace

  Differentiator::Differentiator(const Model & mo, Data & d, bool held_law)
  : mo_(mo)
  , d_(d)
  , dd_(mo.model)
  , kd_(mo, d, dd_, dAB_, X_)
  {
    const char * where = "Differentiator";
    if (mo.plant)
      throw std::invalid_argument(
        std::string(where) + ": the mechanism is given in closed form (System.set_plant); "
        "its derivatives are taken on the NumPy engine (pfaff.derivatives)");
    if (held_law)
      throw std::invalid_argument(
        std::string(where) + ": the system has a held control law; its derivatives are taken "
        "on the NumPy engine (pfaff.derivatives)");
    auto point = [&](int slot, bool has_off, const Vec3 & off) {
      points_.push_back(kd_.point(slot, has_off, off));
      return int(points_.size()) - 1;
    };
    for (std::size_t i = 0; i < mo.force_elements.specs.size(); ++i)
    {
      const ForceSpec & f = mo.force_elements.specs[i];
      ForcePoint fp{int(i)};
      const int points = force_points(f.kind); // the body points it reads (forces.def)
      if (points >= 1)
        fp.p1 = point(f.s1, f.has_p1, f.p1);
      if (points == 2 && f.s2 >= 0)
        fp.p2 = point(f.s2, f.has_p2, f.p2);
      fpoints_.push_back(fp);
    }
    const int nv = mo.model.nv;
    m_ = mo.m;
    dAB_.setZero(m_ * nv, nv);
  }

  void Differentiator::range_space(const MatX & M)
  {
    const int nv = mo_.nv(), r = out_.rank;
    Minv_.resize(nv, nv);
    if (!mo_.mimic) // M = U D U^T along the tree (O(nv depth) per column)
    {
      mass_factor(mo_, d_);
      detail::tree_minv(d_.data, Yu_, Minv_);
    }
    else
    {
      llt_.compute(M);
      Minv_.setIdentity();
      llt_.solveInPlace(Minv_);
    }
    if (r == 0)
      return;
    Yr_.resize(r, nv);
    product(Yr_, Bt_.transpose(), Minv_, 1.0, false); // B M^-1
    product(G_, Yr_, Bt_, 1.0, false);
    llt_G_.compute(G_);
    const MatX & L = llt_G_.matrixLLT(); // L in its lower triangle
    lower_solve(L, Yr_);
    Er_ = E_;
    lower_solve(L, Er_);
  }

  void Differentiator::null_space(const MatX & M)
  {
    const int nv = mo_.nv(), m = mo_.m;
    MatX & Nm = out_.da_dtau;
    MatX & P = out_.dF_dtau;
    if (qr_rows_) // V2 = Q [0; I] (the workspace: no allocation per call)
    {
      V2_.setZero(nv, nv - m);
      V2_.bottomRows(nv - m).setIdentity();
      detail::apply_q(QR_, hc_, m, V2_);
    }
    P.setIdentity(nv, nv);
    if (V2_.cols())
    {
      product(MV2_, M, V2_, 1.0, false);
      product(K_, V2_.transpose(), MV2_, 1.0, false);
      llt_.compute(K_);
      S_ = llt_.solve(V2_.transpose());
      product(Nm, V2_, S_, 1.0, false);
      product(P, MV2_, S_, -1.0, true); // M Nm = (M V2) (V2^T M V2)^-1 V2^T
    }
    else
      Nm.setZero(nv, nv);
  }

  void Differentiator::compute(const VecX & q, const VecX & v, const VecX & tau)
  {
    const Model & mo = mo_;
    Data & d = d_;
    DynamicsDerivatives & out = out_;
    const auto & model = mo.model;
    const int nv = model.nv, m = mo.m;
    const double tol = mo.opt.rank_tol;
    if (m != m_)
      throw std::invalid_argument("Differentiator.compute: the system has " + std::to_string(m)
                                  + " rows, it had " + std::to_string(m_)
                                  + " when the Differentiator was made: make a new one");
    d.t_ = 0.0; // a Python force law's time: the derivatives are those at t = 0
    dynamics_state(mo, d, q, v, false);
    evaluate(mo, d, q, v, true);
    const MatX & M = dense_M(mo, d);
    const VecX & h = d.h;
    const VecX & drift = d.drift;
    factor(d.A);
    const int r = out.rank;

    // Solver: a = C v + Nm (tau - h - M C v), F, lambda (eq. 16, 22, 32), with
    // Nm = V2 (V2^T M V2)^-1 V2^T = M^-1 - M^-1 B^T G^-1 B M^-1 and P = I - M Nm =
    // B^T G^-1 B M^-1. In the range-space form (B: orthonormal rows spanning A's row
    // space, so N(B) = N(A); G = B M^-1 B^T = L L^T; Yr = L^-1 B M^-1, Br = L^-1 B)
    // Nm = M^-1 - Yr^T Yr, P = Br^T Yr = A^T (Er^T Yr) (formed so, with dF):
    // from kRangeNv coordinates on, where its thin products cost less than the
    // null-space form's nv x nv ones; below, the null-space form's fewer calls do
    const bool range = nv >= kRangeNv;
    MatX & Nm = out.da_dtau;
    MatX & P = out.dF_dtau;
    if (range)
    {
      range_space(M);
      Nm = Minv_;
      if (r)
      {
        product(Nm, Yr_.transpose(), Yr_, -1.0, true);
        product(out.dlam_dtau, Er_.transpose(), Yr_, 1.0, false); // A^+T P (P: below)
      }
      else
        P.setZero(nv, nv);
    }
    else
      null_space(M);
    Cv_.noalias() = -Ap_ * drift;
    res_ = tau - h;
    res_.noalias() -= M * Cv_;
    a_ = Cv_;
    a_.noalias() += Nm * res_;
    res_ = tau - h;
    res_.noalias() -= M * a_;
    y_.noalias() = d.A * res_; // F = A^+ A res: res on the row space of A
    F_.noalias() = Ap_ * y_;
    lam_.noalias() = Ap_.transpose() * F_;
    if (left_null_)
    {
      Qd_ = drift;
      ud_.noalias() = U1_.transpose() * drift; // (workspaces: no temporary on the heap)
      Qd_.noalias() -= U1_ * ud_;
    }

    // terms.py: Pinocchio's partials (RNEA at a, then kinematic Hessians) and the rows':
    // dA_k = dA / d delta_k stacked as the rows k m .. k m + m - 1 of dAB_; X_ =
    // [d(A a + drift)/dq at this a (the drift's and dA_k a together), d drift/dv]
    // (rnea_partials: Pinocchio's pass without dtau/da, which is M, and tau). The
    // partials go straight into RHS_'s halves, column-major as the products below read
    // them (Pinocchio's own dtau_dq, dtau_dv are row-major: a transposing copy each);
    // the pass writes the tree's blocks alone, the others stay at the zero set here
    RHS_.setZero(nv, 2 * nv);
    // the forward quantities of the mass pass dynamics_state just ran at (q, v), where
    // it ran the fused pass (a mass that stood from the last q took RNEA's instead)
    rnea_partials(model, dd_, q, v, a_, RHS_, d.st_.bias == d.st_.mass ? &d.data : nullptr);
    dAB_.setZero();
    X_.setZero(m, 2 * nv);
    kd_.begin(q, v, a_);
    if (needs_hessians())
      kd_.hessians();
    if (!fpoints_.empty())
      force_partials(q, v);
    // each kind's derivative rows (derive_K, src/cpp/kinds/*.cpp), by its position in
    // kinds.def
    using Derive = void (*)(KindDerivatives &, const Spec &, int);
    static constexpr Derive derive[] = {
#define PFAFF_KIND(K, rows, window, holonomic) &kinds::derive_##K,
#include "kinds.def"
#undef PFAFF_KIND
    };
    int row = 0;
    for (const Spec & s : mo.specs)
    {
      derive[int(s.kind)](kd_, s, row);
      row += s.dim;
    }

    // Solver.along in q and v at once (pseudo_inverse_terms for dA in q; the
    // Golub-Pereyra terms in I - A A^+ vanish when A has full row rank): with
    // r1 = -A^+ X and r2 of each direction,
    //   da = r1 + Nm rhs,  dF = (r2_0 - r2) + P rhs,  rhs = r2 - M r1 = r2 + (M A^+) X,
    // r2_0 being r2 without the dA^T lambda terms (M da = r2 - P rhs), so that
    // dlambda = A^+T P rhs (the null-space form's products). In the range-space
    // form, with rhs' = rhs - M A^+ X, W = M^-1 rhs' and Nm M A^+ = A^+ - M^-1 B^T G^-1 E
    // (E = B A^+, Er = L^-1 E), T = L^-1 (B W + E X) = Br W + Er X gives
    //   da = W - Yr^T T,  P rhs = Br^T T,  A^+T P rhs = Er^T T  (A^+T B^T = E^T),
    // for q and v at once; along tau da = Nm, dF = P and dlambda = A^+T P = Er^T Yr.
    // Column k of DAtl_ is dA_k^T lambda: dAB_ read as m x nv^2 times lambda gives it
    // transposed; column k of dAB_ a (read as m x nv) is dA_k a.
    if (!fpoints_.empty()) // M a + h_rnea = tau + Q(q, v) - A^T lambda
    {
      RHS_.leftCols(nv) = fq_.dQq - RHS_.leftCols(nv);
      RHS_.rightCols(nv) = fq_.dQv - RHS_.rightCols(nv);
    }
    else
      RHS_ = -RHS_;
    if (m)
    {
      const Eigen::Map<const MatX> dAw(dAB_.data(), m, nv * nv);
      // (dAw^T lambda read as nv x nv, transposed: a dot product of m terms per entry,
      // written where it goes, no copy of z; perf put Eigen's transposed matrix-vector
      // product of this shape and the transposing copy at 3.6 % of the biped's call, a
      // plain loop with one sum per entry higher: hence four sums at a time)
      DAtl_.resize(nv, nv);
      for (int j = 0; j < nv; ++j)
      {
        const double * col = dAB_.data() + std::size_t(j) * nv * m;
        int i = 0;
        for (; i + 4 <= nv; i += 4, col += 4 * m) // four independent sums at a time
        {
          double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
          for (int k = 0; k < m; ++k)
          {
            const double l = lam_[k];
            s0 += col[k] * l;
            s1 += col[m + k] * l;
            s2 += col[2 * m + k] * l;
            s3 += col[3 * m + k] * l;
          }
          DAtl_(j, i) = s0;
          DAtl_(j, i + 1) = s1;
          DAtl_(j, i + 2) = s2;
          DAtl_(j, i + 3) = s3;
        }
        for (; i < nv; ++i, col += m)
        {
          double s = 0.0;
          for (int k = 0; k < m; ++k)
            s += col[k] * lam_[k];
          DAtl_(j, i) = s;
        }
      }
      RHS_.leftCols(nv) -= DAtl_;
      // dlam_dq = A^+T dF_dq - A^+T dA^T lambda (+ the terms where rank < m) with dF_dq =
      // P rhs + dA^T lambda: the dA^T lambda terms cancel, dlamA_ keeps the rest
      if (left_null_)
      {
        // y_k += A^+T dA_k^T Qd; dlamA_k += (I - U1 U1^T) dA_k A^+ lambda
        z_.noalias() = dAw.transpose() * Qd_;
        Yq_ = Eigen::Map<const MatX>(z_.data(), nv, nv).transpose();
        auto Xq = X_.leftCols(nv);
        product(Xq, Ap_.transpose(), Yq_, 1.0, true);
        Aplam_.noalias() = Ap_ * lam_;
        x_.noalias() = dAB_ * Aplam_;
        const Eigen::Map<const MatX> Xl(x_.data(), m, nv);
        dlamA_ = Xl;
        product(UX_, U1_.transpose(), Xl, 1.0, false);
        product(dlamA_, U1_, UX_, -1.0, true);
      }
    }
    if (range && r)
    {
      // with Br W = Yr RHS (Yr = L^-1 B M^-1): da = Nm RHS - Yr^T Er X and Er^T T =
      // Er^T Yr RHS + Er^T Er X (Er^T Yr = dlam_dtau), for q's and v's
      // columns at once; P rhs = Br^T T = A^T (Er^T T), as B^T = A^T E^T
      // (A^+ A projects onto the row space B^T spans)
      const MatX & D = out.dlam_dtau;
      auto & EtE = G_; // G is factored: its storage takes Er^T Er
      product(EtE, Er_.transpose(), Er_, 1.0, false);
      // q's and v's columns side by side (RHS_, X_: nv x 2 nv, m x 2 nv): one product
      // each, then their halves into the result's fields. dF = A^T dlambda in q, v and
      // tau at once (PR_: m x 3 nv, dlam_dtau the third block): along tau that is P,
      // as A^T E^T = (E A)^T = B^T (the rows of B lie in A's row space)
      product(W_, Nm, RHS_, 1.0, false);
      product(W_, D.transpose(), X_, -1.0, true);
      PR_.resize(m, 3 * nv);
      auto dlam = PR_.leftCols(2 * nv);
      product(dlam, D, RHS_, 1.0, false);
      product(dlam, EtE, X_, 1.0, true);
      PR_.rightCols(nv) = D;
      product(dF_, d.A.transpose(), PR_, 1.0, false);
      out.da_dq = W_.leftCols(nv);
      out.da_dv = W_.rightCols(nv);
      out.dlam_dq = PR_.leftCols(nv);
      out.dlam_dv = PR_.middleCols(nv, nv);
      out.dF_dq = dF_.leftCols(nv);
      out.dF_dv = dF_.middleCols(nv, nv);
      P = dF_.rightCols(nv);
    }
    else if (range) // no row kept: da = M^-1 rhs, no force
    {
      product(W_, Minv_, RHS_, 1.0, false);
      out.da_dq = W_.leftCols(nv);
      out.da_dv = W_.rightCols(nv);
      PR_.setZero(nv, 2 * nv);
      out.dlam_dq.setZero(m, nv);
      out.dlam_dv.setZero(m, nv);
      out.dlam_dtau.setZero(m, nv);
    }
    else // rhs = rhs' + (M A^+) X, da = -A^+ X + Nm rhs
    {
      if (m)
      {
        product(MAp_, M, Ap_, 1.0, false);
        product(RHS_, MAp_, X_, 1.0, true);
        product(W_, Ap_, X_, -1.0, false);
      }
      else
        W_.setZero(nv, 2 * nv);
      product(W_, Nm, RHS_, 1.0, true);
      product(PR_, P, RHS_, 1.0, false);
      out.da_dq = W_.leftCols(nv);
      out.da_dv = W_.rightCols(nv);
      product(out.dlam_dq, Ap_.transpose(), PR_.leftCols(nv), 1.0, false);
      product(out.dlam_dv, Ap_.transpose(), PR_.rightCols(nv), 1.0, false);
      product(out.dlam_dtau, Ap_.transpose(), P, 1.0, false);
    }
    if (!(range && r))
    {
      out.dF_dq = PR_.leftCols(nv);
      out.dF_dv = PR_.rightCols(nv);
    }
    if (m)
      out.dF_dq += DAtl_;
    if (left_null_)
      out.dlam_dq += dlamA_;
    out.a = a_;
    out.F = F_;
    out.lam = lam_;

    // rank_radius: first-order distance to a change of the rank decision
    out.radius = std::numeric_limits<double>::infinity();
    if (m && out.sigma.size())
    {
      double gk = 0.0, gd = 0.0;
      gk = squared_norm(dAB_);
      if (r > 0 && gk > 0)
        out.radius = (out.sigma(r - 1) - tol) / std::sqrt(gk);
      if (U2_.cols() && V2_.cols())
      {
        // sum_k ||U2^T dA_k V2||^2 in two products: dAB_ read as m x nv^2 (column
        // c nv + k: dA_k's column c), U2^T times it read as (m - r) nv x nv (row
        // k (m - r) + j, column c: (U2^T dA_k)(j, c)), times V2
        const Eigen::Map<const MatX> dAw(dAB_.data(), m, nv * nv);
        product(U2A_, U2_.transpose(), dAw, 1.0, false);
        const Eigen::Map<const MatX> U2dA(U2A_.data(), U2A_.rows() * nv, nv);
        product(UV_, U2dA, V2_, 1.0, false);
        gd = UV_.squaredNorm();
        const double top = r < out.sigma.size() ? out.sigma(r) : 0.0;
        if (gd > 0)
          out.radius = std::min(out.radius, (tol - top) / std::sqrt(gd));
      }
    }
  }
} // namespace pfaff
