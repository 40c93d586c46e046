"""Grasps, object-motion constraints, planar contours and rolling contact.

Modules: ``grasp`` and ``objects`` (Yoshikawa & Zheng), ``contours`` and
``rolling`` (Arimoto, 2D grasping under rolling contact). Import from them.
"""
