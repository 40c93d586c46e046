// Stepping from Python (pfaff.Simulator, pfaff.rollout): one call per Simulator.step (the
// torque and n steps of Stepper::run), a copy of a System (a Simulator's reset, one per
// rollout: every run starts from the System as it was built), and many rollouts on a
// pool of std::thread, each over its own copy, the GIL released. The step itself is
// Stepper::run's, so a Simulator's steps and a rollout are simulate's steps bit for bit.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <exception>
#include <limits>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings/bind.hpp"
#include "sim/system.hpp"

namespace nb = nanobind;
using namespace nb::literals;
using pfaff::Check;
using pfaff::GVec;
using pfaff::System;
using pfaff::VecX;

namespace
{
  // an input array of the rollout: float64, C-contiguous (pfaff.rollout converts)
  using In = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
  // an output array the rollout writes into
  using Out = nb::ndarray<double, nb::c_contig, nb::device::cpu>;


  // a copy of s that writes into no buffer of s: its record buffers are set anew
  System detached(const System & s)
  {
    System c(s);
    c.recorder() = pfaff::Recorder{};
    return c;
  }

  // an array of exactly this shape (the sizes named in the message)
  void shape(const Check & c, size_t ndim, const int64_t * got, std::vector<long> want,
             const std::string & name, const std::string & meaning)
  {
    bool ok = ndim == want.size();
    for (size_t i = 0; ok && i < ndim; ++i)
      ok = got[i] == want[i];
    if (ok)
      return;
    std::string g = "(", w = "(";
    for (size_t i = 0; i < ndim; ++i)
      g += std::to_string(got[i]) + (i + 1 < ndim ? ", " : ndim == 1 ? "," : "");
    for (size_t i = 0; i < want.size(); ++i)
      w += std::to_string(want[i]) + (i + 1 < want.size() ? ", " : want.size() == 1 ? "," : "");
    c.fail(name + " has shape " + g + "), expected " + w + ") (" + meaning + ")");
  }

  template <class A>
  void check_shape(const Check & c, const A & a, std::vector<long> want, const std::string & name,
                   const std::string & meaning)
  {
    std::vector<int64_t> got(a.ndim());
    for (size_t i = 0; i < a.ndim(); ++i)
      got[i] = int64_t(a.shape(i));
    shape(c, a.ndim(), got.data(), std::move(want), name, meaning);
  }

  void check_finite(const Check & c, const In & a, const std::string & name)
  {
    const double * p = a.data();
    for (size_t i = 0; i < a.size(); ++i)
      if (!std::isfinite(p[i]))
        c.fail(name + " has a non-finite entry " + std::to_string(p[i]) + " at flat index "
               + std::to_string(i));
  }

  // what one rollout thread shares with the others
  struct Job
  {
    const System * proto;
    const double *q0, *v0, *tau;
    int K, T;
    double t0;
    double *q, *v, *lam, *phi;
    // rollouts driven by ctrl (else null): ctrl (K, T, nu) set before each step, the
    // activations from act0 (K, na) into act (K, T + 1, na)
    const double *ctrl = nullptr, *act0 = nullptr;
    double * act = nullptr;
    int nu = 0, na = 0;
    std::vector<pfaff::Status> status;
    std::vector<std::string> errors; // an exception inside a rollout
    std::atomic<int> next{0};
  };

