// Rolling of a fingertip disc on a planar contour (pfaff.manipulation.rolling,
// pfaff.manipulation.contours; Arimoto & Yoshida 2010 Sec. 6, eq. 67 and 71).
//
// A Contour gives gamma(u) and its first two derivatives (Contour.scalar) and the foot
// point of a point c (Contour.foot_point: (c - gamma) . gamma' = 0 by Newton's method,
// warm-started). A RollingContact is one fingertip (frame slot s_tip, radius r) on the
// contour of a planar body (slot s_obj), a Model's; its ContactGeometry at the last
// state is a Data's: the contact row Q = d - r (holonomic) and the rolling row
// t . w + r (omega - phi') = 0 (Pfaffian) read it (src/cpp/kinds/rolling.cpp,
// Kind::RollContact / Kind::RollTangent).
#pragma once

#include <vector>

#include <Eigen/Core>

namespace pfaff
{
  enum class ContourKind
  {
    Circle,       // gamma = a (cos u, sin u)
    Ellipse,      // gamma = (a cos u, b sin u)
    Superellipse, // gamma = rho(u) (cos u, sin u), (X/a)^p + (Y/b)^p = 1
    Spline        // periodic cubic pieces on the breakpoints bx (8 coefficients each)
  };

  /// A closed contour in the body frame (the built-in classes of contours.py).
  struct Contour
  {
    ContourKind kind = ContourKind::Ellipse;
    double a = 1.0, b = 1.0;
    int p = 2;
    double U = 6.283185307179586; // period of u
    std::vector<double> bx;       // Spline: breakpoints (segments + 1)
    std::vector<double> coef;     // Spline: (c3x, c3y, c2x, c2y, c1x, c1y, c0x, c0y) each
    /// std::invalid_argument naming `where` and what is wrong (sizes, finite numbers)
    void check(const char * where) const;
    /// g = (x, y, x', y', x'', y'') at u (Contour.scalar)
    void scalar(double u, double g[6]) const;
    /// the foot point of (cx, cy) (Contour.foot_point): Newton from u0 when warm, else
    /// (or when that leaves the basin) from the nearest of 256 samples; false when it
    /// fails from both
    bool foot_point(double cx, double cy, bool warm, double u0, double & u,
                    double tol = 1e-13) const;

  private:
    bool newton_foot(double cx, double cy, double & u, double tol) const;
  };

  /// One fingertip on one contour (System::add_contact; a Model's).
  struct RollingContact
  {
    Contour contour;
    int s_obj = -1, s_tip = -1; // frame slots of the object and the fingertip centre
    double r = 0.0;             // fingertip radius
  };

  /// The geometry of a RollingContact at the last state (ContactGeometry; a Data's).
  struct ContactGeometry
  {
    ContactGeometry() = default;
    /// no geometry yet, on nv velocity coordinates
    explicit ContactGeometry(int nv)
    {
      JQ.setZero(2, nv);
      Jrot.setZero(nv);
    }
    // warm start of the foot-point solver (the last contact parameter)
    double u = 0.0;
    bool warm = false;
    unsigned long stamp = 0; // the System::evaluate pass the geometry belongs to (Stamps::rows)
    // geometry: world tangent, outward normal, c - p, relative velocity w and the
    // velocity part of w', curvature, distance, object rate, alpha = the velocity part
    // of theta'' - phi'', s'
    Eigen::Vector2d t, n, e, w, wdot;
    double kappa = 0.0, d = 0.0, omega = 0.0, alpha = 0.0, sdot = 0.0;
    Eigen::Matrix<double, 2, Eigen::Dynamic> JQ; // J_c - J_o(c), linear rows
    Eigen::RowVectorXd Jrot;                      // J_theta - J_phi
    /// the geometry of contact c from its two frames (p, R, J with rows (linear,
    /// angular), drift); v and the drifts only with_drift. std::runtime_error when the
    /// foot point fails.
    void geometry(const RollingContact & c, const Eigen::Vector3d & po, const Eigen::Matrix3d & Ro,
                  const Eigen::Matrix<double, 6, Eigen::Dynamic> & Jo,
                  const Eigen::Matrix<double, 6, 1> & ao, const Eigen::Vector3d & pt,
                  const Eigen::Matrix<double, 6, Eigen::Dynamic> & Jt,
                  const Eigen::Matrix<double, 6, 1> & at, const Eigen::VectorXd & v,
                  bool with_drift);
  };
} // namespace pfaff
