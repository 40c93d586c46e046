// The held set's multipliers at a sample of a limited run (friction.hpp): where held
// contact points are redundant the least-norm multipliers the dynamics solve for may pull
// at a point or put a stuck point's friction outside its cone while other multipliers of
// the same motion push inside every cone (a box's four corners under a load off its
// centre: the least-norm split pulls where the centre of pressure leaves the diamond
// of the corners, rigid contact holds it until the edge). Those are the contact forces;
// only where none exist does a point let go or slip (algorithms/pushing_forces.cpp).
#include "algorithms/pushing_forces.hpp"
#include "model/core.hpp"
#include "sim/friction.hpp"
#include "sim/system.hpp"

#include <algorithm>

namespace pfaff
{
  bool push_held(System & s, const Held & held, double tol)
  {
    const Model & mo = s.mo();
    Data & d = s.d();
    const int L = int(mo.limits.size());
    // with no contact held the least-norm rule stands (a limited run's, as the NumPy
    // reference's)
    if (std::none_of(held.begin(), held.end(), [&](const auto & h) { return h.first >= L; }))
      return false;
    std::vector<PushRow> push;
    std::vector<ConeRows> cones;
    for (std::size_t c = 0; c < held.size(); ++c)
    {
      const auto [i, side] = held[c];
      const int r = mo.loop.m + int(c);
      // a contact and a lower stop push with lambda <= 0, an upper stop with lambda >= 0
      push.push_back(PushRow{r, i < L && side == 1 ? 1.0 : -1.0});
      if (i < L)
        continue;
      if (const int t1 = stick_row(mo, held, c); t1 >= 0)
        cones.push_back(ConeRows{r, t1, mo.contact_pairs[std::size_t(i - L)].mu});
    }
    if (push_violation(d.lam_, push, cones) <= tol)
      return false;
    MatX W;
    if (mo.slip.empty())
      W = d.A;
    else // a slipping point's row carries its friction (algorithms/friction.cpp)
      slip_rows(mo, d, s.state().v_, W);
    VecX lam;
    if (!pushing_forces(W, d.lam_, push, cones, mo.opt.rank_tol, tol, lam))
      return false;
    d.lam_ = lam;
    return true;
  }
} // namespace pfaff