  // rollouts next, next+1, ... until none is left: each on a fresh copy of the prototype
  void worker(Job & j)
  {
    const int nq = j.proto->nq(), nv = j.proto->nv();
    const int m = j.proto->rows(), mh = j.proto->holonomic_rows();
    const int cap = j.T + 1;
    using pfaff::SeriesId;
    constexpr int n_rec = pfaff::record_series();
    const int Q = pfaff::buffer_index(SeriesId::q), V = pfaff::buffer_index(SeriesId::v);
    const int LAM = pfaff::buffer_index(SeriesId::lam), PHI = pfaff::buffer_index(SeriesId::phi);
    std::vector<std::vector<double>> scratch(n_rec);
    std::vector<double> fw(static_cast<size_t>(cap)), fp(static_cast<size_t>(cap));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int i = j.next++; i < j.K; i = j.next++)
    {
      double * own[n_rec] = {};
      own[Q] = j.q + size_t(i) * cap * nq;
      own[V] = j.v + size_t(i) * cap * nv;
      own[LAM] = j.lam + size_t(i) * cap * m;
      own[PHI] = j.phi + size_t(i) * cap * mh;
      pfaff::Status st;
      int recorded = 0;
      try
      {
        System s(*j.proto);
        std::vector<double *> ptrs(n_rec);
        std::vector<size_t> sizes(n_rec);
        for (int b = 0; b < n_rec; ++b)
        {
          sizes[size_t(b)] = pfaff::record_width(s.mo(), b) * size_t(cap);
          if (!own[b])
          {
            scratch[size_t(b)].resize(sizes[size_t(b)]);
            own[b] = scratch[size_t(b)].data();
          }
          ptrs[size_t(b)] = own[b];
        }
        s.recorder().set_buffers(s.mo(), ptrs, sizes, cap);
        s.recorder().set_force_buffers(fw.data(), fp.data(), cap);
        s.reset_counters();
        s.set_state(Eigen::Map<const VecX>(j.q0 + size_t(i) * nq, nq),
                    Eigen::Map<const VecX>(j.v0 + size_t(i) * nv, nv));
        s.set_tau(VecX::Zero(nv));
        VecX act;
        double * acts = j.act ? j.act + size_t(i) * cap * j.na : nullptr;
        if (j.ctrl)
        {
          act = Eigen::Map<const VecX>(j.act0 + size_t(i) * j.na, j.na);
          std::copy(act.data(), act.data() + j.na, acts);
        }
        for (int k = 0; k < j.T && st.code == pfaff::status_code::ok; ++k)
        {
          s.set_tau(Eigen::Map<const VecX>(j.tau + (size_t(i) * j.T + k) * nv, nv));
          if (j.ctrl) // the ctrl held over step k from the activations at its start
          {
            s.set_ctrl(
              Eigen::Map<const VecX>(j.ctrl + (size_t(i) * j.T + k) * j.nu, j.nu));
            s.set_act(act, j.t0 + k * s.options().dt);
          }
          st = s.run(k, k + 1, j.T, j.t0);
          if (j.ctrl && st.code == pfaff::status_code::ok)
          {
            s.mo().force_elements.activations(j.t0 + (k + 1) * s.options().dt, act);
            std::copy(act.data(), act.data() + j.na, acts + size_t(k + 1) * j.na);
          }
        }
        if (st.code == pfaff::status_code::ok) // the last state, with the last torque held
          st = s.run(j.T, j.T + 1, j.T, j.t0);
        recorded = s.recorder().recorded;
      }
      catch (const std::exception & e)
      {
        st.code = pfaff::status_code::exception;
        j.errors[size_t(i)] = e.what();
      }
      j.status[size_t(i)] = st;
      if (st.code != pfaff::status_code::ok) // the states not reached: NaN
      {
        for (int b : {Q, V, LAM, PHI})
        {
          const size_t w = pfaff::record_width(j.proto->mo(), b);
          std::fill(own[b] + size_t(recorded) * w, own[b] + size_t(cap) * w, nan);
        }
        if (j.act)
          std::fill(j.act + (size_t(i) * cap + size_t(recorded)) * j.na,
                    j.act + size_t(i + 1) * cap * j.na, nan);
      }
    }
  }
} // namespace

namespace
{
  // K rollouts on a pool of threads (rollout, rollout_ctrl: ctrls, act0s, acts given)
  nb::list run_rollouts(const System & proto, const In & q0s, const In & v0s, const In & taus,
                        double t0, int threads, const Out & q, const Out & v, const Out & lam,
                        const Out & phi, const In * ctrls = nullptr, const In * act0s = nullptr,
                        const Out * acts = nullptr)
  {
    const Check c{"rollout"};
    const long nq = proto.nq(), nv = proto.nv(), mr = proto.rows();
    const long mh = proto.holonomic_rows();
    if (taus.ndim() != 3)
      c.fail("taus has " + std::to_string(taus.ndim()) + " dimensions, expected 3: (K, T, nv)");
    const long K = long(taus.shape(0)), T = long(taus.shape(1));
    c.index(K, INT_MAX, "K (rollouts)", ">= 1", 1).index(T, INT_MAX - 2, "T (steps)", ">= 0");
    check_shape(c, taus, {K, T, nv}, "taus", "K, T, nv");
    check_shape(c, q0s, {K, nq}, "q0s", "K, nq");
    check_shape(c, v0s, {K, nv}, "v0s", "K, nv");
    check_shape(c, q, {K, T + 1, nq}, "out q", "K, T + 1, nq");
    check_shape(c, v, {K, T + 1, nv}, "out v", "K, T + 1, nv");
    check_shape(c, lam, {K, T + 1, mr}, "out lambda", "K, T + 1, m");
    check_shape(c, phi, {K, T + 1, mh}, "out phi", "K, T + 1, m_h");
    check_finite(c, q0s, "q0s");
    check_finite(c, v0s, "v0s");
    check_finite(c, taus, "taus");
    c.number(t0, "t0", -HUGE_VAL, false).index(threads, 1025, "threads", "1 .. 1024", 1);
    Job j;
    if (ctrls)
    {
      const long nu = ctrls->ndim() == 3 ? long(ctrls->shape(2)) : -1;
      const long na = act0s->ndim() == 2 ? long(act0s->shape(1)) : -1;
      check_shape(c, *ctrls, {K, T, nu}, "ctrls", "K, T, nu");
      check_shape(c, *act0s, {K, na}, "act0s", "K, na");
      check_shape(c, *acts, {K, T + 1, na}, "out act", "K, T + 1, na");
      check_finite(c, *ctrls, "ctrls");
      check_finite(c, *act0s, "act0s");
      for (const auto & sp : proto.mo().force_elements.specs)
      {
        if (sp.ictrl >= nu)
          c.fail("ctrls has " + std::to_string(nu) + " controls, an actuator reads ctrl["
                 + std::to_string(sp.ictrl) + "]");
        if (sp.iact >= na)
          c.fail("act0s has " + std::to_string(na) + " activations, an actuator reads act["
                 + std::to_string(sp.iact) + "]");
      }
      j.ctrl = ctrls->data();
      j.act0 = act0s->data();
      j.act = acts->data();
      j.nu = int(nu);
      j.na = int(na);
    }
    j.proto = &proto;
    j.q0 = q0s.data();
    j.v0 = v0s.data();
    j.tau = taus.data();
    j.K = int(K);
    j.T = int(T);
    j.t0 = t0;
    j.q = q.data();
    j.v = v.data();
    j.lam = lam.data();
    j.phi = phi.data();
    j.status.resize(size_t(K));
    j.errors.resize(size_t(K));
    {
      nb::gil_scoped_release release;
      const int n = int(std::min<long>(threads, K));
      std::vector<std::thread> pool;
      try
      {
        for (int i = 1; i < n; ++i)
          pool.emplace_back(worker, std::ref(j));
      }
      catch (const std::system_error &) // no more threads: the ones started do the rest
      {
      }
      worker(j); // this thread is one of them
      for (auto & t : pool)
        t.join();
    }
    nb::list out;
    for (long i = 0; i < K; ++i)
    {
      const auto & st = j.status[size_t(i)];
      pfaff::Status s = st;
      if (s.code == pfaff::status_code::exception)
        s.what = j.errors[size_t(i)];
      out.append(nb::cast(s));
    }
    return out;
  }
} // namespace

