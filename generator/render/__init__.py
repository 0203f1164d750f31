"""Rendering: templates to objects, the plan per target, and the atomic writer. Stages 3 and 5."""
