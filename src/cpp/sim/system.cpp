// A System (system.hpp): its set-up through a ModelBuilder, the one-call terms and
// solves the bindings offer, a controller's Sample, the projection of a state from
// outside, the held law's sample and the step loop (Stepper::run: the start terms, the
// held law, the record, step).
#include "sim/system.hpp"
#include "sim/methods.hpp"
#include "model/check.hpp"
#include "model/core_detail.hpp"
#include "algorithms/householder.hpp"

#include <cmath>
#include <utility>

#include <Eigen/QR>

#include "pinocchio/algorithm/rnea.hpp"

namespace pfaff
{
  using detail::householder_qr;
  using detail::upper_inverse;

  System::System(const std::string & model_data, bool binary)
  : model_(ModelBuilder(model_data, binary).build())
  , data_(*model_)
  {
    const int nv = model_->nv();
    StepState & s = stepper_.state;
    s.q_ = pinocchio::neutral(model_->model);
    s.v_.setZero(nv);
    s.tau_.setZero(nv);
  }

  // a Model of its own, made as a builder makes one (never const itself)
  System::System(const System & other)
  : model_(std::unique_ptr<const Model>(new Model(*other.model_)))
  , data_(other.data_)
  , stepper_(other.stepper_)
  , law_(other.law_)
  {
  }

  System & System::operator=(const System & other)
  {
    if (this != &other)
      *this = System(other);
    return *this;
  }

  // -- set-up ----------------------------------------------------------------------
  int System::add_frame(const std::string & name)
  {
    return change_model([&](ModelBuilder & b) { return b.add_frame(name); });
  }

  int System::observe(const std::string & name)
  {
    return change_model([&](ModelBuilder & b) { return b.observe(name); });
  }

  void System::add(const Spec & spec)
  {
    change_model([&](ModelBuilder & b) { b.add(spec); });
  }

  int System::add_contact(const Contour & contour, int s_obj, int s_tip, double r)
  {
    return change_model([&](ModelBuilder & b) { return b.add_contact(contour, s_obj, s_tip, r); });
  }

  void System::add_force(const ForceSpec & spec)
  {
    change_model([&](ModelBuilder & b) { b.add_force(spec); });
  }

  void System::set_tableau(const MatX & a, const VecX & b)
  {
    change_model([&](ModelBuilder & mb) { mb.set_tableau(a, b); });
  }

  void System::set_adaptive(
    const MatX & a, const VecX & b, const VecX & c, const VecX & e, const VecX & e3, int order)
  {
    change_model([&](ModelBuilder & mb) { mb.set_adaptive(a, b, c, e, e3, order); }, false);
  }

  void System::set_plant(std::shared_ptr<const PlantLaw> plant)
  {
    change_model([&](ModelBuilder & b) { b.set_plant(std::move(plant)); });
  }

  void System::set_options(const Options & o)
  {
    change_model([&](ModelBuilder & b) { b.options() = o; }, false);
  }

  void System::set_ctrl(const VecX & u)
  {
    change_model([&](ModelBuilder & b) { b.set_ctrl(u); }, false);
  }

  void System::set_act(const VecX & act, double t0)
  {
    change_model([&](ModelBuilder & b) { b.set_act(act, t0); }, false);
  }

  void System::add_held_force(const ForceSpec & spec)
  {
    check_force(mo(), spec, "System.add_held_force");
    law_.elements.add(spec);
    law_.terms.resize(mo().nv());
  }

  // -- per-state terms ---------------------------------------------------------------
  void System::dynamics_state(const VecX & q, const VecX & v, bool extras)
  {
    pfaff::dynamics_state(mo(), data_, q, v, extras);
  }

  void System::evaluate(const VecX & q, const VecX & v, bool with_drift)
  {
    pfaff::evaluate(mo(), data_, q, v, with_drift);
  }

  void System::solve(
    const VecX & q, const VecX & v, const VecX & tau, VecX & a, VecX & F, VecX & lam, int & rank)
  {
    const Model & mo = *model_;
    Data & d = data_;
    dynamics_state(q, v, false);
    evaluate(q, v, true);
    row_space(mo, d, d.A, true, false, d.rs_);
    accel(mo, d, tau, d.rs_, a);
    forces(mo, d, tau, d.rs_, a, F, lam);
    rank = d.rs_.rank;
  }

  void System::acceleration(const VecX & q, const VecX & v, const VecX & tau, VecX & a)
  {
    const Model & mo = *model_;
    Data & d = data_;
    dynamics_state(q, v, false);
    evaluate(q, v, true);
    if (mo.opt.variant == 0 && well_conditioned_rows(tau, a))
      return;
    row_space(mo, d, d.A, false, true, d.rs_stage_);
    accel(mo, d, tau, d.rs_stage_, a);
  }

