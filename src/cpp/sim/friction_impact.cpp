// An impact with Coulomb friction in a limited run (friction.hpp's friction_impact): the
// points that stop stop along the surface too where the impulse that takes lies inside
// the cone, else they slip through the impact with Coulomb's impulse (Moreau's law,
// algorithms/slip_impact.hpp), as do the held points that slip; an impulse-level active
// set over it lets a held point whose impulse would pull go.
#include "algorithms/pushing_forces.hpp"
#include "algorithms/slip_impact.hpp"
#include "model/core.hpp"
#include "model/core_detail.hpp"
#include "sim/friction.hpp"
#include "sim/limit_detail.hpp"
#include "sim/system.hpp"

#include <algorithm>
#include <cmath>

namespace pfaff
{
  namespace
  {
    // an impulse that pulls by more than this lets its held point go [N s]
    constexpr double kPull = 1e-12;
    // below this slip speed a held slipping point's direction is its mode's s0 [m/s]
    constexpr double kSpeed = 1e-10;
  } // namespace

  std::vector<int> row_owner(const Model & mo, const Held & held, long m)
  {
    const int L = int(mo.limits.size());
    std::vector<int> owner(std::size_t(m), -1);
    for (std::size_t c = 0; c < held.size(); ++c)
      if (held[c].first >= L)
      {
        owner[std::size_t(mo.loop.m) + c] = int(c);
        if (const int r = stick_row(mo, held, c); r >= 0)
          owner[std::size_t(r)] = owner[std::size_t(r) + 1] = int(c);
      }
    return owner;
  }

