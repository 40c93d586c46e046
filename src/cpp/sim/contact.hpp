// Unilateral contact between a model file's collision geoms, as the joint limits'
// events run it (limits.hpp): a contact pair is a unilateral constraint whose gap is the
// narrow phase's signed distance, computed by MuJoCo's own collision functions
// (mjCOLLISIONFUNC of the libmujoco the `mujoco` wheel ships) on the geoms' poses that
// Pinocchio's kinematics give. A closed (held) contact point is a PointOnPlane row: the
// point of the moving geom that the contact keeps on the static geom's surface (a
// sphere's or capsule's core point at its radius, a cylinder's axis point where it lies
// on its side, a box's vertex; a tilted cylinder's rim, its lowest point: RimOnPlane,
// model/rim.hpp) on the plane through
// the contact with its normal; its multiplier is the normal force. Where both geoms are on
// moving bodies the plane is fixed in the still-side geom's body (a PointOnBodyPlane row,
// n^T (J1(p) - J2(p)): the force acts on both, equal and opposite). Their friction is
// friction.hpp's.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/core_types.hpp"
#include "sim/limits.hpp"

struct mjData_;

namespace pfaff
{
  class System;
  struct Model;
  struct Data;

  /// One point of a pair's narrow phase at a configuration
  struct ContactPoint
  {
    int pair = -1;
    double dist = 0.0;         // signed distance [m] (negative: penetration)
    Vec3 pos = Vec3::Zero();   // MuJoCo's contact position (between the surfaces)
    Vec3 n = Vec3::UnitZ();    // the normal (world), from the still geom into the moving one
    Vec3 core = Vec3::Zero();  // the point the row holds, in the world
    Vec3 local = Vec3::Zero(); // the same in the moving body's frame
    /// core's distance from the moving surface along -n: a round point's (a sphere's
    /// centre, a capsule's axis point, a cylinder's axis point where it lies on its side
    /// on a still geom), whose material point at the contact rolls or slips; 0: a vertex
    /// (a box's, a mesh's), held fixed in its body; a rim's radius (below)
    double radius = 0.0;
    /// a cylinder's rim point on a still geom: the cylinder's unit axis (world; zero: not
    /// a rim), core the centre of the rim (a cap's), the point its lowest, core + l
    /// (model/rim.hpp), which moves over the body as the rim rolls
    Vec3 axis = Vec3::Zero();
    /// a cylinder's cap within kRimFlat of flat on a still geom: the height [m] within
    /// which its points land with its lowest as the face (the narrow phase's points at
    /// 120 degrees from the lowest lie 1.5 r rho above it), else 0
    double face = 0.0;
  };

  /// a cylinder's point on a still geom within this of a cap rim's lowest point [m] is
  /// that rim's (the narrow phase gives it to round-off)
  constexpr double kRimPoint = 1e-7;
  /// a rim whose plane is within this of the still plane's, rho = sqrt(1 - (n . a)^2),
  /// lies on its cap: its lowest point is not held as a rim's (the lowest point races
  /// round the rim as rho goes to 0), its points are vertices, and the cap lands as a
  /// face (ContactPoint::face); a held rim coming down to it lands so (rim_turn)
  constexpr double kRimFlat = 1e-3;

  /// a cylinder whose contact normal n has |n . axis| below this lies on its side: its
  /// point is round (its axis point held a radius from the still geom; a still geom's
  /// pair only: on a moving body its rim point holds)
  constexpr double kCylinderLying = 1e-6;

  /// A round point's core within this of a held round point's core of its pair (in its
  /// body's frame) [m] is the held point: where two round geoms turn on each other their
  /// nearest points slide along their axes, while a held point stays fixed in its body (its
  /// row holds it on the other's tangent plane). Beyond it, the point taken up supersedes
  /// the held one (contact_impact, which takes up every touching point not the held one to
  /// 1e-7 m: the one located, and those that slid less)
  constexpr double kFollow = 1e-3;

  /// Points of a pair beyond this many are not held (the record pads this many rows per
  /// pair)
  constexpr int kContactRows = 8;

  /// A narrow-phase workspace (one per run: an mjData and a Pinocchio data of its own)
  class Narrow
  {
  public:
    explicit Narrow(const Model & mo);
    ~Narrow();
    Narrow(const Narrow &) = delete;
    Narrow & operator=(const Narrow &) = delete;
    /// every pair's points within `margin` at q (the pair order of Model::contact_pairs)
    const std::vector<ContactPoint> & points(const Model & mo, const VecX & q, double margin);
    /// the placement of frame slot `slot` at q (Pinocchio's kinematics of q)
    pinocchio::SE3 frame_placement(const Model & mo, const VecX & q, int slot);

  private:
    mjData_ * d_ = nullptr;
    std::unique_ptr<pinocchio::Data> pd_; // only with a contact world (limits alone: none)
    VecX fk_q_;                           // the configuration pd_'s kinematics are of
    /// Pinocchio's kinematics of q into pd_, unless they are of q already
    void kinematics(const Model & mo, const VecX & q);
    std::vector<ContactPoint> out_;
  };