  // One evaluation where A has full row rank and is well conditioned (the QR of A^T
  // certifies the rank; ||R||_F ||R^-1||_F <= 1e4 bounds cond(A)): A^T itself spans the
  // row space V1 = A^T R^-1 spans, so accel solves with V1 = A^T, W = I: a = M^-1 f +
  // M^-1 A^T (A M^-1 A^T)^-1 (-drift - A M^-1 f), without forming the thin Q (the step
  // loop forms it: it needs V1 and W again).
  // Equal to accel's solution to round-off times cond(A)^2 <= 1e8. False (nothing
  // done) otherwise.
  bool System::well_conditioned_rows(const VecX & tau, VecX & a)
  {
    const Model & mo = *model_;
    Data & d = data_;
    const int mm = mo.m, n = mo.model.nv;
    if (mm == 0 || mm > n)
      return false;
    householder_qr(d.A.transpose(), d.QRs_, d.hcs_);
    upper_inverse(d.QRs_, mm, d.Y_);
    const double wn = d.Y_.norm(), rn = d.QRs_.topLeftCorner(mm, mm).norm();
    if (!(wn * 2.0 * mo.opt.rank_tol <= 1.0) || !(wn * rn <= 1e4))
      return false;
    // accel's solution with V1 = A^T, W = I (V1^T a = -W^T drift is A a = -drift)
    d.rs_rows_.V1 = d.A.transpose();
    d.rs_rows_.W.setIdentity(mm, mm);
    d.rs_rows_.n = n;
    d.rs_rows_.m = mm;
    d.rs_rows_.rank = mm;
    d.rs_rows_.stamp = d.st_.next();
    accel(mo, d, tau, d.rs_rows_, a);
    return true;
  }

  void System::sample(bool with_sensors, Sample & out)
  {
    const Model & mo = *model_;
    Data & d = data_;
    const StepState & s = stepper_.state;
    const int n = mo.model.nv;
    // the certified QR when A has full row rank (sigma_min from R), else the SVD; the
    // step that follows reuses these terms (start_terms)
    start_terms(mo, d, s.q_, s.v_, true);
    out.q = s.q_, out.v = s.v_, out.M = dense_M(mo, d), out.h = d.h;
    out.A = d.A, out.drift = d.drift, out.phi = d.phi;
    const MatX & V1 = formed_V1(d.rs_, d.V1f_);
    out.V1 = V1, out.W = formed_W(d.rs_, d.Wf_);
    out.rank = d.rs_.rank;
    out.sigma_min = d.rs_.sigma_min;
    MatX N = MatX::Identity(n, n);
    if (d.rs_.rank > 0) // complete V1 to an orthonormal basis (one Householder QR of V1)
    {
      Eigen::HouseholderQR<MatX> qv(V1);
      N.applyOnTheLeft(qv.householderQ());
      N = N.rightCols(n - d.rs_.rank).eval();
    }
    out.N = N;
    out.F.resize(0), out.lam.resize(0);
    if (with_sensors)
    {
      accel(mo, d, s.tau_, d.rs_, d.a_); // llt_ then holds G of rs_ for the step (gram_stands)
      forces(mo, d, s.tau_, d.rs_, d.a_, out.F, out.lam);
    }
    // the observed frames: dynamics_state left the RNEA pass of (q, v) and the
    // placements of q in data
    observed_frames(mo, d, s.q_, s.v_);
    // each row as tables.hpp lays it out (frame_fields: p, R, J row by row, drift)
    out.frames.resize(Eigen::Index(d.obs_frames.size()), frame_row_width(n));
    const int at_R = frame_field_start(FrameField::R, n);
    const int at_J = frame_field_start(FrameField::J, n);
    for (size_t i = 0; i < d.obs_frames.size(); ++i)
    {
      const FrameKin & f = d.obs_frames[i];
      auto row = out.frames.row(Eigen::Index(i));
      row.segment<3>(frame_field_start(FrameField::p, n)) = f.p.transpose();
      for (int r = 0; r < 3; ++r)
        row.segment<3>(at_R + 3 * r) = f.R.row(r);
      for (int r = 0; r < 6; ++r)
        row.segment(at_J + r * n, n) = f.J.row(r);
      row.segment<6>(frame_field_start(FrameField::drift, n)) = f.drift.transpose();
    }
    out.kinetic = d.kinetic; // start_terms(true): dynamics_state's energies
    // on data_g: data keeps the passes the next step's start reuses (M, its factor)
    generalized_gravity(mo, d, s.q_, out.g);
    out.potential = d.potential_gravity;
    // the projection's P = I - V1 V1^T and C v = -A^+ drift, A^+ = V1 W^T (eq. 4, 16)
    MatX P = MatX::Identity(n, n);
    P.noalias() -= V1 * V1.transpose();
    out.P = P;
    out.Cv = VecX::Zero(n);
    if (d.rs_.rank > 0)
    {
      wt(d.rs_, d.drift, d.y_);
      v1(d.rs_, d.y_, out.Cv, -1.0);
    }
  }

