// Derivatives of the projection dynamics at constant rank (see derivatives.hpp): the
// NumPy reference is pfaff.derivatives (projection.py: Solver, pseudo_inverse_terms,
// rank_radius; terms.py: the Pinocchio partials), followed equation by equation; the
// factors of A (rank, bases, A^+) are in derivatives_factor.cpp.
#include "algorithms/derivatives.hpp"
#include "algorithms/householder.hpp"
#include "algorithms/rnea_partials.hpp"
#include "algorithms/tree_factor.hpp"

#include <algorithm>
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
  } // namespace

  Differentiator::Differentiator(const Model & mo, Data & d)
  : mo_(mo)
  , d_(d)
  , dd_(mo.model)
  , kd_(mo, d, dd_, dAB_, X_)
  {
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
    const auto & model = mo.model;
    const int nv = model.nv;
    m_ = mo.m;
    dAB_.setZero(m_ * nv, nv);
    int row = 0;
    for (const Spec & s : mo.specs)
    {
      RowSupport b{row, s.dim, {}};
      const bool own = windowed(s) && !mo.mimic; // else every coordinate
      std::vector<char> on(std::size_t(nv), char(!own));
      for (int slot : {s.s1, s.s2})
      {
        const pinocchio::JointIndex j = slot >= 0 ? mo.frame_slots[std::size_t(slot)].joint : 0;
        if (own && j > 0) // the joint's last coordinate and its ancestors (Pinocchio's)
        {
          const int last = model.idx_vs[j] + model.nvs[j] - 1;
          for (const int i : dd_.supports_fromRow[std::size_t(last)])
            on[std::size_t(i)] = 1;
        }
      }
      for (int i = 0; i < nv; ++i)
        if (on[std::size_t(i)])
          b.cols.push_back(i);
      dense_dA_ = dense_dA_ || int(b.cols.size()) == nv;
      supports_.push_back(std::move(b));
      row += s.dim;
    }
  }

  void Differentiator::zero_dA()
  {
    if (dense_dA_) // a spec over every coordinate: one memset of the whole
    {
      dAB_.setZero();
      return;
    }
    const Eigen::Index ld = dAB_.rows();
    for (const RowSupport & b : supports_)
      for (int c : b.cols)
      {
        double * col = dAB_.data() + c * ld + b.row;
        for (int k : b.cols)
        {
          double * x = col + std::size_t(k) * std::size_t(m_);
          if (b.dim == 3) // a point's rows: stored in place (a memset call each costs more)
            x[0] = x[1] = x[2] = 0.0;
          else
            std::fill_n(x, b.dim, 0.0);
        }
      }
  }

  double Differentiator::dA_lambda()
  {
    const int nv = mo_.nv();
    const Eigen::Index ld = dAB_.rows();
    DAtl_.setZero(nv, nv);
    double sq[4] = {0.0, 0.0, 0.0, 0.0}; // independent sums (a row's entries in turn)
    for (const RowSupport & b : supports_)
    {
      const double * l = lam_.data() + b.row;
      for (int c : b.cols)
      {
        const double * col = dAB_.data() + c * ld + b.row;
        double * out = DAtl_.data() + c; // row c of DAtl_ (column k: + k nv)
        if (b.dim == 3) // a point's rows: three sums a pair, unrolled
          for (int k : b.cols)
          {
            const double * x = col + std::size_t(k) * std::size_t(m_);
            out[std::size_t(k) * std::size_t(nv)] += x[0] * l[0] + x[1] * l[1] + x[2] * l[2];
            sq[0] += x[0] * x[0];
            sq[1] += x[1] * x[1];
            sq[2] += x[2] * x[2];
          }
        else
          for (int k : b.cols)
          {
            const double * x = col + std::size_t(k) * std::size_t(m_);
            double t = 0.0;
            for (int r = 0; r < b.dim; ++r)
            {
              t += x[r] * l[r];
              sq[r & 3] += x[r] * x[r];
            }
            out[std::size_t(k) * std::size_t(nv)] += t;
          }
      }
    }
    return (sq[0] + sq[1]) + (sq[2] + sq[3]);
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
    auto Nm = out_.da.rightCols(nv);
    auto P = out_.dF.rightCols(nv);
    if (qr_rows_) // V2 = Q [0; I] (the workspace: no allocation per call)
    {
      V2_.setZero(nv, nv - m);
      V2_.bottomRows(nv - m).setIdentity();
      detail::apply_q(QR_, hc_, m, V2_);
    }
    P.setIdentity();
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
      Nm.setZero();
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
    out.da.resize(nv, 3 * nv);
    out.dlam.resize(m, 3 * nv);
    out.dF.resize(nv, 3 * nv);
    auto Nm = out.da.rightCols(nv);
    auto P = out.dF.rightCols(nv);
    auto D = out.dlam.rightCols(nv); // dlambda/dtau = A^+T P
    if (range)
    {
      range_space(M);
      Nm = Minv_;
      if (r)
      {
        product(Nm, Yr_.transpose(), Yr_, -1.0, true);
        product(D, Er_.transpose(), Yr_, 1.0, false); // A^+T P (P: below)
      }
      else
        P.setZero();
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
    // the pass writes the tree's blocks alone, the others stay at the zero set here. A
    // plant has no such passes: central differences of its own terms instead
    const bool plant = bool(mo.plant);
    if (plant) // a mechanism given in closed form: RHS_ = d(M a + h - Q), dAB_, X_
      plant_partials(q, v);
    else
    {
      RHS_.setZero(nv, 2 * nv);
      // the forward quantities of the mass pass dynamics_state just ran at (q, v), where
      // it ran the fused pass (a mass that stood from the last q took RNEA's instead)
      rnea_partials(model, dd_, q, v, a_, RHS_, d.st_.bias == d.st_.mass ? &d.data : nullptr);
      zero_dA();
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
    // Column k of DAtl_ is dA_k^T lambda (dA_lambda, over the rows' supports); column k
    // of dAB_ a (read as m x nv) is dA_k a.
    if (!plant && !fpoints_.empty()) // M a + h_rnea = tau + Q(q, v) - A^T lambda
    {
      RHS_.leftCols(nv) = fq_.dQq - RHS_.leftCols(nv);
      RHS_.rightCols(nv) = fq_.dQv - RHS_.rightCols(nv);
    }
    else
      RHS_ = -RHS_;
    double gk = 0.0; // ||dA||_F^2
    if (m)
    {
      gk = dA_lambda();
      RHS_.leftCols(nv) -= DAtl_;
      // dlam_dq = A^+T dF_dq - A^+T dA^T lambda (+ the terms where rank < m) with dF_dq =
      // P rhs + dA^T lambda: the dA^T lambda terms cancel, dlamA_ keeps the rest
      if (left_null_)
      {
        // y_k += A^+T dA_k^T Qd; dlamA_k += (I - U1 U1^T) dA_k A^+ lambda
        const Eigen::Map<const MatX> dAw(dAB_.data(), m, nv * nv);
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
      auto & EtE = G_; // G is factored: its storage takes Er^T Er
      product(EtE, Er_.transpose(), Er_, 1.0, false);
      // q's and v's columns side by side (RHS_, X_: nv x 2 nv, m x 2 nv): one product
      // each, into the result's first two blocks. dF = A^T dlambda in q, v and tau at
      // once: along tau that is P, as A^T E^T = (E A)^T = B^T (the rows of B lie in A's
      // row space)
      auto W = out.da.leftCols(2 * nv);
      product(W, Nm, RHS_, 1.0, false);
      product(W, D.transpose(), X_, -1.0, true);
      auto dlam = out.dlam.leftCols(2 * nv);
      product(dlam, D, RHS_, 1.0, false);
      product(dlam, EtE, X_, 1.0, true);
      product(out.dF, d.A.transpose(), out.dlam, 1.0, false);
    }
    else if (range) // no row kept: da = M^-1 rhs, no force
    {
      product(out.da.leftCols(2 * nv), Minv_, RHS_, 1.0, false);
      out.dF.leftCols(2 * nv).setZero();
      out.dlam.setZero();
    }
    else // rhs = rhs' + (M A^+) X, da = -A^+ X + Nm rhs
    {
      auto W = out.da.leftCols(2 * nv);
      if (m)
      {
        product(MAp_, M, Ap_, 1.0, false);
        product(RHS_, MAp_, X_, 1.0, true);
        product(W, Ap_, X_, -1.0, false);
      }
      else
        W.setZero();
      product(W, Nm, RHS_, 1.0, true);
      product(out.dF.leftCols(2 * nv), P, RHS_, 1.0, false);
      product(out.dlam, Ap_.transpose(), out.dF, 1.0, false); // A^+T [P rhs, P]
    }
    if (m)
      out.dF.leftCols(nv) += DAtl_;
    if (left_null_)
      out.dlam.leftCols(nv) += dlamA_;
    out.a = a_;
    out.F = F_;
    out.lam = lam_;

    // rank_radius: first-order distance to a change of the rank decision
    out.radius = std::numeric_limits<double>::infinity();
    if (m && out.sigma.size())
    {
      double gd = 0.0;
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
