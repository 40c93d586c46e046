// The contact pairs' part of a limited run (contact.hpp, limits.cpp): which pair is past
// its still geom, its gap inside a step (the function Brent's method brackets), and the
// impact of the points that touch, by the joint limits' rules (Newton's law in the metric
// of M, plastic below the pair's rest speed or where the event guard says so, a plastic
// point held as a row).
#include "sim/contact.hpp"
#include "algorithms/pushing_forces.hpp"
#include "sim/friction.hpp"
#include "sim/limit_detail.hpp"
#include "model/core.hpp"
#include "sim/system.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "pinocchio/algorithm/joint-configuration.hpp"

namespace pfaff
{
  namespace
  {
    // points within this of the still geom take part in an impact [m]
    constexpr double kTouch = 1e-10;
    // the narrow phase's reach at an impact [m]: a landing cap's points (ContactPoint::face,
    // up to 1.5 r kRimFlat above its lowest)
    constexpr double kFaceReach = 1e-3;
    // a contact's gap inside a step is clipped at this (no point this far: the margin) [m]
    constexpr double kGapMargin = 0.05;

    // a point taken up whose contact is this near a held point's of its pair, the other
    // kind (round, or a vertex), supersedes it [m]
    constexpr double kSupersede = 1e-5;

    // the held entries of in's pairs that a point of in supersedes: a held vertex where a
    // round point now touches (a cylinder tipped onto its side: its rim point where its
    // axis point holds), or a held round point where a vertex now touches (a lying cylinder
    // tipping onto a rim), their contacts (the material point a radius below a round
    // point's core) the same at the evaluated state d; and a held round point whose pair's
    // nearest points slid past kFollow (two round geoms turning on each other: the point
    // taken up, within twice that of its core, follows it); a held rim come down flat on
    // its cap (its lowest point no longer defined: the cap's points, taken up, hold it)
    std::vector<std::size_t> superseded(
      const Model & mo, const Data & d, const Held & held, const std::vector<ContactPoint> & in)
    {
      const int L = int(mo.limits.size());
      std::vector<std::size_t> out;
      for (std::size_t c = 0; c < held.size(); ++c)
      {
        if (held[c].first < L)
          continue;
        const int j = held[c].second;
        const double r = mo.contact_spec_radius[std::size_t(j)];
        const Spec & sp = mo.contact_specs[std::size_t(j)];
        const Vec3 & core = sp.p1;
        Vec3 n;
        const Vec3 x = spec_contact(mo, d, j, n);
        const double s = sp.kind == Kind::RimOnPlane
                           ? n.dot(d.frames[std::size_t(sp.s1)].R * sp.p2) : 0.0;
        const bool flat = 1.0 - s * s < kRimFlat * kRimFlat;
        if (std::any_of(in.begin(), in.end(), [&](const ContactPoint & p) {
              if (L + p.pair != held[c].first)
                return false;
              if (flat)
                return true;
              if ((p.radius > 0.0) != (r > 0.0))
                return (friction_point(p) - x).norm() < kSupersede;
              return r > 0.0 && (p.local - core).norm() < 2.0 * kFollow;
            }))
          out.push_back(c);
      }
      return out;
    }

    // A start deeper than this [m] (a keyframe's foot in the floor) is moved out by the
    // least motion that leaves every point's gap >= 0 (clear_after_move)
    constexpr double kDeep = 1e-9;

    bool held_point(const System & s, const Held & held, const ContactPoint & p, bool follow = true)
    {
      const int L = int(s.mo().limits.size());
      return std::any_of(held.begin(), held.end(), [&](const auto & h) {
        return h.first >= L && same_point(s.mo(), h.second, p, follow);
      });
    }
  } // namespace

  void compact_contacts(System & s, Held & held)
  {
    const Model & mo = s.mo();
    const int L = int(mo.limits.size());
    std::vector<Spec> specs;
    std::vector<int> pair;
    std::vector<double> radius;
    std::vector<ContactMode> modes;
    for (auto & h : held)
      if (h.first >= L)
      {
        specs.push_back(mo.contact_specs[std::size_t(h.second)]);
        pair.push_back(mo.contact_spec_pair[std::size_t(h.second)]);
        radius.push_back(mo.contact_spec_radius[std::size_t(h.second)]);
        modes.push_back(mo.contact_mode[std::size_t(h.second)]);
        h.second = int(specs.size()) - 1;
      }
    s.change_model(
      [&](ModelBuilder & b) { b.set_contact_rows(specs, pair, radius, modes); }, false);
  }

  int contact_crossed(const System & s, Narrow & nar, const Held & held, const VecX & q, double tol)
  {
    if (s.mo().contact_pairs.empty())
      return -1;
    for (const ContactPoint & p : nar.points(s.mo(), q, 0.0))
      if (p.dist < -tol && !held_point(s, held, p))
        return p.pair;
    return -1;
  }

