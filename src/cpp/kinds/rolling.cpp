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
    RollingContact & geometry(
      std::vector<RollingContact> & contacts, const std::vector<FrameKin> & frames,
      const Spec & s, unsigned long stamp, const VecX & v, bool with_drift)
    {
      RollingContact & c = contacts[size_t(s.contact)];
      if (c.stamp != stamp)
      {
        const FrameKin & fo = frames[size_t(c.s_obj)];
        const FrameKin & ft = frames[size_t(c.s_tip)];
        c.geometry(fo.p, fo.R, fo.J, fo.drift, ft.p, ft.J, ft.drift, v, with_drift);
        c.stamp = stamp;
      }
      return c;
    }

    // +90 degrees: n' = omega S n + kappa s' t, t' = omega S t - kappa s' n
    Eigen::Vector2d S(const Eigen::Vector2d & x) { return Eigen::Vector2d(-x(1), x(0)); }
  } // namespace

  void check_RollContact(const Model &, const Data & d, const Spec & s, const Check & c)
  {
    c.index(s.contact, long(d.contacts.size()), "spec.contact", "an index of add_contact");
  }

  void check_RollTangent(const Model & mo, const Data & d, const Spec & s, const Check & c)
  {
    check_RollContact(mo, d, s, c);
  }

  void RollContact(Data & d, const Spec & s, const RowOut & out)
  {
    const RollingContact & c =
      geometry(d.contacts, d.frames, s, d.st_.rows, *d.vref_, out.with_drift);
    d.phi(out.hrow) = c.d - c.r;
    d.A.row(out.row).noalias() = c.n.transpose() * c.JQ;
    d.drift(out.row) = out.with_drift
                           ? (c.omega * S(c.n) + c.kappa * c.sdot * c.t).dot(c.w) + c.n.dot(c.wdot)
                           : 0.0;
  }

  void RollTangent(Data & d, const Spec & s, const RowOut & out)
  {
    const RollingContact & c =
      geometry(d.contacts, d.frames, s, d.st_.rows, *d.vref_, out.with_drift);
    d.A.row(out.row).noalias() = c.t.transpose() * c.JQ;
    d.A.row(out.row) += c.r * c.Jrot;
    d.drift(out.row) = out.with_drift ? (c.omega * S(c.t) - c.kappa * c.sdot * c.n).dot(c.w)
                                            + c.t.dot(c.wdot) + c.r * c.alpha
                                        : 0.0;
  }
} // namespace pfaff::kinds
