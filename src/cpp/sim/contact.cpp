// The contact pairs of a System and their narrow phase (contact.hpp): MuJoCo's collision
// function of the pair's geom types, fed the geoms' world poses from Pinocchio's frames;
// each point round (its core a radius from the surface) or a vertex, by its geom and
// normal.
#include "sim/contact.hpp"
#include "model/check.hpp"
#include "model/core.hpp"
#include "model/core_detail.hpp"
#include "model/rim.hpp"
#include "sim/system.hpp"

#include <cmath>
#include <string>

#include <mujoco/mujoco.h>

#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/kinematics.hpp"

namespace pfaff
{
  namespace
  {
    // a geom's rotation from its quaternion (MuJoCo's w, x, y, z)
    Mat3 rotation(const mjtNum * q)
    {
      return Eigen::Quaterniond(q[0], q[1], q[2], q[3]).normalized().toRotationMatrix();
    }

    // the pose into mjData's geom_xpos, geom_xmat (row major)
    void put(mjData * d, int g, const Vec3 & p, const Mat3 & R)
    {
      for (int i = 0; i < 3; ++i)
      {
        d->geom_xpos[3 * g + i] = p(i);
        for (int j = 0; j < 3; ++j)
          d->geom_xmat[9 * g + 3 * i + j] = R(i, j);
      }
    }
  } // namespace

  Narrow::Narrow(const Model & mo)
  {
    if (!mo.contact_world.m)
      return;
    pd_ = std::make_unique<pinocchio::Data>(mo.model);
    d_ = mj_makeData(mo.contact_world.m.get());
  }

  Narrow::~Narrow()
  {
    if (d_)
      mj_deleteData(d_);
  }

  const std::vector<ContactPoint> &
  Narrow::points(const Model & mo, const VecX & q, double margin)
  {
    out_.clear();
    if (!d_)
      return out_;
    const mjModel * m = mo.contact_world.m.get();
    kinematics(mo, q);
    mjPreContact con[mjMAXCONPAIR];
    for (std::size_t k = 0; k < mo.contact_pairs.size(); ++k)
    {
      const ContactPairC & c = mo.contact_pairs[k];
      const pinocchio::SE3 & oMf = pinocchio::updateFramePlacement(
        mo.model, *pd_, mo.frame_slots[std::size_t(c.slot)].id);
      const Mat3 R = oMf.rotation() * c.g_R;
      const Vec3 centre = oMf.translation() + oMf.rotation() * c.g_pos;
      const pinocchio::SE3 * oM2 = nullptr; // the still geom's body frame, if it moves
      if (c.slot2 >= 0)
        oM2 = &pinocchio::updateFramePlacement(
          mo.model, *pd_, mo.frame_slots[std::size_t(c.slot2)].id);
      const Vec3 centre2 = oM2 ? Vec3(oM2->translation() + oM2->rotation() * c.s_pos)
                               : Vec3(Eigen::Map<const Vec3>(m->geom_pos + 3 * c.still));
      // MuJoCo's own bounding-sphere test (mj_collideGeoms): geoms whose spheres are
      // farther apart than their radii and the margin cannot touch (a plane's radius is
      // 0: unbounded)
      const double r1 = m->geom_rbound[c.moving], r2 = m->geom_rbound[c.still];
      if (r1 > 0.0 && r2 > 0.0 && (centre - centre2).norm() > r1 + r2 + margin)
        continue;
      put(d_, c.moving, centre, R);
      put(d_, c.still, centre2,
          oM2 ? Mat3(oM2->rotation() * c.s_R) : rotation(m->geom_quat + 4 * c.still));
      // MuJoCo's functions take the lower geom type first (mj_collideGeoms' order); the
      // normal points from the first geom to the second
      const bool still_first = m->geom_type[c.still] <= m->geom_type[c.moving];
      const int ga = still_first ? c.still : c.moving, gb = still_first ? c.moving : c.still;
      const mjfCollision f = mjCOLLISIONFUNC[m->geom_type[ga]][m->geom_type[gb]];
      const int n = f ? f(m, d_, con, ga, gb, margin) : 0;
      const int type = m->geom_type[c.moving];
      const double size = m->geom_size[3 * c.moving];
      const Vec3 axis = R.col(2);
      for (int i = 0; i < n; ++i)
      {
        ContactPoint p;
        p.pair = int(k);
        p.dist = con[i].dist;
        p.pos = Eigen::Map<const Vec3>(con[i].pos);
        p.n = Eigen::Map<const Vec3>(con[i].normal);
        if (!still_first)
          p.n = -p.n;
        // round where the surface is: a sphere, a capsule, a cylinder lying on its side
        // on a still geom (its normal across its axis)
        const bool cylinder = type == mjGEOM_CYLINDER && c.slot2 < 0; // on a still geom
        const double sa = p.n.dot(axis), rho2 = 1.0 - sa * sa;
        const bool lying = cylinder && std::abs(sa) < kCylinderLying;
        p.radius = type == mjGEOM_SPHERE || type == mjGEOM_CAPSULE || lying ? size : 0.0;
        // the moving surface's point, then its core (a sphere's centre, a capsule's or a
        // cylinder's axis point)
        p.core = p.pos + p.n * (0.5 * p.dist + p.radius);
        if (cylinder && rho2 < kRimFlat * kRimFlat) // on its cap
          p.face = 1.5 * size * std::sqrt(std::max(0.0, rho2)) + 1e-10;
        if (lying) // on the axis itself (its face's centre: the same body point each step)
          p.core = centre + axis * axis.dot(p.core - centre);
        else if (cylinder && rho2 > kRimFlat * kRimFlat)
        { // a tilted cylinder's point at a cap rim's lowest point: that rim's
          const Vec3 l = rim_lever(axis, p.n, size);
          for (const double side : {-1.0, 1.0})
          {
            const Vec3 cap = centre + side * m->geom_size[3 * c.moving + 1] * axis;
            if ((cap + l - p.core).norm() < kRimPoint)
            {
              p.core = cap;
              p.radius = size;
              p.axis = axis;
              break;
            }
          }
        }
        p.local = oMf.rotation().transpose() * (p.core - oMf.translation());
        out_.push_back(p);
      }
    }
    return out_;
  }

