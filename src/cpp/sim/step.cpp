// One step: the RK4 / RKMK stages, the Newton-Raphson position correction with the
// M-metric velocity projection and one step of the tableau (step); the loop that records
// (record.cpp) and calls it is Stepper::run (system.cpp).
#include "model/core.hpp"
#include "sim/methods.hpp"
#include "model/check.hpp"
#include "model/core_detail.hpp"
#include "algorithms/tree_factor.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "pinocchio/algorithm/cholesky.hpp"
#include "pinocchio/algorithm/crba.hpp"
#include "pinocchio/algorithm/energy.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "pinocchio/algorithm/kinematics.hpp"
#include "pinocchio/algorithm/rnea.hpp"

namespace pfaff
{
  using detail::abs_max;
  using detail::finite_or;
  using detail::kNaN;
  using detail::skew;

  // -- the step (simulate.integrator, simulate.correction) -------------------------

  void stage_rate(
    const Model & mo, Data & d, const VecX & q, const VecX & theta, const VecX & vi, VecX & out)
  {
    if (!mo.lie_)
    {
      out = vi;
      return;
    }
    pinocchio::dIntegrate(mo.model, q, theta, d.Jint_, pinocchio::ARG1);
    // block by block (the off-diagonal blocks are zero): as one LU of Jint_, in
    // O(sum nv_j^3) instead of O(nv^3)
    out.array() = vi.array() / d.Jint_.diagonal().array();
    for (size_t b = 0; b < mo.lie_blocks_.size(); ++b)
    {
      const auto [i, k] = mo.lie_blocks_[b];
      if (k == 6) // a free flyer's block, Jexp6 of SE(3): block upper triangular
      {
        const auto B = d.Jint_.block<6, 6>(i, i);
        if (B.block<3, 3>(3, 0).isZero(0.0))
        {
          // block back substitution, angular then linear, with the closed-form inverse
          // of the 3 x 3 diagonal blocks (Jexp3 of the rotation: near I at a stage's
          // angles, far from its singularity at |theta| = 2 pi)
          const Mat3 B11 = B.block<3, 3>(3, 3), B00 = B.block<3, 3>(0, 0);
          const Vec3 wa = B11.inverse() * vi.segment<3>(i + 3);
          out.segment<3>(i) = B00.inverse() * (vi.segment<3>(i) - B.block<3, 3>(0, 3) * wa);
          out.segment<3>(i + 3) = wa;
        }
        else // the fixed-size LU (no heap, unrolled)
        {
          const Eigen::Matrix<double, 6, 6> Bf = B;
          out.segment<6>(i) = Bf.partialPivLu().solve(vi.segment<6>(i));
        }
        continue;
      }
      if (k == 3) // a 3-dof joint's block (a ball's Jexp3, a planar joint's): its inverse
      {
        const Mat3 B3 = d.Jint_.block<3, 3>(i, i);
        out.segment<3>(i) = B3.inverse() * vi.segment<3>(i);
        continue;
      }
      d.lu_blocks_[b].compute(d.Jint_.block(i, i, k, k));
      out.segment(i, k).noalias() = d.lu_blocks_[b].solve(vi.segment(i, k));
    }
  }

  namespace
  {
    // the frames, A and Phi at q (no h, no drift): what the correction starts from.
    // with_mass: M at q too (a correction that takes no Newton step projects the
    // velocity with it)
    void position_terms(
      const Model & mo, Data & d, const VecX & q, const VecX & v, bool with_mass)
    {
      kinematics_state(mo, d, q, with_mass);
      evaluate(mo, d, q, v, false);
    }