  double contact_gap(
    const System & s, Narrow & nar, const Held & held, const VecX & q, int k, double margin)
  {
    double g = margin;
    for (const ContactPoint & p : nar.points(s.mo(), q, margin))
      if (p.pair == k && !held_point(s, held, p))
        g = std::min(g, p.dist);
    return g;
  }

  double rim_turn(
    const System & s, Narrow & nar, const Held & held, const VecX & q0, const VecX & q, int k,
    double margin, int * pair)
  {
    const Model & mo = s.mo();
    const int L = int(mo.limits.size());
    double g = margin;
    for (const auto & [i, j] : held)
    {
      if (i < L || (k >= 0 && i != L + k)
          || mo.contact_specs[std::size_t(j)].kind != Kind::RimOnPlane)
        continue;
      const Spec & sp = mo.contact_specs[std::size_t(j)];
      const Vec3 w0 = (nar.frame_placement(mo, q0, sp.s1).rotation() * sp.p2).cross(sp.target);
      const Vec3 w = (nar.frame_placement(mo, q, sp.s1).rotation() * sp.p2).cross(sp.target);
      const double gj = sp.rho * (w.dot(w0) / w0.norm() - 0.5 * kRimFlat);
      if (gj < g && pair)
        *pair = i - L;
      g = std::min(g, gj);
    }
    return g;
  }

  bool contact_past(
    const System & s, Narrow & nar, const Held & held, const VecX & q0, const VecX & q, int k,
    double tol)
  {
    return contact_gap(s, nar, held, q, k, 0.0) < -tol
           || rim_turn(s, nar, held, q0, q, k, 0.0) < 0.0;
  }

  double contact_root(
    System & s, Narrow & nar, const Held & held, int k,
    const std::function<bool(double, VecX &, VecX &)> & step, double h, double end,
    double event_tol)
  {
    bool bad = false;
    VecX q0, v0;
    step(0.0, q0, v0); // the step's start
    // below the time's resolution the start's gap, where it is within the tolerance 0
    // (a point just put on its still geom): crossing's rule then looks for the gap
    // opening inside the step (rate > 0)
    auto g = [&](double x) {
      VecX q, v;
      const bool ok = step(x, q, v);
      bad = bad || !ok;
      const double gx = ok ? std::min(contact_gap(s, nar, held, q, k, kGapMargin),
                                      rim_turn(s, nar, held, q0, q, k, kGapMargin))
                           : -1.0;
      return x <= 1e-9 * h && std::abs(gx) <= s.mo().opt.position_tol ? 0.0 : gx;
    };
    const double x = first_root(g, 1.0, end, event_tol);
    return bad ? std::numeric_limits<double>::quiet_NaN() : x;
  }