  void Narrow::kinematics(const Model & mo, const VecX & q)
  {
    if (fk_q_.size() == q.size() && fk_q_ == q)
      return;
    pinocchio::forwardKinematics(mo.model, *pd_, q);
    fk_q_ = q;
  }

  pinocchio::SE3 Narrow::frame_placement(const Model & mo, const VecX & q, int slot)
  {
    kinematics(mo, q);
    return pinocchio::updateFramePlacement(mo.model, *pd_, mo.frame_slots[std::size_t(slot)].id);
  }

  void set_contact_world(System & s, const std::string & mjb, const std::string & label)
  {
    const Check c{"System.set_contact_world"};
    mjModel * m = mjb.empty() ? nullptr : mj_loadModelBuffer(mjb.data(), mjtSize(mjb.size()));
    if (!m)
      c.fail("MuJoCo cannot load the compiled model of " + label + " (" +
             std::to_string(mjb.size()) + " bytes): expected mj_saveModel's buffer");
    ContactWorld w{std::shared_ptr<const mjModel>(
                     m, [](const mjModel * x) { mj_deleteModel(const_cast<mjModel *>(x)); }),
                   label};
    s.change_model([&](ModelBuilder & b) { b.set_contact_world(std::move(w)); }, false);
  }

  void add_contact_pair(
    System & s, int g1, int g2, const std::string & body_frame, double restitution,
    double rest_speed, double mu, const std::string & body_frame2, bool slip_impulse)
  {
    const Check c{"System.add_contact_pair"};
    const mjModel * m = s.mo().contact_world.m.get();
    if (!m)
      c.fail("no model file loaded: call set_contact_world(mjb, label) first");
    if (s.mo().plant)
      c.fail("a mechanism given in closed form (a plant) has no collision geoms");
    c.index(g1, m->ngeom, "g1", "a geom id of the compiled model (ngeom)");
    c.index(g2, m->ngeom, "g2", "a geom id of the compiled model (ngeom)");
    const bool w1 = m->geom_bodyid[g1] == 0, w2 = m->geom_bodyid[g2] == 0;
    if (w1 && w2)
      c.fail("geoms " + std::to_string(g1) + " and " + std::to_string(g2)
             + " are both fixed in the world (a pair needs a geom on a moving body)");
    const bool two = !w1 && !w2;
    if (two && body_frame2.empty())
      c.fail("geoms " + std::to_string(g1) + " and " + std::to_string(g2)
             + " are both on moving bodies: give body_frame2, the body frame of g2 (whose "
               "plane holds g1's point)");
    if (two && m->geom_bodyid[g1] == m->geom_bodyid[g2])
      c.fail("geoms " + std::to_string(g1) + " and " + std::to_string(g2)
             + " are on the same body (a pair joins two bodies)");
    if (!(restitution >= 0.0 && restitution <= 1.0))
      c.fail("restitution = " + std::to_string(restitution) + ", valid: [0, 1]");
    c.number(rest_speed, "rest_speed", 0.0, false);
    c.number(mu, "mu", 0.0, false);
    ContactPairC p;
    p.mu = mu;
    p.still = w1 ? g1 : g2; // two moving: g1's point on g2's plane
    p.moving = w1 ? g2 : g1;
    p.slot = s.add_frame(body_frame);
    p.g_pos = Eigen::Map<const Vec3>(m->geom_pos + 3 * p.moving);
    p.g_R = rotation(m->geom_quat + 4 * p.moving);
    if (two)
    {
      p.slot2 = s.add_frame(body_frame2);
      if (p.slot2 == p.slot)
        c.fail("body_frame2 = '" + body_frame2 + "' is body_frame: give g2's body frame");
      p.s_pos = Eigen::Map<const Vec3>(m->geom_pos + 3 * p.still);
      p.s_R = rotation(m->geom_quat + 4 * p.still);
    }
    p.restitution = restitution;
    p.rest_speed = rest_speed;
    p.slip_impulse = slip_impulse;
    s.change_model([&](ModelBuilder & b) { b.add_contact_pair(p); });
  }