    // correction.position_scale: max(1, max |p|) over the constraint frames' positions
    // (Phi = p1 - p2 of points 100 m from the origin rounds at 100 times the level of a
    // unit-sized mechanism)
    double position_scale(const Model & mo, const Data & d)
    {
      double scale = 1.0;
      for (const auto & s : mo.specs)
        for (int k : {s.s1, s.s2})
          if (k >= 0)
            scale = std::max(scale, d.frames[k].p.cwiseAbs().maxCoeff());
      for (const auto & c : mo.contacts)
        for (int k : {c.s_obj, c.s_tip})
          scale = std::max(scale, d.frames[k].p.cwiseAbs().maxCoeff());
      return scale;
    }

    // correction.on_manifold, at the Phi and A d holds: a stage where Newton takes no
    // step keeps its velocity (near a fold, N(A) at a q that Phi no longer resolves is
    // tilted from the branch); and, with Pfaffian rows, where those hold to floor_tol
    // max(1, max |v|)
    bool on_manifold(const Model & mo, const Data & d, const VecX & v)
    {
      const double floor_tol = mo.opt.position_floor * position_scale(mo, d);
      if (!(abs_max(d.phi) <= floor_tol))
        return false;
      const double vtol = floor_tol * std::max(1.0, v.cwiseAbs().maxCoeff());
      for (int i : mo.pf_rows)
        if (!(std::abs(d.A.row(i).dot(v)) <= vtol))
          return false;
      return true;
    }
  } // namespace

  double friction_power(const Model & mo, const Data & d, const VecX & v)
  {
    // the force of the slipping rows less their ideal part, (W - A)^T lambda, of the
    // last accel (algorithms/friction.cpp): Coulomb's force -mu f_n s, its power
    // -mu f_n |v_t| <= 0 (ideal rows do no work)
    if (mo.slip.empty())
      return 0.0;
    return -(d.slip_F_ - d.A.transpose() * d.slip_lam_).dot(v);
  }

  double stage(const Model & mo, Data & d, const VecX & tau, VecX & q, VecX & v, VecX & a)
  {
    // steppers.rk_step: a stage on the manifold keeps its state, else it is corrected
    // (no energy account). Where the last stage kept its state this one likely does
    // too (a mechanism at rest): its dynamics' terms come first and serve the test;
    // else the position terms do, and the correction starts from them. Either order
    // computes the same terms of the same state.
    bool dynamics = false; // d holds the dynamics' terms of the stage's (q, v)
    if (mo.opt.stage_projection && mo.m > 0)
    {
      if (d.stage_kept_)
      {
        dynamics_state(mo, d, q, v, false);
        evaluate(mo, d, q, v, true);
        dynamics = true;
      }
      else
        position_terms(mo, d, q, v, false); // off the manifold: Newton will likely move q
      d.stage_kept_ = on_manifold(mo, d, v);
      if (!d.stage_kept_)
      {
        correct(mo, d, q, v, nullptr, true, mo.opt.max_newton);
        dynamics = false;
      }
    }
    if (!dynamics)
    {
      dynamics_state(mo, d, q, v, false);
      evaluate(mo, d, q, v, true);
    }
    // the stage's correction factored this A where Newton stopped (and G of it stands
    // while M does)
    if (!take_vel_factor(d, d.rs_stage_))
      row_space(mo, d, d.A, false, true, d.rs_stage_);
    accel(mo, d, tau, d.rs_stage_, a);
    // power of the force elements' dampers and of Coulomb friction at the stage
    return d.felems.power + friction_power(mo, d, v);
  }

