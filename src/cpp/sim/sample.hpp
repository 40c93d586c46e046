// One sample of a run: the value of every series of series.def at a state, stated once
// for the two records that take it (record.cpp: the record buffers a run writes into;
// limit_events.cpp: the record of a limited run, phase after phase).
#pragma once

#include "model/core.hpp"
#include "tables/tables.hpp"

namespace pfaff
{
  /// na: the activations a sample records, one per actuator with activation dynamics
  /// (a force element's iact)
  inline int activation_count(const Model & mo)
  {
    int n = 0;
    for (const ForceSpec & f : mo.force_elements.specs)
      n = f.iact + 1 > n ? f.iact + 1 : n;
    return n;
  }

  /// put(id, x) for every series of the sample at time t, in series.def's order: x a
  /// VecX for a row series, a double for a number. av: the workspace of A v. carry: the
  /// accounts (work, correction energy, force work) of the phases before (nullptr: none).
  /// with_forces: the force elements' two series too.
  template <class Put>
  void each_series(const Model & mo, const Data & d, const StepState & s, double t, VecX & av,
                   const double * carry, bool with_forces, Put && put)
  {
    using S = SeriesId;
    const auto acc = [carry](double x, int k) { return carry ? x + carry[k] : x; };
    put(S::t, t);
    put(S::q, s.q_);
    put(S::v, s.v_);
    put(S::a, d.a_);
    put(S::tau, s.tau_);
    put(S::F, d.F_);
    put(S::lam, d.lam_);
    av.noalias() = d.A * s.v_;
    put(S::av, av);
    put(S::phi, d.phi);
    put(S::rank, double(d.rs_.rank));
    put(S::sigma_min, d.rs_.sigma_min);
    const double pot = d.potential - mo.opt.potential_offset;
    put(S::kinetic, d.kinetic);
    put(S::potential, pot);
    put(S::energy, d.kinetic + pot);
    put(S::work, acc(s.work, 0));
    put(S::correction_energy, acc(s.corr, 1));
    put(S::newton_iterations, double(s.newton_it));
    VecX act(activation_count(mo)); // the activations at t, from act0 at t0 (set_act)
    if (act.size())
      mo.force_elements.activations(t, act);
    put(S::act, act);
    if (with_forces)
    {
      put(S::force_work, acc(s.force_work, 2));
      put(S::force_potential, d.felems.V);
    }
  }
} // namespace pfaff