  void contact_impact(
    System & s, Narrow & nar, Held & held, EventGuard & guard, double t,
    std::vector<LimitEventRec> & events)
  {
    const Model & mo = s.mo();
    const int L = int(mo.limits.size());
    const VecX q = s.state().q_, v = s.state().v_;
    Data & d = s.d();
    dynamics_state(mo, d, q, v, true);
    evaluate(mo, d, q, v, false);
    const double V0 = d.potential;
    std::vector<ContactPoint> hit;
    // (a cylinder's cap landing flat: its points within its face's height, where one
    // touches)
    const std::vector<ContactPoint> & near = nar.points(mo, q, kFaceReach);
    std::vector<char> lands(mo.contact_pairs.size(), 0);
    for (const ContactPoint & p : near)
      lands[std::size_t(p.pair)] |= p.face > 0.0 && p.dist <= kTouch ? 1 : 0;
    for (const ContactPoint & p : near)
      if ((p.dist <= kTouch || (lands[std::size_t(p.pair)] && p.dist <= p.face))
          && !held_point(s, held, p, false))
        hit.push_back(p);
    MatX G = contact_rows(mo, d, hit);
    const auto deep = [](const ContactPoint & p) { return p.dist < -kDeep; };
    if (std::any_of(hit.begin(), hit.end(), deep))
    {
      // an overlap (a start): the points the least motion out of it leaves clear are
      // not part of it
      VecX dist(long(hit.size()));
      for (std::size_t i = 0; i < hit.size(); ++i)
        dist(long(i)) = hit[i].dist;
      const std::vector<char> clear = clear_after_move(dense_M(mo, d), d.A, G, dist, kDeep);
      std::vector<ContactPoint> kept;
      std::vector<long> keep_rows;
      for (std::size_t i = 0; i < hit.size(); ++i)
        if (!clear[i])
        {
          kept.push_back(hit[i]);
          keep_rows.push_back(long(i));
        }
      if (!kept.empty() && kept.size() < hit.size())
      {
        G = MatX(G(keep_rows, Eigen::all));
        hit = kept;
      }
    }
    VecX vn = G * v;
    // the approaching points, and those leaving slower than their pair's rest speed
    // (a bounce too small to locate: held), alone; a touching point leaving faster stays
    // free
    std::vector<ContactPoint> in;
    std::vector<long> rows;
    for (std::size_t i = 0; i < hit.size(); ++i)
      if (vn(long(i)) < mo.contact_pairs[std::size_t(hit[i].pair)].rest_speed)
      {
        in.push_back(hit[i]);
        rows.push_back(long(i));
      }
    // a crossing located where no touching point approaches: a bounce too small for the
    // coordinates' resolution ended inside the step. The touching points stop (held),
    // so that the run goes on (else it would locate the same crossing again)
    bool stop_all = false;
    if (in.empty())
    {
      if (hit.empty())
        return; // nothing within reach: the event budget ends a run that keeps at it
      in = hit;
      rows.resize(hit.size());
      for (std::size_t i = 0; i < hit.size(); ++i)
        rows[i] = long(i);
      stop_all = true;
    }
    const MatX R = G(rows, Eigen::all);
    const VecX pre = vn(rows);
    const std::vector<std::size_t> gone = superseded(mo, d, held, in);
    // per pair: its fastest approach decides whether it is plastic (the guard's rule)
    const std::size_t P = mo.contact_pairs.size();
    std::vector<double> approach(P, -HUGE_VAL);
    for (std::size_t i = 0; i < in.size(); ++i)
      approach[std::size_t(in[i].pair)] =
        std::max(approach[std::size_t(in[i].pair)], -pre(long(i)));
    std::vector<int> plastic(P, 0);
    for (std::size_t k = 0; k < P; ++k)
      if (approach[k] > -HUGE_VAL)
        plastic[k] = guard.plastic(
          L + int(k), t, approach[k], mo.contact_pairs[k].rest_speed, held) || stop_all ? 1 : 0;
    VecX target(long(in.size()));
    for (std::size_t i = 0; i < in.size(); ++i)
    {
      const ContactPairC & c = mo.contact_pairs[std::size_t(in[i].pair)];
      target(long(i)) = plastic[std::size_t(in[i].pair)] ? 0.0 : -c.restitution * pre(long(i));
    }
    const MatX M = dense_M(mo, d);
    // the superseded points' rows are not kept through the impact: the points taken up
    // replace them
    std::vector<int> keep(held.size(), 1);
    for (const std::size_t c : gone)
      keep[c] = 0;
    std::vector<Eigen::Index> kept;
    const std::vector<int> owner = row_owner(mo, held, d.A.rows());
    for (Eigen::Index r = 0; r < d.A.rows(); ++r)
      if (owner[std::size_t(r)] < 0 || keep[std::size_t(owner[std::size_t(r)])])
        kept.push_back(r);
    const MatX A = d.A(kept, Eigen::all);
    // with friction: the impulse-level active set of friction.hpp (held points that
    // would pull let go), else Newton's law with the active rows kept
    std::vector<int> may_go(held.size());
    for (std::size_t c = 0; c < held.size(); ++c)
      may_go[c] = guard.may_release(held[c].first, t) ? 1 : 0;
    const bool rubs = std::any_of(in.begin(), in.end(), [&](const ContactPoint & p) {
      return mo.contact_pairs[std::size_t(p.pair)].mu > 0.0;
    });
    const VecX vn_new = rubs ? friction_impact(s, M, v, in, R, target, plastic, held, may_go, keep)
                             : metric_impact_rows(M, A, v, R, target, mo.opt.rank_tol);
    std::vector<std::size_t> drop; // the held points that let go
    for (std::size_t c = 0; c < held.size(); ++c)
      if (!keep[c] && !std::binary_search(gone.begin(), gone.end(), c))
        drop.push_back(c);
    const double loss = 0.5 * (v.dot(M * v) - vn_new.dot(M * vn_new));
    const VecX post = R * vn_new;
    // the points onto the still geom (Phi = dist to round-off: the gap's sign after the
    // impact is the motion's, not the location's residue): the least M-norm move with
    // the active rows kept
    VecX dist(long(in.size()));
    for (std::size_t i = 0; i < in.size(); ++i)
      dist(long(i)) = -in[i].dist;
    const VecX dq = metric_impact_rows(M, A, VecX::Zero(v.size()), R, dist, mo.opt.rank_tol);
    s.set_state(pinocchio::integrate(mo.model, q, dq), vn_new);
    std::vector<int> count(P, 0); // held rows per pair (at most kContactRows)
    for (std::size_t c = 0; c < held.size(); ++c)
      if (held[c].first >= L && !std::binary_search(gone.begin(), gone.end(), c))
        ++count[std::size_t(held[c].first - L)];
    std::vector<int> reported(P, 0);
    std::vector<Spec> specs = mo.contact_specs; // the rows held, and those taken up now
    std::vector<int> pairs = mo.contact_spec_pair;
    std::vector<double> radius = mo.contact_spec_radius;
    std::vector<ContactMode> modes = mo.contact_mode; // a new point's: from its slip
    // a held point that slips on through Coulomb's impulse slips along its slip after it
    // (its s0: one the impulse turned by more than 90 degrees would take its friction
    // along its slip over the next step)
    for (const auto & [i, j] : held)
      if (slipping(mo, i, j) && mo.contact_pairs[std::size_t(i - L)].slip_impulse)
        if (const Vec3 u = slip_velocity(mo, d, vn_new, j); u.norm() > 1e-10)
          modes[std::size_t(j)].s0 = u.normalized();
    double lost = loss; // the energy lost, on the first event
    const std::size_t first = events.size();
    for (std::size_t i = 0; i < in.size(); ++i)
    {
      const std::size_t k = std::size_t(in[i].pair);
      // held where it stops: plastic, or e = 0 (as a limit's stop)
      const bool stops = plastic[k] || mo.contact_pairs[k].restitution == 0.0;
      if (stops && count[k] < kContactRows)
      {
        specs.push_back(contact_spec(mo, d, in[i]));
        pairs.push_back(int(k));
        radius.push_back(in[i].radius);
        // (stuck where the move put it: a landing cap's points moved up to its face's height)
        ContactPoint moved = in[i];
        moved.core =
          nar.frame_placement(mo, s.state().q_, mo.contact_pairs[k].slot).act(in[i].local);
        modes.push_back(landing_mode(mo, d, vn_new, moved));
        held.emplace_back(L + int(k), int(specs.size()) - 1);
        ++count[k];
      }
      if (!reported[k]) // the pair's event: its first point's normal velocities
      {
        reported[k] = 1;
        events.push_back(
          LimitEventRec{t, L + int(k), 0, 0, pre(long(i)), post(long(i)), lost});
        lost = 0.0;
      }
    }
    // the held points that let go: released (one event per pair)
    // and those superseded by a point taken up now (the contact goes on: no event)
    std::vector<std::size_t> erase = drop;
    for (const std::size_t c : gone)
      if (!std::binary_search(drop.begin(), drop.end(), c))
        erase.push_back(c);
    std::sort(erase.begin(), erase.end());
    for (auto c = erase.rbegin(); c != erase.rend(); ++c)
    {
      const int i = held[*c].first;
      held.erase(held.begin() + long(*c));
      if (std::binary_search(drop.begin(), drop.end(), *c)
          && std::none_of(drop.begin(), drop.end(), [&](std::size_t e) {
               return e < *c && held[e].first == i;
             }))
      {
        events.push_back(LimitEventRec{t, i, 1, 0, 0.0, 0.0, 0.0});
        guard.released(i, t);
      }
    }
    s.change_model(
      [&](ModelBuilder & b) { b.set_contact_rows(specs, pairs, radius, modes); }, false);
    // a held round point re-anchored: its move out of the micrometres the surrogate let
    // the geoms sink is the event's too (its potential energy; a start's overlap, moved
    // out before the first sample, is not); so is a landing cap's move onto its face
    const bool faced = std::any_of(
      in.begin(), in.end(), [](const ContactPoint & p) { return p.dist > kTouch; });
    if ((!gone.empty() || faced) && first < events.size())
    {
      dynamics_state(s.mo(), s.d(), s.state().q_, s.state().v_, true);
      events[first].energy_lost += V0 - s.d().potential;
    }
    guard.count(t);
  }
  void record_contacts(const System & s, const Held & held, LimitRecord & rec)
  {
    const Model & mo = s.mo();
    const Data & d = s.d();
    const int L = int(mo.limits.size());
    const std::size_t at = rec.contact.size();
    rec.contact.resize(at + rec.contact_width, 0.0);
    for (std::size_t c = 0; c < held.size(); ++c)
      if (held[c].first >= L)
      {
        double * f = rec.contact.data() + at + 4 * std::size_t(held[c].first - L);
        f[0] -= d.lam_(mo.loop.m + int(c)); // a contact pushes with lambda <= 0
        const Vec3 ft = tangent_force(mo, d, s.state().v_, held, c, d.lam_);
        for (int k = 0; k < 3; ++k)
          f[1 + k] += ft(k);
      }
  }
} // namespace pfaff
