// The pieces of a limited run (limits.hpp): the no-chatter guard, Brent's method, the
// impact in the metric of M and the padded record of a sample.
#include "sim/limits.hpp"
#include "sim/friction.hpp"
#include "sim/limit_detail.hpp"
#include "sim/contact.hpp"
#include "sim/system.hpp"
#include "model/core.hpp"
#include "sim/sample.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <Eigen/Eigenvalues>

namespace pfaff
{
  // -- EventGuard (pfaff.simulate.limit_events.EventGuard) ------------------------------
  EventGuard::EventGuard(double dt, int max_events, int n_limits)
  : dt_(dt)
  , max_(max_events)
  , released_(std::size_t(n_limits), -std::numeric_limits<double>::infinity())
  , pinned_(std::size_t(n_limits), -std::numeric_limits<double>::infinity())
  {
  }

  void EventGuard::count(double t)
  {
    // only the last step's events are kept: the list is as long as a step's events
    times_.erase(
      std::remove_if(times_.begin(), times_.end(), [&](double x) { return !(x > t - dt_); }),
      times_.end());
    times_.push_back(t);
  }

  bool EventGuard::saturated(double t) const
  {
    long k = 0;
    for (double x : times_)
      k += x > t - dt_;
    return k >= max_;
  }

  bool EventGuard::plastic(int i, double t, double approach, double rest_speed, const Held & held)
  {
    const bool again = t - released_[std::size_t(i)] < dt_;
    const bool full = saturated(t);
    if (full)
      for (const auto & h : held)
        pinned_[std::size_t(h.first)] = std::max(pinned_[std::size_t(h.first)], t + dt_);
    if (again || full)
      pinned_[std::size_t(i)] = t + dt_;
    return again || full || approach <= rest_speed;
  }

