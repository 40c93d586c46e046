// The partials of a mechanism given in closed form (Model::plant, pfaff.plant): its M, h
// and frames come from Python at each state, with no derivative pass of Pinocchio's
// behind them (the core's pinocchio::Model of a plant is a stand-in chain: see
// pfaff/plant.py). The Differentiator takes what it would take from Pinocchio's passes and
// the kinds' derive_K by central differences of the terms the core evaluates itself at
// neighbouring states: the plant's pass, the force elements' Q, every kind's rows. The
// NumPy reference is pfaff.derivatives.terms (plant_partials and the rows' central
// differences, _fd_rows), with the same steps.
#include "algorithms/derivatives.hpp"

#include <algorithm>

namespace pfaff
{
  void Differentiator::terms_at(const VecX & q, const VecX & v)
  {
    dynamics_state(mo_, d_, q, v, false);
    evaluate(mo_, d_, q, v, true);
    fs_.noalias() = dense_M(mo_, d_) * a_; // M a + h - Q (d.h holds h - Q)
    fs_ += d_.h;
  }

  void Differentiator::plant_partials(const VecX & q, const VecX & v)
  {
    const int nv = mo_.nv(), m = mo_.m;
    const double hq = kPlantStep;
    // the drift is quadratic in v and h - Q's v-dependence is a user's law: one step
    // scaled with the speed keeps the rounding (eps |f| / step) at the q side's level
    const double hv = kPlantStep * std::max(1.0, nv ? v.cwiseAbs().maxCoeff() : 0.0);
    RHS_.resize(nv, 2 * nv);
    X_.resize(m, 2 * nv);
    qs_ = q;
    vs_ = v;
    for (int side = 0; side < 2; ++side) // q's columns, then v's
    {
      VecX & x = side == 0 ? qs_ : vs_;
      const double step = side == 0 ? hq : hv;
      for (int k = 0; k < nv; ++k)
      {
        const double x0 = x(k);
        x(k) = x0 + step; // the plant's configuration is the vector space q + dv
        terms_at(qs_, vs_);
        fp_ = fs_;
        Ap_s_ = d_.A;
        dp_ = d_.drift;
        x(k) = x0 - step;
        terms_at(qs_, vs_);
        x(k) = x0;
        const double s = 0.5 / step;
        const int c = side * nv + k;
        RHS_.col(c) = s * (fp_ - fs_);
        X_.col(c) = s * (dp_ - d_.drift);
        if (side == 0 && m) // dA_k, and its share of d(A a + drift)/dq
        {
          auto dAk = dAB_.middleRows(Eigen::Index(k) * m, m);
          dAk = s * (Ap_s_ - d_.A);
          X_.col(c).noalias() += dAk * a_;
        }
      }
    }
    terms_at(q, v); // the state's own terms again: what follows reads M and A of (q, v)
  }
} // namespace pfaff
