// The two rows of a rolling contact (manipulation.rolling): the contact row
// Q = d - r (eq. 67) and the Pfaffian rolling row t . w + r (omega - phi') = 0 (eq. 71),
// from one contact geometry per evaluation pass.
#include <cmath>

#include "../check.hpp"
#include "../core.hpp"

namespace pfaff::kinds
{
  namespace
  {
    // the contact's geometry (ContactGeometry), once per evaluation pass (stamp) for
    // both rows
    const ContactGeometry & geometry(
      const Model & mo, Data & d, const Spec & s, const VecX & v, bool with_drift)
    {
      const RollingContact & c = mo.contacts[size_t(s.contact)];
      ContactGeometry & g = d.contact_geometry[size_t(s.contact)];
      if (g.stamp != d.st_.rows)
      {
        const FrameKin & fo = d.frames[size_t(c.s_obj)];
        const FrameKin & ft = d.frames[size_t(c.s_tip)];
        g.geometry(c, fo.p, fo.R, fo.J, fo.drift, ft.p, ft.J, ft.drift, v, with_drift);
        g.stamp = d.st_.rows;
      }
      return g;
    }

    // +90 degrees: n' = omega S n + kappa s' t, t' = omega S t - kappa s' n
    Eigen::Vector2d S(const Eigen::Vector2d & x) { return Eigen::Vector2d(-x(1), x(0)); }
  } // namespace

  void check_RollContact(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.contact, long(mo.contacts.size()), "spec.contact", "an index of add_contact");
  }

  void check_RollTangent(const Model & mo, const Spec & s, const Check & c)
  {
    check_RollContact(mo, s, c);
  }

  void RollContact(const Model & mo, Data & d, const Spec & s, const RowOut & out)
  {
    const ContactGeometry & c = geometry(mo, d, s, *d.vref_, out.with_drift);
    d.phi(out.hrow) = c.d - mo.contacts[size_t(s.contact)].r;
    d.A.row(out.row).noalias() = c.n.transpose() * c.JQ;
    d.drift(out.row) = out.with_drift
                           ? (c.omega * S(c.n) + c.kappa * c.sdot * c.t).dot(c.w) + c.n.dot(c.wdot)
                           : 0.0;
  }

  void RollTangent(const Model & mo, Data & d, const Spec & s, const RowOut & out)
  {
    const ContactGeometry & c = geometry(mo, d, s, *d.vref_, out.with_drift);
    const double r = mo.contacts[size_t(s.contact)].r;
    d.A.row(out.row).noalias() = c.t.transpose() * c.JQ;
    d.A.row(out.row) += r * c.Jrot;
    d.drift(out.row) = out.with_drift ? (c.omega * S(c.t) - c.kappa * c.sdot * c.n).dot(c.w)
                                            + c.t.dot(c.wdot) + r * c.alpha
                                        : 0.0;
  }
} // namespace pfaff::kinds