  /// the file's compiled model (mj_saveModel's buffer, mjb: no file is read again) into
  /// the System; label names it in messages (std::invalid_argument when MuJoCo cannot
  /// load it)
  void set_contact_world(System & s, const std::string & mjb, const std::string & label);
  /// add the pair (geom ids) to the System; body_frame names the moving geom's body
  /// frame, mu its Coulomb friction (0: frictionless). With both geoms on moving bodies
  /// g1's point is held on g2's plane: body_frame is g1's body frame, body_frame2 g2's
  /// (std::invalid_argument naming what is wrong: no world, a geom id, two geoms of the
  /// world, a missing body_frame2); slip_impulse: a point that slips through an impact
  /// takes Coulomb's impulse (else it slips through frictionless)
  void add_contact_pair(
    System & s, int g1, int g2, const std::string & body_frame, double restitution,
    double rest_speed, double mu = 0.0, const std::string & body_frame2 = "",
    bool slip_impulse = false);
  /// the held row of a point: PointOnPlane on its body frame (PointOnBodyPlane on the
  /// still geom's body), Phi = the distance now
  Spec contact_spec(const Model & mo, const Data & d, const ContactPoint & p);
  /// the rows n^T (J1(p) - J2(p)) of the points (their frame slots' kinematics in d,
  /// evaluated)
  MatX contact_rows(const Model & mo, const Data & d, const std::vector<ContactPoint> & pts);
  /// the rows J1(p) - J2(p) of pair k's point p (world): the moving body's point minus
  /// the still body's material point at p (none on the world)
  Matrix3x pair_point_rows(const Model & mo, const Data & d, int k, const Vec3 & p);
  /// a direction x of contact spec sp (its normal's axes) in the world
  Vec3 spec_world(const Data & d, const Spec & sp, const Vec3 & x);
  /// contact spec j's contact point (world) at the evaluated state d: its held point, a
  /// round point's a radius below its held core along the normal n (world, out)
  Vec3 spec_contact(const Model & mo, const Data & d, int j, Vec3 & n);
  /// the world point p as pair k's anchor (ContactMode: in the still body's frame)
  Vec3 pair_anchor(const Model & mo, const Data & d, int k, const Vec3 & p);
  /// a held contact spec's point is p: same pair, same body point to 1e-7 m (a round
  /// point and a round spec, where follow: their cores to kFollow)
  bool same_point(const Model & mo, int spec, const ContactPoint & p, bool follow = true);

  // contact_events.cpp: the contact pairs' part of a limited run (limits.cpp)
  /// the held entries (L + k, j) of contacts renumbered to the first contact_specs, the
  /// specs no entry names dropped
  void compact_contacts(System & s, Held & held);
  /// the first pair with a point not held past the still geom by more than tol, or -1
  int contact_crossed(const System & s, Narrow & nar, const Held & held, const VecX & q, double tol);
  /// the least distance of pair k's points not held at q, at most margin (none: margin)
  double contact_gap(
    const System & s, Narrow & nar, const Held & held, const VecX & q, int k, double margin);
  /// pair k's gap at q is below -tol, or one of its held rims came down flat over the
  /// step from q0 (rim_turn below 0)
  bool contact_past(
    const System & s, Narrow & nar, const Held & held, const VecX & q0, const VecX & q, int k,
    double tol);
  /// the least over pair k's held rims of r ((a x n) . (a0 x n) / |a0 x n| - kRimFlat / 2)
  /// [m], a its axis at q, a0 at q0 (r (rho - kRimFlat / 2) at q0: its points there are
  /// the cap's, vertices within its face's height): below 0 where the rim
  /// came down to lie on its cap (its face lands) or over it; margin without held rims.
  /// k < 0: every pair's rims, the least one's pair into *pair
  double rim_turn(
    const System & s, Narrow & nar, const Held & held, const VecX & q0, const VecX & q, int k,
    double margin, int * pair = nullptr);
  /// the first root in (0, end] (end <= h, the step's length) of pair k's gap (and its
  /// rims' rim_turn from the step's start) over
  /// steps of length x from the step's start (step(x, q, v); false where it fails: NaN
  /// returned); end itself where the gap has not closed by then
  double contact_root(
    System & s, Narrow & nar, const Held & held, int k,
    const std::function<bool(double, VecX &, VecX &)> & step, double h, double end,
    double event_tol);
  /// the contact forces of the System's evaluated state into rec.contact (rec's
  /// contact_width: 4 per pair): per pair the held points' normal forces summed, then
  /// their friction forces' x, y, z
  void record_contacts(const System & s, const Held & held, LimitRecord & rec);
  /// Newton's impact of every free point touching at the System's state (approaching,
  /// within 1e-10 m) in the metric of M, the rows held and the active rows already
  /// there kept: plastic (the points held) where the guard says so for their pair; one
  /// event per pair into events. A point taken up at the contact of a held point of its
  /// pair of the other kind (round, vertex) supersedes it, without an event
  void contact_impact(
    System & s, Narrow & nar, Held & held, EventGuard & guard, double t,
    std::vector<LimitEventRec> & events);
} // namespace pfaff