  // -- Brent's method: scipy.optimize.brentq (scipy/optimize/Zeros/brentq.c) -----------
  double brentq(
    const std::function<double(double)> & f, double xa, double xb, double xtol, double rtol,
    int iter)
  {
    double xpre = xa, xcur = xb, xblk = 0.0, fblk = 0.0, spre = 0.0, scur = 0.0;
    double fpre = f(xpre), fcur = f(xcur);
    if (fpre == 0.0)
      return xpre;
    if (fcur == 0.0)
      return xcur;
    for (int i = 0; i < iter; ++i)
    {
      if (fpre != 0.0 && fcur != 0.0 && std::signbit(fpre) != std::signbit(fcur))
      {
        xblk = xpre;
        fblk = fpre;
        spre = scur = xcur - xpre;
      }
      if (std::abs(fblk) < std::abs(fcur))
      {
        xpre = xcur;
        xcur = xblk;
        xblk = xpre;
        fpre = fcur;
        fcur = fblk;
        fblk = fpre;
      }
      const double delta = (xtol + rtol * std::abs(xcur)) / 2.0;
      const double sbis = (xblk - xcur) / 2.0;
      if (fcur == 0.0 || std::abs(sbis) < delta)
        return xcur;
      if (std::abs(spre) > delta && std::abs(fcur) < std::abs(fpre))
      {
        double stry;
        if (xpre == xblk) // interpolate
          stry = -fcur * (xcur - xpre) / (fcur - fpre);
        else // extrapolate
        {
          const double dpre = (fpre - fcur) / (xpre - xcur);
          const double dblk = (fblk - fcur) / (xblk - xcur);
          stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre));
        }
        if (2.0 * std::abs(stry) < std::min(std::abs(spre), 3.0 * std::abs(sbis) - delta))
        {
          spre = scur; // a good short step
          scur = stry;
        }
        else
          spre = scur = sbis;
      }
      else
        spre = scur = sbis;
      xpre = xcur;
      fpre = fcur;
      xcur += std::abs(scur) > delta ? scur : (sbis > 0.0 ? delta : -delta);
      fcur = f(xcur);
    }
    return xcur; // iter evaluations: the bracket is below xtol long before (bisection)
  }

  double first_root(
    const std::function<double(double)> & g, double rate, double h, double event_tol)
  {
    const double g0 = g(0.0);
    double lo = 0.0;
    if (g0 < 0.0 || (g0 == 0.0 && rate <= 0.0))
      return 0.0;
    if (g0 == 0.0)
    {
      lo = -1.0;
      for (int k = 1; k < 60 && lo < 0.0; ++k)
        if (g(h * std::pow(0.5, k)) > 0.0)
          lo = h * std::pow(0.5, k);
      if (lo < 0.0)
        return 0.0;
    }
    if (g(h) >= 0.0) // the step's own sample was past by round-off only
      return h;
    return brentq(g, lo, h, event_tol, 4.5e-16 * 2, 100);
  }

  // -- the impact (pfaff.simulate.limit_events.metric_impact) ---------------------------
  VecX metric_impact_rows(
    const MatX & M, const MatX & A, const VecX & v, const MatX & R, const VecX & t,
    double rank_tol)
  {
    const Eigen::Index nv = v.size(), m = A.rows(), k = R.rows();
    MatX G = MatX::Zero(m + k, nv);
    G.topRows(m) = A;
    G.bottomRows(k) = R;
    VecX b = VecX::Zero(m + k);
    b.tail(k) = t;
    const MatX MiGt = M.partialPivLu().solve(G.transpose());
    const MatX S = G * MiGt;
    // numpy.linalg.pinv(S, rcond=rank_tol, hermitian=True): eigenvalues below rank_tol
    // times the largest (in modulus) dropped, so a limit row dependent on the loop's is
    // handled
    Eigen::SelfAdjointEigenSolver<MatX> es(0.5 * (S + S.transpose()));
    const VecX & lam = es.eigenvalues();
    const double cut = rank_tol * lam.cwiseAbs().maxCoeff();
    const VecX r = es.eigenvectors().transpose() * (b - G * v);
    VecX y = VecX::Zero(m + k);
    for (Eigen::Index k = 0; k < lam.size(); ++k)
      if (std::abs(lam(k)) > cut)
        y += es.eigenvectors().col(k) * (r(k) / lam(k));
    return v + MiGt * y;
  }

  // -- the record ------------------------------------------------------------------------
  void LimitRecord::clear(const Model & mo, int m_rows, int mh_rows)
  {
    // every series of series.def (the force buffers' after the record's), its width
    const std::size_t widths[] = {1, std::size_t(mo.nq()), std::size_t(mo.nv()),
                                  std::size_t(m_rows), std::size_t(mh_rows),
                                  std::size_t(activation_count(mo))};
    for (int i = 0; i < n_series; ++i)
    {
      width[i] = widths[int(series_table[i].width)];
      cols[i].clear();
    }
    calls.clear();
    contact.clear();
    contact_width = 4 * mo.contact_pairs.size();
    n = 0;
  }

  void LimitRecord::reserve(std::size_t samples)
  {
    // at most 256 MB up front (a long run asked for grows past it as it goes)
    std::size_t per = contact_width;
    for (int i = 0; i < n_series; ++i)
      per += width[i];
    samples = std::min(samples, (std::size_t(1) << 25) / std::max<std::size_t>(per, 1));
    for (int i = 0; i < n_series; ++i)
      cols[i].reserve(samples * width[i]);
    contact.reserve(samples * contact_width);
  }

  void LimitRecord::widen(int b, std::size_t w)
  {
    const std::size_t w0 = width[b];
    std::vector<double> & c = cols[b];
    std::vector<double> out(std::size_t(n) * w, 0.0);
    out.reserve(std::max(c.capacity() / std::max<std::size_t>(w0, 1) * w, out.size()));
    for (int i = 0; i < n; ++i)
      std::copy_n(c.data() + std::size_t(i) * w0, w0, out.data() + std::size_t(i) * w);
    c = std::move(out);
    width[b] = w;
  }

  void LimitRecord::pop()
  {
    if (n == 0)
      return;
    --n;
    for (int i = 0; i < n_series; ++i)
      cols[i].resize(std::size_t(n) * width[i]);
    calls.resize(std::min(calls.size(), std::size_t(n)));
    contact.resize(std::min(contact.size(), std::size_t(n) * contact_width));
  }

  void record_limited(
    const Model & mo, const Data & d, const StepState & s, LimitRecord & r, double t,
    const double carry[3])
  {
    // the sample of each_series (sample.hpp), the rows padded with 0.0 to the record's
    // widths and the accounts counted on from the phases before (Trajectory.concat's rule)
    VecX av;
    each_series(mo, d, s, t, av, carry, true, [&](SeriesId b, const auto & x) {
      std::vector<double> & c = r.cols[int(b)];
      if constexpr (std::is_arithmetic_v<std::decay_t<decltype(x)>>)
        c.push_back(x);
      else
      {
        if (std::size_t(x.size()) > r.width[int(b)])
          r.widen(int(b), std::size_t(x.size()));
        c.insert(c.end(), x.data(), x.data() + x.size());
        c.resize(c.size() + (r.width[int(b)] - std::size_t(x.size())), 0.0);
      }
    });
    ++r.n;
  }
  namespace
  {
    /// limit_bounds.Bound.on_bound: q onto value = x (a joint's coordinate set; a
    /// tendon's coordinates moved along their coefficients, the nearest such q)
    void on_bound(const JointLimit & l, VecX & q, double x)
    {
      if (l.ball) // the rotation turned to x about its axis, in q's hemisphere
      {
        Vec3 u;
        ball_angle(q.data() + l.iq, &u);
        const double sign = q(l.iq + 3) >= 0.0 ? 1.0 : -1.0;
        q.segment<3>(l.iq) = sign * std::sin(0.5 * x) * u;
        q(l.iq + 3) = sign * std::cos(0.5 * x);
        return;
      }
      if (l.coefs.empty())
      {
        q(l.iq) = x;
        return;
      }
      double n2 = 0.0; // |a|^2 of the row a over q (a joint named twice: its coefs add)
      for (std::size_t j = 0; j < l.coefs.size(); ++j)
        for (std::size_t k = 0; k < l.coefs.size(); ++k)
          n2 += l.iqs[j] == l.iqs[k] ? l.coefs[j] * l.coefs[k] : 0.0;
      const double t = (x - l.value(q)) / n2;
      for (std::size_t j = 0; j < l.coefs.size(); ++j)
        q(l.iqs[j]) += l.coefs[j] * t;
    }

    /// a limit's row over v (1 x nv) at q: the unit row of v[iv], a tendon's
    /// coefficients or a ball's rotation axis (its rate is R v)
    MatX limit_row(const JointLimit & l, const VecX & q, Eigen::Index nv)
    {
      MatX R = MatX::Zero(1, nv);
      if (!l.ball && l.coefs.empty())
      {
        R(0, l.iv) = 1.0;
        return R;
      }
      if (l.ball)
      {
        Vec3 u;
        ball_angle(q.data() + l.iq, &u);
        R.block<1, 3>(0, l.iv) = u.transpose();
        return R;
      }
      for (std::size_t j = 0; j < l.coefs.size(); ++j)
        R(0, l.ivs[j]) += l.coefs[j];
      return R;
    }
  } // namespace

  int first_past(const System & s, Narrow & nar, const Held & held, const VecX & q, const VecX * q0)
  {
    const Model & mo = s.mo();
    const int L = int(mo.limits.size());
    for (int i = 0; i < L; ++i)
      if (!is_held(held, i) && outside(mo.limits[std::size_t(i)],
                                        mo.limits[std::size_t(i)].value(q), mo.opt.position_tol))
        return i;
    int k = contact_crossed(s, nar, held, q, mo.opt.position_tol);
    int j = -1; // a held rim come down flat
    if (q0 && k < 0 && rim_turn(s, nar, held, *q0, q, -1, 0.0, &j) < 0.0)
      k = j;
    return k < 0 ? -1 : L + k;
  }

  void limit_impact(
    System & s, Held & held, EventGuard & guard, int i, double t,
    std::vector<LimitEventRec> & events)
  {
    const JointLimit & l = s.mo().limits[std::size_t(i)];
    VecX q = s.state().q_, v = s.state().v_;
    const int side = l.value(q) <= 0.5 * (l.lower + l.upper) ? 0 : 1;
    on_bound(l, q, side == 0 ? l.lower : l.upper); // on the bound to event_tol
    s.set_state(q, v);
    Data & d = s.d();
    dynamics_state(s.mo(), d, q, v, false);
    evaluate(s.mo(), d, q, v, false);
    const MatX M = dense_M(s.mo(), d);
    const double v_pre = l.rate(q, v);
    const double approach = std::max(0.0, side == 0 ? -v_pre : v_pre);
    const double e = guard.plastic(i, t, approach, l.rest_speed, held) ? 0.0 : l.restitution;
    const VecX vn = metric_impact_rows(M, d.A, v, limit_row(l, q, v.size()),
                                       VecX::Constant(1, -e * v_pre), s.mo().opt.rank_tol);
    const double loss = 0.5 * (v.dot(M * v) - vn.dot(M * vn));
    s.set_state(q, vn);
    if (e == 0.0)
      held.emplace_back(i, side);
    events.push_back(LimitEventRec{t, i, 0, side, v_pre, l.rate(q, vn), loss});
    guard.count(t);
  }

  long first_pulling(const System & s, const Held & held, const EventGuard & guard,
                     double tol, double t)
  {
    const int L = int(s.mo().limits.size());
    for (std::size_t c = 0; c < held.size(); ++c)
    {
      const auto [i, side] = held[c];
      const int sd = i >= L ? 0 : side; // a contact pushes as a lower bound does
      if (pulling(sd, s.d().lam_(s.mo().loop.m + int(c)), tol) && guard.may_release(i, t))
        return long(c);
    }
    return -1;
  }

  namespace
  {
    /// held entry c's "release" event at t (a limit's side and rate; a contact's: 0)
    void release_event(const System & s, const Held & held, std::size_t c, double t,
                       EventGuard & guard, std::vector<LimitEventRec> & events)
    {
      const int L = int(s.mo().limits.size());
      const auto [i, side] = held[c];
      const int sd = i >= L ? 0 : side;
      const double vi =
        i >= L ? 0.0 : s.mo().limits[std::size_t(i)].rate(s.state().q_, s.state().v_);
      events.push_back(LimitEventRec{t, i, 1, sd, vi, vi, 0.0});
      guard.released(i, t);
    }
  } // namespace

  void release_held(System & s, Held & held, EventGuard & guard, std::size_t c, double t,
                    std::vector<LimitEventRec> & events)
  {
    release_event(s, held, c, t, guard, events);
    held.erase(held.begin() + long(c));
    guard.count(t);
  }

  bool release_together(System & s, Held & held, EventGuard & guard, double tol, double t,
                        std::vector<LimitEventRec> & events)
  {
    std::vector<std::size_t> go = separating(s, held, tol);
    go.erase(std::remove_if(go.begin(), go.end(),
                            [&](std::size_t e) { return !guard.may_release(held[e].first, t); }),
             go.end());
    if (go.empty())
      return false;
    std::vector<int> named; // the limits and pairs whose event is written
    for (std::size_t c : go)
      if (std::find(named.begin(), named.end(), held[c].first) == named.end())
      {
        named.push_back(held[c].first);
        release_event(s, held, c, t, guard, events);
      }
    for (auto c = go.rbegin(); c != go.rend(); ++c)
      held.erase(held.begin() + long(*c));
    guard.count(t);
    return true;
  }
} // namespace pfaff