  Spec contact_spec(const Model & mo, const Data & d, const ContactPoint & p)
  {
    const ContactPairC & c = mo.contact_pairs[std::size_t(p.pair)];
    Spec sp;
    sp.kind = Kind::PointOnPlane;
    sp.dim = 1;
    sp.s1 = c.slot;
    sp.has_p1 = true;
    sp.p1 = p.local;
    sp.n = p.n;
    sp.d = p.n.dot(p.core) - p.dist; // Phi = n . core - d: the distance now
    sp.contact = -1;
    if (p.axis.squaredNorm() > 0.0) // a rim on the still geom: its lowest point on the plane
    {
      sp.kind = Kind::RimOnPlane;
      sp.p2 = c.g_R.col(2); // the cylinder's axis in its body frame
      sp.target = p.n;
      sp.rho = p.radius;
      sp.d = p.n.dot(p.core + contact_lever(p.radius, p.axis, p.n)) - p.dist;
      return sp;
    }
    if (c.slot2 >= 0) // the plane through the still surface's point, fixed in body 2
    {
      const FrameKin & f2 = d.frames[std::size_t(c.slot2)];
      sp.kind = Kind::PointOnBodyPlane;
      sp.s2 = c.slot2;
      sp.n = f2.R.transpose() * p.n;
      sp.has_p2 = true;
      sp.p2 = f2.R.transpose() * (p.core - p.dist * p.n - f2.p);
      sp.d = 0.0;
    }
    return sp;
  }

  Matrix3x pair_point_rows(const Model & mo, const Data & d, int k, const Vec3 & p)
  {
    const ContactPairC & c = mo.contact_pairs[std::size_t(k)];
    const FrameKin & f = d.frames[std::size_t(c.slot)];
    Matrix3x J = detail::point_rows(f, p - f.p);
    if (c.slot2 >= 0)
    {
      const FrameKin & f2 = d.frames[std::size_t(c.slot2)];
      J -= detail::point_rows(f2, p - f2.p);
    }
    return J;
  }

  Vec3 spec_world(const Data & d, const Spec & sp, const Vec3 & x)
  {
    return sp.kind == Kind::PointOnBodyPlane ? Vec3(d.frames[std::size_t(sp.s2)].R * x) : x;
  }

  Vec3 spec_contact(const Model & mo, const Data & d, int j, Vec3 & n)
  {
    const Spec & sp = mo.contact_specs[std::size_t(j)];
    const FrameKin & f = d.frames[std::size_t(sp.s1)];
    if (sp.kind == Kind::RimOnPlane)
    {
      n = sp.target;
      return f.p + f.R * sp.p1 + rim_lever(f.R * sp.p2, n, sp.rho);
    }
    n = spec_world(d, sp, sp.n);
    return f.p + f.R * sp.p1 - mo.contact_spec_radius[std::size_t(j)] * n;
  }

  Vec3 pair_anchor(const Model & mo, const Data & d, int k, const Vec3 & p)
  {
    const int slot2 = mo.contact_pairs[std::size_t(k)].slot2;
    if (slot2 < 0)
      return p;
    const FrameKin & f2 = d.frames[std::size_t(slot2)];
    return f2.R.transpose() * (p - f2.p);
  }

  MatX contact_rows(const Model & mo, const Data & d, const std::vector<ContactPoint> & pts)
  {
    MatX G = MatX::Zero(long(pts.size()), mo.nv());
    for (std::size_t i = 0; i < pts.size(); ++i)
    { // at the contact (a rim's lowest point; a round point's core gives the same row)
      const ContactPoint & p = pts[i];
      const Vec3 x = p.core + contact_lever(p.radius, p.axis, p.n);
      G.row(long(i)) = p.n.transpose() * pair_point_rows(mo, d, p.pair, x);
    }
    return G;
  }

  bool same_point(const Model & mo, int spec, const ContactPoint & p, bool follow)
  {
    const Spec & sp = mo.contact_specs[std::size_t(spec)];
    const bool round = follow && p.radius > 0.0 && mo.contact_spec_radius[std::size_t(spec)] > 0.0;
    return mo.contact_spec_pair[std::size_t(spec)] == p.pair
           && (sp.p1 - p.local).norm() < (round ? kFollow : 1e-7);
  }
} // namespace pfaff