  // Newton-Raphson on the holonomic rows, then the M-metric velocity projection at the
  // corrected q with M there (correction.correct_state). corr null: an RK stage put on
  // the manifold (steppers.rk_step), no bookkeeping of the step's correction (the
  // kinetic energy it removed, added to *corr). terms_stand: d holds the frames, A and
  // Phi of q (the stage computed them)
  Status correct(
    const Model & mo, Data & d, VecX & q, VecX & v, double * corr, bool terms_stand,
    int max_newton)
  {
    Status st;
    if (!terms_stand) // where the last correction took no Newton step this one likely
      position_terms(mo, d, q, v, d.newton_idle_); // takes none: M at q serves it
    // correction.newton_project: stopped on the size of the step in q, its round-off
    // thresholds scaled by the size of the constraint frames' positions
    const double scale = position_scale(mo, d);
    const double floor_tol = mo.opt.position_floor * scale;
    const double step_tol = mo.opt.newton_step_tol * scale;
    double err = abs_max(d.phi);
    double last = std::numeric_limits<double>::infinity();
    int it = 0;
    bool newton_fresh = false; // rs_newton_ factors A_h at the current q
    while (mo.m_h > 0 && it < max_newton)
    {
      row_space(mo, d, holonomic_A(mo, d), false, true, d.rs_newton_);
      newton_fresh = true;
      wt(d.rs_newton_, d.phi, d.y_); // dq = A_h^+ Phi = V1 W^T Phi
      v1(d.rs_newton_, d.y_, d.dq_);
      const double step = d.dq_.size() ? d.dq_.cwiseAbs().maxCoeff() : 0.0;
      if (!std::isfinite(step))
        break;
      if (err <= floor_tol)
        break; // Phi at its round-off level
      if (err <= mo.opt.position_tol && step <= step_tol)
        break; // on the manifold, to newton_step_tol in q
      if (it && !(step < last))
        break; // no progress: the round-off floor
      if (it && step > step_tol) // Newton's rate: step_k ~ K step_{k-1}^2
        d.newton_K_ = step / (last * last);
      d.dq_ = -d.dq_;
      pinocchio::integrate(mo.model, q, d.dq_, d.qs_);
      q = d.qs_;
      // with M of the iterate where Newton likely stops there (its next step, K step^2
      // at the last rate seen, under step_tol): the velocity projection and the
      // dynamics at the corrected q take it as it stands (one pass, not two); else the
      // kinematics alone (M of an iterate Newton moves on from is not read). Either
      // pass places the joints alike: the choice changes no result
      position_terms(mo, d, q, v, d.newton_K_ * step * step <= step_tol);
      newton_fresh = false;
      err = abs_max(d.phi);
      last = step;
      ++it;
    }
    // velocity: v - M^-1 V1 (V1^T M^-1 V1)^-1 V1^T v  (linalg.metric_projection)
    // (all rows holonomic and Newton stopped after factoring A_h at this q: the same
    // factorisation)
    if (mo.m == mo.m_h && newton_fresh)
      std::swap(d.rs_vel_, d.rs_newton_);
    else
      row_space(mo, d, d.A, false, true, d.rs_vel_);
    // the next step's start (run) or this stage's dynamics (stage) reuse rs_vel_ where
    // their A is this one
    const bool reusable = mo.m > 0 && mo.m == mo.m_h;
    d.st_.vel = reusable ? d.rs_vel_.stamp : 0;
    d.st_.vel_epoch = d.st_.epoch;
    if (reusable)
      d.A_vel_ = d.A;
    VecX & vn = d.vn_;
    vn = v;
    // M at the corrected q (the last Newton iterate's CRBA, else one here; the next
    // dynamics at this q take it, its factor and G of rs_vel_ as they stand:
    // mass_and_bias, gram_stands)
    mass_matrix(mo, d, q);
    if (d.rs_vel_.rank > 0)
    {
      // with M's sparse factor; linalg.metric_projection, the NumPy engine's, solves
      // with LU
      mass_factor(mo, d);
      v1t(d.rs_vel_, v, d.y_);
      metric_gram(mo, d, d.rs_vel_); // reused with rs_vel_ (start_terms, stage): gram_stands
      gram_solve(d, d.rs_vel_, d.y_);
      v1(d.rs_vel_, d.y_, d.tmp_);
      detail::tree_solve(d.data, d.tmp_);
      vn -= d.tmp_;
      full_velocity(d.rs_vel_, vn); // a full block's rows fix its velocity: 0.0
    }
    if (corr) // the kinetic energy the correction removed
    {
      const MatX & M = dense_M(mo, d);
      d.tmp_.noalias() = M * vn;
      *corr += 0.5 * vn.dot(d.tmp_);
      d.tmp_.noalias() = M * v;
      *corr -= 0.5 * v.dot(d.tmp_);
    }
    v = vn;
    st.value = err;
    st.iterations = it;
    d.newton_idle_ = it == 0;
    return st;
  }