  // -- the step loop -------------------------------------------------------------------
  Status System::project_state(int max_iter)
  {
    StepState & s = stepper_.state;
    const Status st = correct(mo(), data_, s.q_, s.v_, nullptr, false, max_iter);
    const VecX q = s.q_, v = s.v_;
    rebuild_data();
    set_state(q, v);
    return st;
  }

  bool System::trial_step(const VecX & q0, const VecX & v0, double t0, double x, int max_iter,
                          double gain, VecX & q, VecX * v)
  {
    set_state(q0, v0);
    const Status p = project_state(max_iter);
    if (!(p.value <= std::max(1e3 * mo().opt.position_tol, 1e-9)))
      return false;
    Data & d = data_;
    d.t_ = t0;
    // the start's energies from its terms (project_state left fresh data: computed here)
    pfaff::start_terms(mo(), d, state().q_, state().v_, true);
    const double kinetic = d.kinetic, e0 = d.kinetic + d.potential;
    d.st_.next();
    pfaff::accel(mo(), d, state().tau_, d.rs_, d.a_);
    StepState w = state();
    const double done = w.work + w.corr + w.force_work;
    const Status c = pfaff::step(mo(), d, w, t0, 0, x);
    q = w.q_;
    if (v)
      *v = w.v_;
    if (c.code != status_code::ok)
      return false;
    pfaff::dynamics_state(mo(), d, w.q_, w.v_, true);
    const double up = d.kinetic + d.potential - e0 - (w.work + w.corr + w.force_work - done);
    return !(up > gain * std::max(kinetic, d.kinetic) + 1e-9);
  }

  bool HeldLaw::sample(const Model & mo, Data & d, const VecX & q, const VecX & v, double t,
                       double dt, VecX & tau)
  {
    if (!(on && sample_due(t, next, dt)))
      return false;
    evaluate(mo, d, q, v, t, tau);
    next += period;
    return true;
  }

  void HeldLaw::evaluate(const Model & mo, Data & d, const VecX & q, const VecX & v, double t,
                         VecX & tau)
  {
    if (elements.gravity)
      gravity_terms(mo, d, q);
    // the frames of (q, v), with velocity
    terms.evaluate(elements, d.frames, q, v, d.g_fe_, d.Vg_fe_, t);
    tau = terms.Q;
  }

  Status Stepper::run(const Model & mo, Data & d, HeldLaw & law, int k0, int k1, int n_steps,
                      double t0)
  {
    int k = k0;
    bool in_step = false;
    try
    {
      return run_steps(mo, d, law, k0, k1, n_steps, t0, k, in_step);
    }
    catch (const KKTSingular & e) // the KKT method at a singular A: the run stops there
    {
      return e.status(t0 + k * mo.opt.dt, k, in_step ? 1 : 0);
    }
  }

  Status Stepper::run_steps(const Model & mo, Data & d, HeldLaw & law, int k0, int k1,
                            int n_steps, double t0, int & k, bool & in_step)
  {
    Status st;
    StepState & s = state;
    const double dt = mo.opt.dt;
    const bool check_contact = !mo.uni_rows.empty();
    for (k = k0; k < k1 && k <= n_steps; ++k)
    {
      in_step = false;
      const double t = t0 + k * dt;
      const bool rec = record_due(k, mo.opt.record_every, n_steps);
      d.t_ = t;
      start_terms(mo, d, s.q_, s.v_, rec);
      d.st_.next(); // a pass of its own: the step moves (q_, v_) and data
      law.sample(mo, d, s.q_, s.v_, t, dt, s.tau_); // a held law's sample (set_held)
      accel(mo, d, s.tau_, d.rs_, d.a_);
      if (!detail::finite_or("acceleration", d.a_, t, k, st))
        return st;
      if (rec || check_contact)
      {
        forces(mo, d, s.tau_, d.rs_, d.a_, d.F_, d.lam_);
        if (check_contact)
        {
          int worst = -1;
          double fmin = 0.0;
          for (int r : mo.uni_rows)
            if (-d.lam_(r) < 0.0 && (worst < 0 || -d.lam_(r) < fmin))
            {
              worst = r;
              fmin = -d.lam_(r);
            }
          if (worst >= 0)
          {
            st.code = status_code::contact_opens;
            st.index = worst;
            st.value = fmin;
            st.t = t;
            st.step = k;
            return st;
          }
        }
      }
      if (rec)
        record(mo, d, s, recorder, t);
      if (k == n_steps)
        break;
      in_step = true;
      if (Status c = step(mo, d, s, t, k, dt); c.code != status_code::ok)
        return c;
      steps = k + 1;
    }
    return st;
  }
} // namespace pfaff
