"""Reusable assemblies (plants, IK, monitors) that scenarios and users build on (design.md Sec. 1).

No parsing, metrics or plots here: those belong to the scenarios and the report.
"""
