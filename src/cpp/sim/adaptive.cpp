// The adaptive step of the core: one interval [t, t + dt] integrated by an embedded
// explicit Runge-Kutta pair with the error control of SciPy's solve_ivp (RK45, the
// Dormand-Prince 5(4) pair; DOP853), on y = (q, v, w) with w' the power of the force
// elements, as steppers.adaptive_step integrates it; then the branch check and the
// step's end (end_step: the position correction and the velocity projection).
#include "model/core.hpp"
#include "sim/methods.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pfaff
{
  namespace
  {
    // solve_ivp's step-size control (scipy.integrate._ivp.rk)
    constexpr double kSafety = 0.9, kMinFactor = 0.2, kMaxFactor = 10.0;

    /// SciPy's RMS norm of x ./ scale
    double rms(const VecX & x, const VecX & scale)
    {
      return (x.array() / scale.array()).matrix().norm() / std::sqrt(double(x.size()));
    }

    /// f(s, y) = (v, a, power) at time t + s: the acceleration as the NumPy engine's
    /// Evaluator takes it (the state as it is, no stage projection; the certified QR
    /// where A has full row rank, else the SVD)
    void rate(const Model & mo, Data & d, const VecX & tau, double t, const VecX & y, VecX & f)
    {
      const int n = mo.model.nv;
      d.qs_ = y.head(n);
      d.vs_ = y.segment(n, n);
      d.t_ = t;
      dynamics_state(mo, d, d.qs_, d.vs_, false);
      evaluate(mo, d, d.qs_, d.vs_, true);
      row_space(mo, d, d.A, false, true, d.rs_stage_);
      accel(mo, d, tau, d.rs_stage_, d.dv_);
      f.resize(2 * n + 1);
      f.head(n) = d.vs_;
      f.segment(n, n) = d.dv_;
      f(2 * n) = d.felems.power + friction_power(mo, d, d.vs_);
    }

    /// the error norm of the step h with the stages K (rk.py: _estimate_error_norm of
    /// RK45, of DOP853 where E3 is given)
    double error_norm(const Model & mo, Data & d, double h, const VecX & scale)
    {
      const auto & K = d.ad_K_;
      d.ad_err_.setZero(scale.size());
      for (int i = 0; i < mo.ad_E_.size(); ++i)
        d.ad_err_ += mo.ad_E_(i) * K[size_t(i)];
      if (mo.ad_E3_.size() == 0)
        return rms(d.ad_err_ * h, scale);
      d.ad_err3_.setZero(scale.size());
      for (int i = 0; i < mo.ad_E3_.size(); ++i)
        d.ad_err3_ += mo.ad_E3_(i) * K[size_t(i)];
      const double e5 = (d.ad_err_.array() / scale.array()).matrix().squaredNorm();
      const double e3 = (d.ad_err3_.array() / scale.array()).matrix().squaredNorm();
      if (e5 == 0.0 && e3 == 0.0)
        return 0.0;
      return std::abs(h) * e5 / std::sqrt((e5 + 0.01 * e3) * double(scale.size()));
    }

    /// one step of the pair from (s, y, f) over h (rk.py: rk_step): y_new, f_new and
    /// the stages K
    void pair_step(
      const Model & mo, Data & d, const VecX & tau, double t, double s, double h, const VecX & y,
      const VecX & f, VecX & y_new, VecX & f_new)
    {
      const int ns = mo.ad_stages_;
      auto & K = d.ad_K_;
      K[0] = f;
      for (int i = 1; i < ns; ++i)
      {
        d.ad_dy_.setZero(y.size());
        for (int j = 0; j < i; ++j)
          d.ad_dy_ += mo.ad_A_(i, j) * K[size_t(j)];
        d.ad_yi_ = y + d.ad_dy_ * h;
        rate(mo, d, tau, t + (s + mo.ad_C_(i) * h), d.ad_yi_, K[size_t(i)]);
      }
      d.ad_dy_.setZero(y.size());
      for (int i = 0; i < ns; ++i)
        d.ad_dy_ += mo.ad_B_(i) * K[size_t(i)];
      y_new = y + h * d.ad_dy_;
      rate(mo, d, tau, t + (s + h), y_new, f_new);
      K[size_t(ns)] = f_new;
    }
  } // namespace

  Status adaptive_step(const Model & mo, Data & d, StepState & s, double t, int k, double dt)
  {
    Status st;
    const int n = mo.model.nv;
    // validate_tol: rtol at least 100 eps
    const double rtol = std::max(mo.opt.rtol, 100 * std::numeric_limits<double>::epsilon());
    const double atol = mo.opt.atol;
    d.ad_K_.resize(size_t(mo.ad_stages_ + 1));
    VecX & y = d.ad_y_;
    VecX & f = d.ad_f_;
    y.resize(2 * n + 1);
    y << s.q_, s.v_, 0.0;
    rate(mo, d, s.tau_, t, y, f);
    d.ad_a0_ = f.segment(n, n);
    // select_initial_step (Hairer, Norsett, Wanner, Sec. II.4)
    VecX & scale = d.ad_scale_;
    scale = (atol + y.array().abs() * rtol).matrix();
    const double d0 = rms(y, scale), d1 = rms(f, scale);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h0 = std::min(h0, dt);
    d.ad_yi_ = y + h0 * f;
    rate(mo, d, s.tau_, t + h0, d.ad_yi_, d.ad_fn_);
    const double d2 = rms(d.ad_fn_ - f, scale) / h0;
    const double h1 = (d1 <= 1e-15 && d2 <= 1e-15)
                        ? std::max(1e-6, h0 * 1e-3)
                        : std::pow(0.01 / std::max(d1, d2), 1.0 / (mo.ad_order_ + 1));
    double h_abs = std::min({100 * h0, h1, dt});
    const double exponent = -1.0 / (mo.ad_order_ + 1);
    double tt = 0.0;
    while (tt < dt) // OdeSolver.step until t reaches t_bound = dt
    {
      const double min_step =
        10 * std::abs(std::nextafter(tt, std::numeric_limits<double>::infinity()) - tt);
      h_abs = std::max(h_abs, min_step);
      bool accepted = false, rejected = false;
      double t_new = tt;
      while (!accepted)
      {
        if (h_abs < min_step) // the step fell below the spacing of the numbers at tt
        {
          st.code = status_code::step_too_small;
          st.value = h_abs;
          st.t = t;
          st.step = k;
          return st;
        }
        t_new = std::min(tt + h_abs, dt);
        const double h = t_new - tt;
        h_abs = std::abs(h);
        pair_step(mo, d, s.tau_, t, tt, h, y, f, d.ad_yn_, d.ad_fn_);
        scale = (atol + y.array().abs().max(d.ad_yn_.array().abs()) * rtol).matrix();
        const double err = error_norm(mo, d, h, scale);
        if (err < 1.0)
        {
          double factor = err == 0.0 ? kMaxFactor
                                     : std::min(kMaxFactor, kSafety * std::pow(err, exponent));
          if (rejected)
            factor = std::min(1.0, factor);
          h_abs *= factor;
          accepted = true;
        }
        else
        {
          h_abs *= std::max(kMinFactor, kSafety * std::pow(err, exponent));
          rejected = true;
        }
      }
      tt = t_new;
      std::swap(y, d.ad_yn_);
      std::swap(f, d.ad_fn_);
    }
    d.q1_ = y.head(n);
    d.v1_ = y.segment(n, n);
    // steppers.branch_check: the trapezoidal defect of the velocity against its scale
    const auto a1 = f.segment(n, n);
    const double defect = (d.v1_ - s.v_ - 0.5 * dt * (d.ad_a0_ + a1)).cwiseAbs().maxCoeff();
    const double vscale = std::max(s.v_.cwiseAbs().maxCoeff(), d.v1_.cwiseAbs().maxCoeff())
                          + dt * std::max(d.ad_a0_.cwiseAbs().maxCoeff(), a1.cwiseAbs().maxCoeff());
    if (defect > 0.05 * vscale)
    {
      st.code = status_code::branch_switch;
      st.value = defect;
      st.extra = vscale;
      st.t = t;
      st.step = k;
      return st;
    }
    d.vbar_ = 0.5 * (s.v_ + d.v1_);
    return end_step(mo, d, s, t, k, dt, y(2 * n));
  }
} // namespace pfaff
