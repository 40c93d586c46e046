// Coulomb friction's events in a limited run (friction.hpp): which held point sticks or
// slips, the force of each, the located stop of a slip.
#include "sim/friction.hpp"
#include "model/rim.hpp"
#include "model/core.hpp"
#include "model/core_detail.hpp"
#include "sim/limit_detail.hpp"
#include "sim/system.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pfaff
{
  namespace
  {
    // below this slip speed a slipping point's direction is its s0 [m/s] (as
    // algorithms/friction.cpp's)
    constexpr double kSpeed = 1e-10;
    // a slipping point this slow when another of its pair stops stops with it [m/s]
    constexpr double kStopped = 1e-9;

    // the held entry of contact spec j
    std::size_t entry_of(const Model & mo, const Held & held, int j)
    {
      const int L = int(mo.limits.size());
      for (std::size_t c = 0; c < held.size(); ++c)
        if (held[c].first >= L && held[c].second == j)
          return c;
      return held.size();
    }

    // a held point of pair row i slips
    bool pair_slips(const Model & mo, const Held & held, int i)
    {
      return std::any_of(held.begin(), held.end(), [&](const std::pair<int, int> & e) {
        return e.first == i && slipping(mo, e.first, e.second);
      });
    }

    // spec j of pair row i stopped at zero slip speed (kStopped) at the instant its slip
    // started (leave_cone's, within 1e-6 dt: a stop located where the slip velocity
    // turned by 1e-12 m/s, 3e-13 s after its start, moved it 1e-25 m), no point of the
    // pair slipping now: it never slipped, nothing moved and no energy went, so neither
    // is an event. The pair's slip event erased: true (a call's last instant's is the
    // next call's first: RunMemory)
    bool unslipped(const Model & mo, const Held & held, int i, int j, double speed, double t,
                   std::vector<LimitEventRec> & events, const SlipWatch & watch)
    {
      const double since = watch.started(j);
      if (speed > kStopped || pair_slips(mo, held, i) || !(t - since <= 1e-6 * mo.opt.dt))
        return false;
      for (auto e = events.rbegin(); e != events.rend() && e->t >= since; ++e)
        if (e->limit == i && cone_slip(*e))
        {
          events.erase(std::next(e).base());
          return true;
        }
      return false;
    }

    void set_mode(System & s, int j, const ContactMode & md)
    {
      s.change_model([&](ModelBuilder & b) { b.set_contact_mode(j, md); }, false);
    }

    // the stuck rows' force on the body as the multipliers give it: -(l1 t1 + l2 t2)
    // (world; the plane body's tangents turned with it)
    Vec3 stick_force(const Data & d, const Spec & sp, const VecX & lam, int r)
    {
      Vec3 t1, t2;
      tangent_basis(sp.n, t1, t2);
      return -spec_world(d, sp, lam(r) * t1 + lam(r + 1) * t2);
    }

    // the velocity nearest to v in the metric of M that keeps every held row at (q, v)
    // (the System's rows set from held) into the System's state: the energy it takes
    double stop_held(System & s, const Held & held, const VecX & q, const VecX & v)
    {
      set_held_rows(s, held);
      frames_at(s, q, v);
      const MatX M = dense_M(s.mo(), s.d());
      const VecX vp = metric_impact_rows(M, MatX(0, v.size()), v, s.d().A,
                                         VecX::Zero(s.d().A.rows()), s.mo().opt.rank_tol);
      s.set_state(q, vp);
      return 0.5 * (v.dot(M * v) - vp.dot(M * vp));
    }

    // contact spec j (of held row i)'s mode stuck where its body point is at the System's
    // frames: its two tangential rows through that place
    ContactMode stuck_here(System & s, int i, int j)
    {
      const Spec & sp = s.mo().contact_specs[std::size_t(j)];
      const FrameKin & f = s.d().frames[std::size_t(sp.s1)];
      ContactMode md = s.mo().contact_mode[std::size_t(j)];
      md.stick = true;
      md.anchor = pair_anchor(s.mo(), s.d(), i - int(s.mo().limits.size()), f.p + f.R * sp.p1);
      return md;
    }
  } // namespace

  Vec3 friction_point(const ContactPoint & p)
  {
    return p.core + contact_lever(p.radius, p.axis, p.n);
  }

  void frames_at(System & s, const VecX & q, const VecX & v)
  {
    dynamics_state(s.mo(), s.d(), q, v, false);
    evaluate(s.mo(), s.d(), q, v, false);
  }

  int stick_row(const Model & mo, const Held & held, std::size_t c)
  {
    const int L = int(mo.limits.size());
    int k = 0; // stuck points before c (set_held_rows' order)
    for (std::size_t e = 0; e <= c && e < held.size(); ++e)
    {
      const auto [i, j] = held[e];
      const bool stuck = i >= L && mo.contact_pairs[std::size_t(i - L)].mu > 0.0
                         && mo.contact_mode[std::size_t(j)].stick;
      if (e == c)
        return stuck ? mo.loop.m + int(held.size()) + 2 * k : -1;
      k += stuck;
    }
    return -1;
  }

  bool slipping(const Model & mo, int i, int j)
  {
    const int L = int(mo.limits.size());
    return i >= L && mo.contact_pairs[std::size_t(i - L)].mu > 0.0
           && !mo.contact_mode[std::size_t(j)].stick;
  }

  Matrix3x slip_rows(const Model & mo, const Data & d, int j, Vec3 & n)
  {
    // a round geom's material point at its contact, radius below its held core
    const Vec3 x = spec_contact(mo, d, j, n);
    return tangential_rows(pair_point_rows(mo, d, mo.contact_spec_pair[std::size_t(j)], x), n);
  }

  Matrix3x tangential_rows(const Matrix3x & Jp, const Vec3 & n)
  {
    return Jp - n * (n.transpose() * Jp);
  }

  Vec3 slip_velocity(const Model & mo, const Data & d, const VecX & v, int j)
  {
    // (the point's velocity, then its tangential part: slip_rows(...) * v to round-off)
    Vec3 n;
    const Vec3 x = spec_contact(mo, d, j, n);
    const Vec3 vp = pair_point_rows(mo, d, mo.contact_spec_pair[std::size_t(j)], x) * v;
    return vp - n * n.dot(vp);
  }

  Vec3 tangent_force(
    const Model & mo, const Data & d, const VecX & v, const Held & held, std::size_t c,
    const VecX & lam)
  {
    const int L = int(mo.limits.size());
    const auto [i, j] = held[c];
    if (i < L || mo.contact_pairs[std::size_t(i - L)].mu <= 0.0)
      return Vec3::Zero();
    const Spec & sp = mo.contact_specs[std::size_t(j)];
    const int r = stick_row(mo, held, c);
    if (r >= 0)
      return stick_force(d, sp, lam, r);
    const Vec3 vt = slip_velocity(mo, d, v, j);
    const double speed = vt.norm();
    const Vec3 & s0 = mo.contact_mode[std::size_t(j)].s0;
    const Vec3 s = speed > kSpeed && vt.dot(s0) > 0.0 ? Vec3(vt / speed) : s0;
    // a pulling point's friction is zero (algorithms/friction.cpp's rule)
    const double fn = std::max(0.0, -lam(mo.loop.m + int(c)));
    return -mo.contact_pairs[std::size_t(i - L)].mu * fn * s;
  }

  ContactMode landing_mode(const Model & mo, const Data & d, const VecX & v, const ContactPoint & p)
  {
    ContactMode md;
    const ContactPairC & c = mo.contact_pairs[std::size_t(p.pair)];
    if (c.mu <= 0.0)
      return md;
    const Vec3 vp = pair_point_rows(mo, d, p.pair, friction_point(p)) * v;
    const Vec3 vt = vp - p.n * p.n.dot(vp);
    md.anchor = pair_anchor(mo, d, p.pair, p.core);
    md.stick = vt.norm() <= c.rest_speed;
    if (!md.stick)
      md.s0 = vt.normalized();
    return md;
  }

  bool leave_cone(System & s, const Held & held, double tol, double t, EventGuard & guard,
                  std::vector<LimitEventRec> & events, SlipWatch & watch, bool & stale)
  {
    const Model & mo = s.mo(); // (replaced by set_mode below: not read after it)
    const int L = int(mo.limits.size());
    const double dt = mo.opt.dt;
    const VecX lam = s.d().lam_;
    struct Tried // a stuck point set slipping: its spec, its pair's row, its modes
    {
      int j, row;
      ContactMode before, after;
      bool stays = false;
    };
    std::vector<Tried> tried;
    for (std::size_t c = 0; c < held.size(); ++c)
    {
      const int r = stick_row(mo, held, c);
      if (r < 0)
        continue;
      const auto [i, j] = held[c];
      if (watch.holds(j, t))
        continue;
      const Vec3 ft = stick_force(s.d(), mo.contact_specs[std::size_t(j)], lam, r);
      const double fn = -lam(mo.loop.m + int(c));
      if (!(ft.norm() > mo.contact_pairs[std::size_t(i - L)].mu * std::max(0.0, fn) + tol))
        continue;
      Tried x{j, i, mo.contact_mode[std::size_t(j)], mo.contact_mode[std::size_t(j)]};
      x.after.stick = false;
      x.after.s0 = -ft.normalized(); // the slip it impends: against the force that held it
      tried.push_back(x);
    }
    if (tried.empty())
      return false;
    for (const Tried & x : tried)
      set_mode(s, x.j, x.after);
    // a point whose slip is at once in Painleve's case (with its friction its normal
    // force pulls, without it pushes) cannot start to slip: it stays stuck, its force
    // outside the cone, held so to the step's end (a jammed point at rest: no event and
    // no energy, where a slip would be jammed again at once, two events at every step).
    // Then the others again, with it stuck
    stale = true;
    for (bool more = true; more;)
    {
      set_held_rows(s, held);
      const std::vector<int> jammed = painleve_at(s, held, s.state().q_, s.state().v_, tol);
      more = false;
      for (Tried & x : tried)
        if (!x.stays && std::count(jammed.begin(), jammed.end(), x.j))
        {
          set_mode(s, x.j, x.before);
          watch.hold(x.j, t + dt);
          x.stays = more = true;
        }
    }
    std::vector<int> pairs;
    for (const Tried & x : tried)
      if (!x.stays)
      {
        watch.slipped(x.j, t);
        if (std::find(pairs.begin(), pairs.end(), x.row) == pairs.end())
          pairs.push_back(x.row);
      }
    for (int i : pairs)
    {
      events.push_back(LimitEventRec{t, i, 3, 0, 0.0, 0.0, 0.0});
      guard.count(t);
    }
    return !pairs.empty();
  }

  void stop_slip(System & s, const Held & held, int j, double tol, double t, EventGuard & guard,
                 std::vector<LimitEventRec> & events, SlipWatch & watch)
  {
    const std::size_t cj = entry_of(s.mo(), held, j);
    watch.forget(j);
    if (cj >= held.size())
      return;
    const double dt = s.mo().opt.dt;
    const int L = int(s.mo().limits.size()), i = held[cj].first;
    const VecX & q = s.state().q_;
    const VecX & v = s.state().v_;
    frames_at(s, q, v);
    const Vec3 vt = slip_velocity(s.mo(), s.d(), v, j);
    const double speed = vt.norm();
    // its velocity along the last direction crossed zero while the point moved on (faster
    // than its pair's rest speed): the slip turned, it did not stop; it slips on along
    // its velocity (sticking it would stop it by the next start's projection, an energy
    // loss no event records). A second turn or stop within a step is the rules' below
    // (held stuck): turns that come faster and faster end
    const bool twice = watch.again(j, t, dt);
    if (speed > s.mo().contact_pairs[std::size_t(i - L)].rest_speed && !twice)
    {
      ContactMode md = s.mo().contact_mode[std::size_t(j)];
      md.s0 = vt / speed;
      set_mode(s, j, md);
      return;
    }
    // the pair's slipping points whose slip has stopped too (a body that slid as one)
    // stick with it: each held where it is
    std::vector<std::size_t> stop;
    ContactMode stuck; // the located point's mode stuck
    for (std::size_t c = 0; c < held.size(); ++c)
    {
      const auto [ic, jc] = held[c];
      if (ic != i || s.mo().contact_mode[std::size_t(jc)].stick
          || (c != cj && !(slip_velocity(s.mo(), s.d(), v, jc).norm() <= kStopped)))
        continue;
      const ContactMode md = stuck_here(s, ic, jc);
      set_mode(s, jc, md);
      stop.push_back(c);
      if (c == cj)
        stuck = md;
    }
    set_held_rows(s, held);
    // the multipliers with the points stuck, at this state (a sample's terms)
    const Model & mo = s.mo();
    Data & d = s.d();
    start_terms(mo, d, q, v, false);
    d.st_.next();
    accel(mo, d, s.state().tau_, d.rs_, d.a_);
    forces(mo, d, s.state().tau_, d.rs_, d.a_, d.F_, d.lam_);
    push_held(s, held, tol);
    const VecX lam = d.lam_;
    const double mu = mo.contact_pairs[std::size_t(i - L)].mu;
    bool sticks = true; // the located point's
    std::vector<std::pair<int, ContactMode>> change;
    for (std::size_t c : stop)
    {
      const int jc = held[c].second;
      const Vec3 ft =
        stick_force(d, mo.contact_specs[std::size_t(jc)], lam, stick_row(mo, held, c));
      if (ft.norm() <= mu * std::max(0.0, -lam(mo.loop.m + int(c))) + tol)
        continue;
      ContactMode md = mo.contact_mode[std::size_t(jc)];
      md.stick = false;
      md.s0 = -ft.normalized(); // the slip it impends
      change.emplace_back(jc, md);
      sticks = sticks && c != cj;
    }
    for (const auto & [jc, md] : change)
      set_mode(s, jc, md);
    // the located point slips on along the direction its slip starts in, where it has
    // one; else (none with its normal force pushing, or stopped twice within a step) it
    // is held stuck to the step's end, its force outside the cone (the constraint does no
    // work: a slip started the wrong way would add energy)
    if (!sticks)
    {
      ContactMode md = s.mo().contact_mode[std::size_t(j)]; // (set_mode made a new Model)
      sticks = twice || !slip_onset(s, held, j, tol, md.s0);
      set_mode(s, j, sticks ? stuck : md);
      if (sticks)
        watch.hold(j, t + dt);
    }
    if (sticks)
      watch.stuck(j, t, dt);
    // a point held stuck while it still moves (a second turn within a step) is stopped
    // here by the least impulse in the metric of M, its energy the event's (else the next
    // start's projection would take it unrecorded)
    const double lost = sticks && speed > kStopped ? stop_held(s, held, VecX(q), VecX(v)) : 0.0;
    guard.count(t);
    // stuck again at zero slip speed at the instant its slip started: a slip along the
    // force that held it whose own friction turns it back at once, with no direction
    // where it would grow (slip_onset)
    if (sticks && unslipped(s.mo(), held, i, j, speed, t, events, watch))
      return;
    events.push_back(LimitEventRec{t, i, sticks ? 2 : 3, 0, speed, sticks ? 0.0 : speed, lost});
  }

  void jam(System & s, const Held & held, int j, double t, EventGuard & guard,
           std::vector<LimitEventRec> & events, SlipWatch & watch)
  {
    const std::size_t cj = entry_of(s.mo(), held, j);
    if (cj >= held.size())
      return;
    const int i = held[cj].first;
    const VecX q = s.state().q_, v = s.state().v_;
    frames_at(s, q, v);
    const double speed = slip_velocity(s.mo(), s.d(), v, j).norm();
    set_mode(s, j, stuck_here(s, i, j));
    const double lost = stop_held(s, held, q, v);
    // held stuck for a step (leave_cone would slip it at once, into the same case)
    watch.forget(j);
    watch.stuck(j, t, s.mo().opt.dt);
    watch.hold(j, t + s.mo().opt.dt);
    guard.count(t);
    // jammed at zero slip speed at the instant its pair's slip started: the pole met at
    // once
    if (unslipped(s.mo(), held, i, j, speed, t, events, watch))
      return;
    events.push_back(LimitEventRec{t, i, 4, 0, speed, 0.0, lost}); // "jam"
  }

  void stopped_by_impact(System & s, const Held & held, double tol, double t,
                         EventGuard & guard, std::vector<LimitEventRec> & events,
                         SlipWatch & watch)
  {
    // left slipping, such a point would keep its Coulomb force along its last slip
    // direction at zero slip (a body at rest squeezed by its own friction, labelled
    // "slip"). One per pair: stop_slip sticks the pair's other stopped points with it,
    // and changes no other pair's mode
    const Model & mo = s.mo();
    const int L = int(mo.limits.size());
    std::vector<char> seen(mo.contact_pairs.size(), 0);
    std::vector<int> stopped;
    bool kin = false;
    for (const auto & [i, j] : held)
    {
      if (!slipping(mo, i, j) || seen[std::size_t(i - L)])
        continue;
      if (!kin)
        frames_at(s, s.state().q_, s.state().v_);
      kin = true;
      if (slip_velocity(mo, s.d(), s.state().v_, j).norm()
          <= mo.contact_pairs[std::size_t(i - L)].rest_speed)
      {
        seen[std::size_t(i - L)] = 1;
        stopped.push_back(j);
      }
    }
    for (const int j : stopped) // (each stop_slip makes a new Model: mo is not read here)
      stop_slip(s, held, j, tol, t, guard, events, watch);
  }
} // namespace pfaff