  VecX friction_impact(
    System & s, const MatX & M, const VecX & v, const std::vector<ContactPoint> & in,
    const MatX & R, const VecX & target, const std::vector<int> & plastic, const Held & held,
    const std::vector<int> & may_go, std::vector<int> & keep)
  {
    const Model & mo = s.mo();
    const Data & d = s.d();
    const int nv = mo.nv(), L = int(mo.limits.size());
    const Eigen::Index m = d.A.rows(), k = R.rows();
    const std::vector<int> owner = row_owner(mo, held, m);
    const auto mu_of = [&](int pair) { return mo.contact_pairs[std::size_t(pair)].mu; };
    // the points that stop (plastic, or e = 0) with friction stop along the surface too:
    // two tangential rows; where that impulse leaves the cone they slip (Tp, dir)
    MatX T = MatX::Zero(2 * k, nv);
    std::vector<int> sticks(std::size_t(k), 0), slips_free(std::size_t(k), 0);
    std::vector<Matrix3x> Tp(static_cast<std::size_t>(k));
    std::vector<Vec3> dir(std::size_t(k), Vec3::Zero());
    for (Eigen::Index i = 0; i < k; ++i)
    {
      const ContactPoint & p = in[std::size_t(i)];
      const ContactPairC & c = mo.contact_pairs[std::size_t(p.pair)];
      if (c.mu <= 0.0 || !(plastic[std::size_t(p.pair)] || c.restitution == 0.0))
        continue;
      const Matrix3x Jp = pair_point_rows(mo, d, p.pair, friction_point(p));
      Vec3 t1, t2;
      tangent_basis(p.n, t1, t2);
      T.row(2 * i) = t1.transpose() * Jp;
      T.row(2 * i + 1) = t2.transpose() * Jp;
      sticks[std::size_t(i)] = 1;
      if (!c.slip_impulse)
        continue;
      Tp[std::size_t(i)] = tangential_rows(Jp, p.n);
      // the slip it would go on with: the guess of its direction where it slips through
      if (const Vec3 u = Tp[std::size_t(i)] * v; u.norm() > kSpeed)
        dir[std::size_t(i)] = u.normalized();
    }
    // the held points that slip: Coulomb's impulse on their normal rows (along their slip)
    std::vector<Matrix3x> held_T(held.size());
    std::vector<Vec3> held_d(held.size(), Vec3::Zero()), held_n(held.size(), Vec3::UnitZ());
    for (std::size_t c = 0; c < held.size(); ++c)
      if (const auto [i, j] = held[c];
          slipping(mo, i, j) && mo.contact_pairs[std::size_t(i - L)].slip_impulse)
      {
        held_T[c] = slip_rows(mo, d, j, held_n[c]);
        const Vec3 u = held_T[c] * v;
        held_d[c] = u.norm() > kSpeed ? Vec3(u.normalized()) : mo.contact_mode[std::size_t(j)].s0;
      }
    VecX vp = v;
    const double energy = v.dot(M * v);
    // an impulse-level active set: a held point whose impulse would pull lets go, a
    // point whose sticking impulse leaves the cone slips through; one whose friction
    // would turn its slip back (or a set whose friction would add energy) slips
    // frictionless
    for (std::size_t it = 0; it <= 2 * (held.size() + std::size_t(k)) + 1; ++it)
    {
      std::vector<Eigen::Index> rows, trows;
      for (Eigen::Index r = 0; r < m; ++r)
        if (owner[std::size_t(r)] < 0 || keep[std::size_t(owner[std::size_t(r)])])
          rows.push_back(r);
      for (Eigen::Index i = 0; i < k; ++i)
        if (sticks[std::size_t(i)])
          trows.insert(trows.end(), {2 * i, 2 * i + 1});
      const Eigen::Index a = Eigen::Index(rows.size()), b = Eigen::Index(trows.size());
      MatX G(a + k + b, nv);
      G.topRows(a) = d.A(rows, Eigen::all);
      G.middleRows(a, k) = R;
      G.bottomRows(b) = T(trows, Eigen::all);
      VecX bt = VecX::Zero(a + k + b);
      bt.segment(a, k) = target;
      // the slipping points (index in `in`, or -1 - its held entry)
      std::vector<SlipImpulse> slips;
      std::vector<int> slip_of;
      for (Eigen::Index i = 0; i < k; ++i)
        if (Tp[std::size_t(i)].cols() && !sticks[std::size_t(i)] && !slips_free[std::size_t(i)])
        {
          slips.push_back(SlipImpulse{a + i, Tp[std::size_t(i)], in[std::size_t(i)].n,
                                      mu_of(in[std::size_t(i)].pair), dir[std::size_t(i)]});
          slip_of.push_back(int(i));
        }
      for (Eigen::Index q = 0; q < a; ++q)
        if (const int c = owner[std::size_t(rows[std::size_t(q)])];
            c >= 0 && rows[std::size_t(q)] == mo.loop.m + c && held_T[std::size_t(c)].cols())
        {
          slips.push_back(SlipImpulse{q, held_T[std::size_t(c)], held_n[std::size_t(c)],
                                      mu_of(held[std::size_t(c)].first - L), held_d[std::size_t(c)]});
          slip_of.push_back(-1 - c);
        }
      MatX H = G;
      VecX iota;
      bool changed = false;
      if (slips.empty())
      {
        vp = metric_impact_rows(M, G.topRows(a), v, G.bottomRows(k + b), bt.tail(k + b),
                                mo.opt.rank_tol);
        // the impulses: M (v+ - v) = -G^T iota, least-norm (redundant rows)
        iota = G.transpose().completeOrthogonalDecomposition().solve(-(M * (vp - v)));
      }
      else
      {
        vp = slip_impact(M, G, v, bt, slips, mo.opt.rank_tol, H, iota);
        const bool gains = vp.dot(M * vp) > energy * (1.0 + 1e-12) + 1e-15;
        for (std::size_t e = 0; e < slips.size(); ++e)
        {
          const int i = slip_of[e];
          if (i >= 0)
            dir[std::size_t(i)] = slips[e].d;
          if (!slips[e].lost && !gains)
            continue;
          if (i >= 0)
            slips_free[std::size_t(i)] = 1;
          else
            held_T[std::size_t(-1 - i)] = Matrix3x();
          changed = true;
        }
      }
      if (changed)
        continue;
      // where the least-norm impulses pull at a held point or leave a sticking point's
      // cone, the nearest impulses of the same velocity change that push inside the cones
      // (pushing_forces.hpp), if any
      {
        std::vector<PushRow> push;
        std::vector<ConeRows> cones;
        for (Eigen::Index q = 0; q < a; ++q)
          if (const int c = owner[std::size_t(rows[std::size_t(q)])];
              c >= 0 && rows[std::size_t(q)] == mo.loop.m + c)
            push.push_back(PushRow{int(q), -1.0});
        for (Eigen::Index i = 0, j = 0; i < k; ++i)
        {
          push.push_back(PushRow{int(a + i), -1.0});
          if (sticks[std::size_t(i)])
            cones.push_back(ConeRows{int(a + i), int(a + k + 2 * j++), mu_of(in[std::size_t(i)].pair)});
        }
        VecX pushing;
        if (pushing_forces(H, iota, push, cones, mo.opt.rank_tol, kPull, pushing))
          iota = pushing;
      }
      for (Eigen::Index q = 0; q < a; ++q)
      {
        const int c = owner[std::size_t(rows[std::size_t(q)])];
        if (c >= 0 && rows[std::size_t(q)] == mo.loop.m + c && iota(q) > kPull
            && may_go[std::size_t(c)])
        {
          keep[std::size_t(c)] = 0;
          changed = true;
        }
      }
      // the cone is read once no held point pulls (an impulse of the over-held set is
      // not the impact's); the points that leave it slip: those with Coulomb's impulse
      // all at once (a symmetric landing stays symmetric), along their slip before the
      // impact, or against their impulse where they had none; a frictionless one ends
      // the reading (the others read again without its impulse)
      bool stop = changed;
      for (Eigen::Index i = 0, j = 0; i < k && !stop; ++i)
      {
        if (!sticks[std::size_t(i)])
          continue;
        const double it_n = iota(a + i);
        const VecX it_t = iota.segment(a + k + 2 * j, 2);
        ++j;
        if (it_t.norm() > mu_of(in[std::size_t(i)].pair) * std::max(0.0, -it_n) + kPull)
        {
          Vec3 t1, t2;
          tangent_basis(in[std::size_t(i)].n, t1, t2);
          if (dir[std::size_t(i)].isZero())
            dir[std::size_t(i)] = (it_t(0) * t1 + it_t(1) * t2).normalized();
          sticks[std::size_t(i)] = 0;
          changed = true;
          stop = Tp[std::size_t(i)].cols() == 0;
        }
      }
      if (!changed)
        break;
    }
    return vp;
  }
} // namespace pfaff
