"""Renderers: they only format a Timeline (HTML viewer, SVG Gantt chart); no analysis here."""
