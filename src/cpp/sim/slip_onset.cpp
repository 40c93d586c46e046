// The direction a point at rest starts to slip along (friction.hpp, slip_onset). Where a
// stuck point's force leaves its cone, Coulomb's law with the maximal dissipation
// principle has it slip along a direction s whose own friction -mu f_n s leaves a
// tangential acceleration of the point along s: a_t(s) = alpha s, alpha > 0 (the slip
// velocity then grows along s). The force that held it stuck (-f_t) is only a guess of
// s: the point's tangential inertia and the other rows of its body turn a_t away from it,
// and a slip started along a direction whose a_t points back stops at once, at the same
// instant, again and again. In the tangent plane s = cos(th) t1 + sin(th) t2 and the
// condition is the root of c(th) = n . (s x a_t(s)) with s . a_t(s) > 0 and the point's
// normal force pushing (a pulling one turns its friction round: Painleve's paradox): a
// scan of the circle from the guess's angle, then Brent's method on the sign change
// nearest it.
#include "sim/friction.hpp"
#include "model/builder.hpp"
#include "model/core.hpp"
#include "model/rim.hpp"
#include "sim/system.hpp"

#include <algorithm>
#include <cmath>

namespace pfaff
{
  namespace
  {
    constexpr int kScan = 16;             // the circle's samples
    constexpr double kAngleTol = 1e-10;   // the root's angle [rad]
    constexpr double kParallel = 1e-9;    // |c| / |a_t| of a direction taken as it is
    constexpr double kInert = 1e-9;       // a_t's spread over s of an inert point [m/s^2]
    constexpr double kTwoPi = 6.283185307179586;
  } // namespace

  Vec3 slip_acceleration(const Model & mo, const Data & d, const VecX & a, int j)
  {
    const Spec & sp = mo.contact_specs[std::size_t(j)];
    const int k = mo.contact_spec_pair[std::size_t(j)];
    const ContactPairC & c = mo.contact_pairs[std::size_t(k)];
    const FrameKin & f = d.frames[std::size_t(sp.s1)];
    Vec3 n;
    const Vec3 x = spec_contact(mo, d, j, n);
    // d/dt of the slip velocity u = v1(x) - v2(x) (slip_velocity: the material point at
    // the contact x = core - radius n, relative to the plane body's material point there;
    // x moves over both bodies, so no w x (w x r) of the offset -radius n, which turns
    // with the plane body: x' = v_core + w2 x l), RollingPoint's drift (kinds) plus the
    // rows times a: a_core + al1 x l + w1 x (w2 x l) - w2 x ((w2 - w1) x l) - a2(x)
    // - w2 x u, l = -radius n (w2, a2 zero on the world)
    // (a rim's lowest point x = c + l moves over the body: w x l' more, RimRolling's)
    const double radius = mo.contact_spec_radius[std::size_t(j)];
    Vec3 l = -radius * n, ld = Vec3::Zero();
    if (sp.kind == Kind::RimOnPlane)
      rim_lever<double>(f.R * sp.p2, f.w, n, sp.rho, l, ld);
    const Matrix3x Jx = pair_point_rows(mo, d, k, x);
    Vec3 ap = Jx * a + kinds::point_drift(f, true, sp.p1) + f.drift.tail<3>().cross(l)
              + f.w.cross(ld);
    if (c.slot2 >= 0)
    {
      const FrameKin & f2 = d.frames[std::size_t(c.slot2)];
      ap += kinds::body2_contact_drift(f, f2, l, x)
            - (d.vref_ ? f2.w.cross(Vec3(Jx * *d.vref_)) : Vec3::Zero());
    }
    return ap - n * n.dot(ap);
  }

  bool slip_onset(System & s, const Held & held, int j, double tol, Vec3 & s0)
  {
    const Spec sp = s.mo().contact_specs[std::size_t(j)]; // (turn makes new Models)
    const VecX & q = s.state().q_;
    const VecX & v = s.state().v_;
    ContactMode md = s.mo().contact_mode[std::size_t(j)];
    Vec3 n, t1, t2;
    // its normal row (the held entry's) and its normal force at the last turn [N]
    const int L = int(s.mo().limits.size());
    int row = -1;
    for (std::size_t c = 0; c < held.size(); ++c)
      if (held[c].first >= L && held[c].second == j)
        row = s.mo().loop.m + int(c);
    if (row < 0)
      return false;
    double fn = 0.0;
    // the tangential acceleration of the point slipping along s (its friction -mu f_n s)
    auto turn = [&](double th, Vec3 & dir) {
      dir = std::cos(th) * t1 + std::sin(th) * t2;
      md.stick = false;
      md.s0 = dir;
      s.change_model(
        [&](ModelBuilder & b) {
          b.set_contact_mode(j, md);
          b.set_held_rows(held);
        },
        false);
      Data & d = s.d();
      start_terms(s.mo(), d, q, v, false);
      d.st_.next();
      accel(s.mo(), d, s.state().tau_, d.rs_, d.a_);
      forces(s.mo(), d, s.state().tau_, d.rs_, d.a_, d.F_, d.lam_);
      push_held(s, held, tol); // the split that pushes, where the least-norm one pulls
      fn = -s.d().lam_(row);
      return slip_acceleration(s.mo(), d, d.a_, j);
    };
    start_terms(s.mo(), s.d(), q, v, false);
    n = spec_world(s.d(), sp, sp.n);
    tangent_basis(n, t1, t2);
    const double th0 = std::atan2(s0.dot(t2), s0.dot(t1));
    Vec3 dir, at0;
    double c[kScan + 1], dot[kScan + 1], push[kScan + 1], spread = 0.0;
    for (int k = 0; k <= kScan; ++k)
    {
      const double th = th0 + kTwoPi * k / kScan;
      const Vec3 at = k < kScan ? turn(th, dir) : at0;
      at0 = k == 0 ? at : at0;
      spread = std::max(spread, (at - at0).norm());
      c[k] = k < kScan ? n.dot(dir.cross(at)) : c[0];
      dot[k] = k < kScan ? dir.dot(at) : dot[0];
      push[k] = k < kScan ? fn : push[0];
      if (k == 0 && dot[0] > 0.0 && fn >= 0.0 && std::abs(c[0]) <= kParallel * at.norm())
      {
        s0 = dir; // the guess is the onset's own direction
        return true;
      }
    }
    // a point whose own friction does not move it (the other rows fix its tangential
    // motion: a foot pinned by its leg's other contacts) has no slip to start: it stays
    if (!(spread > kInert + kParallel * at0.norm()))
      return false;
    // the sign change nearest the guess's angle, either way round, with s . a_t > 0
    for (int w = 0; w < kScan; ++w)
    {
      const int k = (w % 2 == 0) ? w / 2 : kScan - 1 - w / 2;
      if (!(dot[k] > 0.0 && dot[k + 1] > 0.0 && push[k] >= 0.0 && push[k + 1] >= 0.0)
          || std::signbit(c[k]) == std::signbit(c[k + 1]))
        continue;
      const double a = th0 + kTwoPi * k / kScan, b = a + kTwoPi / kScan;
      const double th = brentq(
        [&](double x) { return n.dot(dir.cross(turn(x, dir))); }, a, b, kAngleTol, 4.5e-16 * 2,
        100);
      const Vec3 at = turn(th, dir);
      if (dir.dot(at) > 0.0 && fn >= 0.0)
      {
        s0 = dir;
        return true;
      }
    }
    return false;
  }
} // namespace pfaff