namespace pfaff
{
  void bind_sim(nb::module_ & m)
  {
    m.def(
      "clone_system", [](const System & s) { return detached(s); }, "system"_a,
      "a copy of the System (model, rows, options, state, counters) that writes into no "
      "record buffer until set_buffers");

    m.def(
      "sim_step",
      [](System & s, const GVec & tau, int k0, int n, double t0) -> nb::object {
        const Check c{"Simulator.step"};
        c.vec(tau, s.nv(), "tau", "nv");
        c.index(n, INT_MAX - k0, "n", ">= 1 steps", 1).index(k0, INT_MAX, "k0", ">= 0");
        c.number(t0, "t0", -HUGE_VAL, false);
        if (s.state().q_.size() != s.nq() || s.state().v_.size() != s.nv())
          c.fail("no state: call set_state(q, v) first");
        if (s.options().record_every != 1)
          c.fail("options.record_every must be 1 (one sample per step)");
        const pfaff::Recorder & r = s.recorder();
        if (r.recorded + long(n) > r.capacity || r.force_capacity() < r.capacity)
          c.fail("the record buffers hold " + std::to_string(r.capacity - r.recorded)
                 + " more samples, " + std::to_string(n) + " needed");
        s.set_tau(tau);
        pfaff::Status st;
        {
          nb::gil_scoped_release release;
          st = s.run(k0, k0 + n, INT_MAX - 1, t0);
        }
        if (st.code == pfaff::status_code::ok)
          return nb::none();
        return nb::cast(st);
      },
      "system"_a, "tau"_a, "k0"_a, "n"_a, "t0"_a,
      "set tau and run the n steps from step k0 (one sample recorded per step); None when "
      "they ran, else the Status of System.run");

    m.def(
      "rollout",
      [](const System & proto, const In & q0s, const In & v0s, const In & taus, double t0,
         int threads, const Out & q, const Out & v, const Out & lam, const Out & phi) {
        return run_rollouts(proto, q0s, v0s, taus, t0, threads, q, v, lam, phi);
      },
      "system"_a, "q0s"_a, "v0s"_a, "taus"_a, "t0"_a, "threads"_a, "q"_a.noconvert(),
      "v"_a.noconvert(), "lam"_a.noconvert(), "phi"_a.noconvert(),
      "K rollouts of T steps, each on a copy of system, on `threads` threads with the GIL "
      "released: writes q, v, lambda, Phi of the T + 1 states (start included) into the "
      "given arrays (NaN after a failure) and returns the K status tuples of System.run "
      "(code -1: an exception, its message as `what`)");

    m.def(
      "rollout_ctrl",
      [](const System & proto, const In & q0s, const In & v0s, const In & taus, const In & ctrls,
         const In & act0s, double t0, int threads, const Out & q, const Out & v, const Out & lam,
         const Out & phi, const Out & act) {
        return run_rollouts(proto, q0s, v0s, taus, t0, threads, q, v, lam, phi, &ctrls, &act0s,
                            &act);
      },
      "system"_a, "q0s"_a, "v0s"_a, "taus"_a, "ctrls"_a, "act0s"_a, "t0"_a, "threads"_a,
      "q"_a.noconvert(), "v"_a.noconvert(), "lam"_a.noconvert(), "phi"_a.noconvert(),
      "act"_a.noconvert(),
      "rollout with the actuators' ctrl (K, T, nu) set before each step (the torque of "
      "their held parts in taus) and their activations from act0s (K, na): writes act "
      "(K, T + 1, na) besides q, v, lambda, Phi");
  }
} // namespace pfaff
