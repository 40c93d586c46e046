"""Rigid contact: unilateral constraints, Coulomb friction and impacts, and their
closed forms."""