  Status step(const Model & mo, Data & d, StepState & s, double t, int k, double dt)
  {
    // the explicit Runge-Kutta method of set_tableau (RK4 unless set), in
    // Runge-Kutta-Munthe-Kaas form on a Lie group, as steppers.rk_step: the stages move
    // along theta in the tangent space at q, q_i = integrate(q, theta_i), theta' =
    // dintegrate_dv(q, theta)^-1 v_i (on nq == nv models theta' = v_i); stage 0 is the
    // step's start (theta = 0, its rate v)
    if (mo.ad_stages_ > 0) // an adaptive step (adaptive.cpp)
      return adaptive_step(mo, d, s, t, k, dt);
    const int nv = mo.model.nv, ns = mo.stages();
    d.acc_[0] = d.a_;
    d.rate_[0] = s.v_;
    d.power_[0] = d.felems.power + friction_power(mo, d, s.v_);
    for (int i = 1; i < ns; ++i)
    {
      d.dv_.setZero(nv);
      d.th_.setZero(nv);
      for (int j = 0; j < i; ++j) // sum_j (dt a_ij) x_j over the row's nonzero a_ij
        if (const double w = dt * mo.tab_a_(i, j); w != 0.0)
        {
          d.th_ += w * d.rate_[j];
          d.dv_ += w * d.acc_[j];
        }
      d.vs_ = s.v_ + d.dv_;
      d.t_ = t + dt * mo.tab_c_(i); // the stage's time
      pinocchio::integrate(mo.model, s.q_, d.th_, d.qs_);
      d.power_[i] = stage(mo, d, s.tau_, d.qs_, d.vs_, d.acc_[i]);
      stage_rate(mo, d, s.q_, d.th_, d.vs_, d.rate_[i]);
    }
    d.vbar_.setZero(nv);
    d.dv_.setZero(nv);
    double w_nc = 0.0;
    for (int i = 0; i < ns; ++i)
    {
      d.vbar_ += mo.tab_b_(i) * d.rate_[i];
      d.dv_ += mo.tab_b_(i) * d.acc_[i];
      w_nc += mo.tab_b_(i) * d.power_[i];
    }
    d.th_ = dt * d.vbar_;
    pinocchio::integrate(mo.model, s.q_, d.th_, d.q1_);
    d.v1_ = s.v_ + dt * d.dv_;
    return end_step(mo, d, s, t, k, dt, dt * w_nc); // steppers.rk_step's work
  }

  Status end_step(
    const Model & mo, Data & d, StepState & s, double t, int k, double dt, double w)
  {
    Status st;
    if (!finite_or("q", d.q1_, t + dt, k + 1, st) || !finite_or("v", d.v1_, t + dt, k + 1, st))
      return st;
    s.work += dt * s.tau_.dot(d.vbar_);
    s.force_work += w;
    const Status c = correct(mo, d, d.q1_, d.v1_, &s.corr, false, mo.opt.max_newton);
    s.newton_it = c.iterations;
    if (c.value > mo.opt.position_tol)
    {
      ++s.newton_failures;
      if (!(c.value <= mo.opt.position_failure))
      {
        st.code = status_code::position_failed;
        st.value = c.value;
        st.iterations = c.iterations;
        st.t = t + dt;
        st.step = k + 1;
        return st;
      }
    }
    s.q_ = d.q1_;
    s.v_ = d.v1_;
    return st;
  }
} // namespace pfaff
