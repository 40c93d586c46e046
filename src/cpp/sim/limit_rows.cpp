// The rows of a System's joint limits (limits.hpp): a limit added after the loop's
// constraints, and the active row set of a held set (the loop's rows, then a
// LockedJoint row at its bound per held limit).
#include "sim/limits.hpp"
#include "model/check.hpp"
#include "model/core.hpp"

#include <cmath>
#include <string>

namespace pfaff
{
  void add_limit(System & s, const JointLimit & lim)
  {
    const Check c{"System.add_limit"};
    c.index(lim.iq, s.nq(), "iq", "a q index (nq)").index(lim.iv, s.nv(), "iv", "a v index (nv)");
    bool one_dof = false; // a joint with one coordinate at iq and one velocity at iv
    for (pinocchio::JointIndex j = 1; j < s.model.joints.size(); ++j)
      one_dof = one_dof
                || (s.model.idx_qs[j] == lim.iq && s.model.nqs[j] == 1
                    && s.model.idx_vs[j] == lim.iv && s.model.nvs[j] == 1);
    if (!one_dof)
      c.fail("iq = " + std::to_string(lim.iq) + ", iv = " + std::to_string(lim.iv)
             + " are not the coordinates of a one-dof joint (limits are for hinge and slide "
               "joints)");
    if (std::isnan(lim.lower) || std::isnan(lim.upper) || !(lim.lower < lim.upper)
        || lim.lower == HUGE_VAL || lim.upper == -HUGE_VAL)
      c.fail("lower = " + std::to_string(lim.lower) + " must be < upper = "
             + std::to_string(lim.upper) + " (numbers; -inf/inf for a one-sided limit)");
    if (!(lim.restitution >= 0.0 && lim.restitution <= 1.0))
      c.fail("restitution = " + std::to_string(lim.restitution) + ", valid: [0, 1]");
    c.number(lim.rest_speed, "rest_speed", 0.0, false);
    mark_loop_rows(s);
    s.limits.push_back(lim);
  }

  void mark_loop_rows(System & s)
  {
    set_held_rows(s, {}); // the loop's rows alone
    s.loop = LoopRows{int(s.specs.size()), s.m, s.m_h, s.hol_rows.size(), s.pf_rows.size(),
                      s.uni_rows.size()};
  }

  void set_held_rows(System & s, const Held & held)
  {
    if (s.loop.specs < 0)
      return; // no limit: the rows are the loop's
    const LoopRows & l = s.loop;
    s.specs.resize(std::size_t(l.specs));
    s.row_cols.resize(std::size_t(l.m));
    s.hol_rows.resize(l.hol);
    s.pf_rows.resize(l.pf);
    s.uni_rows.resize(l.uni);
    s.m = l.m;
    s.m_h = l.m_h;
    const int L = int(s.limits.size());
    for (const auto & [i, side] : held) // held_rows: a LockedJoint at the bound per limit
    {
      if (i >= L) // a contact point: its PointOnPlane row, in its body frame's window
      {
        const Spec & sp = s.contact_specs[std::size_t(side)];
        const FrameSlot & f = s.frame_slots[std::size_t(sp.s1)];
        s.specs.push_back(sp);
        s.row_cols.emplace_back(f.c0, f.c1 - f.c0);
        s.hol_rows.push_back(s.m);
        ++s.m;
        ++s.m_h;
        continue;
      }
      const JointLimit & lim = s.limits[std::size_t(i)];
      Spec sp;
      sp.kind = Kind::LockedJoint;
      sp.dim = 1;
      sp.iq = lim.iq;
      sp.iv = lim.iv;
      sp.value = side == 0 ? lim.lower : lim.upper;
      s.specs.push_back(sp);
      s.row_cols.emplace_back(0, s.nv());
      s.hol_rows.push_back(s.m);
      ++s.m;
      ++s.m_h;
    }
    s.one_block = s.rows_in_one_block(false);
    s.one_block_h = s.rows_in_one_block(true);
    s.fit(s.mo());
  }
} // namespace pfaff
